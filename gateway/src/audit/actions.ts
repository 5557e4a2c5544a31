// The audit log's route→action table: each resource route that changes something (or exports responses), by
// its entry's own method and path (the same at both doors, whatever path a door serves it at), says which
// action a 2xx answer records, on which record, and whose record it is. A test holds every route that is not a
// GET to an entry here, so a new endpoint cannot change things unrecorded.
import type { AuditActionName } from "@formsvc/api-records/schemas";

/** A value of the request as the handler took it (`params`, `body`, `query`, the acting `userId`), or of the door's answer (`answer`). */
export type Selector = `${"params" | "body" | "query" | "answer"}.${string}` | "userId";

export interface AuditAction {
  /** `<record>.<verb>`, as the log and its filter name it. */
  action: AuditActionName;
  /** The kind of record acted on, and where its id is. */
  target: string;
  targetId: Selector;
  /**
   * Whose log it goes to: a workspace's (its id), a form's or a webhook's workspace (looked up), or `person`:
   * every workspace of the acting person (their API keys are theirs, not a workspace's).
   */
  scope: { workspace: Selector } | { form: Selector } | { webhook: Selector } | "person";
  /** Look the scope up before the change runs: the change deletes what the lookup reads. */
  lookUpFirst?: true;
  /** The request part whose fields are the changes (the body by default); `none` records none. */
  changes?: "body" | "query" | "none";
  /** Changes every such event carries (an export's format). */
  fixed?: Record<string, string>;
}

const form = (action: AuditActionName, scope: AuditAction["scope"] = { workspace: "answer.workspaceId" }): AuditAction => ({
  action,
  target: "form",
  targetId: "params.id",
  scope,
});
const webhook = (action: AuditActionName, extra: Partial<AuditAction> = {}): AuditAction => ({
  action,
  target: "webhook",
  targetId: "params.id",
  scope: { form: "answer.formId" },
  ...extra,
});
const exported = (format: string): AuditAction => ({
  action: "responses.export",
  target: "form",
  targetId: "params.id",
  scope: { form: "params.id" },
  changes: "query",
  fixed: { format },
});
const inWorkspace = (action: AuditActionName, target: string, targetId: Selector, extra: Partial<AuditAction> = {}): AuditAction => ({
  action,
  target,
  targetId,
  scope: { workspace: "params.id" },
  ...extra,
});

/** Route (`<method> <path>` of its table entry) → what it records. */
export const auditedRoutes: Record<string, AuditAction> = {
  "post /forms": { ...form("form.create"), targetId: "answer.id" },
  "patch /forms/:id": form("form.update"),
  "delete /forms/:id": form("form.trash", { form: "params.id" }),
  "post /forms/:id/restore": form("form.restore"),
  "delete /forms/:id/purge": { ...form("form.purge", { form: "params.id" }), lookUpFirst: true },
  "post /forms/:id/duplicate": { ...form("form.duplicate"), targetId: "answer.id" },
  "post /forms/:id/publish": form("form.publish"),
  "post /forms/:id/close": form("form.close"),
  "post /forms/:id/reopen": form("form.reopen"),
  "get /forms/:id/submissions.csv": exported("csv"),
  "get /forms/:id/submissions.xlsx": exported("xlsx"),
  "post /forms/:id/links": { action: "link.create", target: "form", targetId: "params.id", scope: { form: "params.id" } },
  "post /forms/:id/links/:linkId/revoke": { action: "link.revoke", target: "link", targetId: "params.linkId", scope: { form: "params.id" }, changes: "none" },
  "delete /forms/:id/submissions/:sid": { action: "submission.delete", target: "submission", targetId: "params.sid", scope: { form: "params.id" } },
  "post /webhooks": { ...webhook("webhook.create"), targetId: "answer.id" },
  "patch /webhooks/:id": webhook("webhook.update"),
  "delete /webhooks/:id": webhook("webhook.delete", { scope: { webhook: "params.id" }, lookUpFirst: true }),
  "post /webhooks/:id/rotate-secret": webhook("webhook.rotate_secret", { changes: "none" }),
  "post /webhooks/:id/test": webhook("webhook.test", { scope: { webhook: "params.id" } }),
  "post /webhooks/:id/recover": webhook("webhook.recover", { scope: { webhook: "params.id" } }),
  "post /webhooks/:id/deliveries/:did/retry": webhook("delivery.retry", { target: "delivery", targetId: "params.did", scope: { webhook: "params.id" } }),
  "post /api-keys": { action: "api_key.create", target: "api_key", targetId: "answer.id", scope: "person" },
  "delete /api-keys/:id": { action: "api_key.delete", target: "api_key", targetId: "params.id", scope: "person" },
  "post /workspaces": { action: "workspace.create", target: "workspace", targetId: "answer.id", scope: { workspace: "answer.id" } },
  "patch /workspaces/:id": inWorkspace("workspace.rename", "workspace", "params.id"),
  "put /admin/workspaces/:id/plan": inWorkspace("workspace.set_plan", "workspace", "params.id"),
  "put /workspaces/:id/auto-join-domains": inWorkspace("workspace.set_auto_join_domains", "workspace", "params.id"),
  "post /workspaces/:id/invites": inWorkspace("member.invite", "invitation", "answer.id"),
  "delete /workspaces/:id/invites/:invitationId": inWorkspace("member.revoke_invitation", "invitation", "params.invitationId"),
  "post /invitations/:id/accept": inWorkspace("member.accept", "member", "userId", { scope: { workspace: "answer.workspace.id" } }),
  "patch /workspaces/:id/members/:userId": inWorkspace("member.role_change", "member", "params.userId"),
  "delete /workspaces/:id/members/:userId": inWorkspace("member.remove", "member", "params.userId"),
};

/** Recorded by the app's own sign-in and invitation routes (app-api/sessions.ts), outside the table. */
export const sessionActions = {
  signIn: "session.sign_in",
  signInFailed: "session.sign_in_failed",
  acceptInvitation: "member.accept",
} as const satisfies Record<string, AuditActionName>;

/** What the app's two-factor routes record (app-api/two-factor.ts): a person's second factor, an owner's requirement. */
export const twoFactorActions = {
  enable: "two_factor.enable",
  disable: "two_factor.disable",
  recoveryCodes: "two_factor.recovery_codes",
  requirement: "workspace.require_two_factor",
} as const satisfies Record<string, AuditActionName>;

/** The value `selector` names in what a request had and answered; undefined when absent. */
export function select(selector: Selector, sources: { params?: unknown; body?: unknown; query?: unknown; answer?: unknown; userId?: unknown }): string | undefined {
  const [part, ...path] = selector.split(".");
  let value: unknown = sources[part as keyof typeof sources];
  for (const key of path) value = typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  return typeof value === "string" && value ? value : undefined;
}
