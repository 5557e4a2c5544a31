// The public JSON of each record, from its RPC message: what the REST API, the app's API and the operator
// CLI answer. Each mapper returns its schema's type (schemas.ts), so a shape and its mapper cannot part.
import { defaultWebhookFormat, webhookFormats } from "@formsvc/platform/webhook-headers.ts";
import { toJson } from "@bufbuild/protobuf";
import { timestampDate, ValueSchema, type Timestamp } from "@bufbuild/protobuf/wkt";
import { takesUploads } from "@formsvc/form-document";
import { Plan, Role, type ApiKey, type AuditEvent, type GetInvitationResponse, type Invitation, type Member, type User, type Workspace } from "@formsvc/proto/identity/v1/identity_pb.js";
import { FormStatus, type Form, type Question } from "@formsvc/proto/forms/v1/forms_pb.js";
import type { FormHoldings, Submission } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import type { Webhook } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { DeliveryStatus, type Attempt, type Delivery } from "@formsvc/proto/delivery/v1/delivery_pb.js";
import type * as Json from "./schemas.ts";

const iso = (t: Timestamp | undefined): string | null => (t ? timestampDate(t).toISOString() : null);
/** A timestamp every stored record has (a test's fake may leave it out: null, as `iso`). */
const stamp = (t: Timestamp | undefined) => iso(t) as string;

const planNames: Record<Plan, Json.Workspace["plan"]> = {
  [Plan.UNSPECIFIED]: "free",
  [Plan.FREE]: "free",
  [Plan.PRO]: "pro",
};

export function planFromName(name: string | undefined): Plan | undefined {
  if (name === undefined) return Plan.UNSPECIFIED;
  return ({ free: Plan.FREE, pro: Plan.PRO } as Record<string, Plan>)[name];
}

const formStatusNames: Record<FormStatus, Json.FormStatus> = {
  [FormStatus.UNSPECIFIED]: "draft",
  [FormStatus.DRAFT]: "draft",
  [FormStatus.PUBLISHED]: "published",
  [FormStatus.CLOSED]: "closed",
};

const roleNames: Record<Role, Json.Role | null> = { [Role.UNSPECIFIED]: null, [Role.OWNER]: "owner", [Role.ADMIN]: "admin", [Role.MEMBER]: "member" };

export function userJson(user: User): Json.User {
  return { id: user.id, email: user.email, name: user.name, createdAt: stamp(user.createdAt) };
}

export function sessionUserJson(user: User): Json.SessionUser {
  return { ...userJson(user), emailVerified: user.emailVerified, administrator: user.administrator, twoFactorEnabled: user.twoFactorEnabled, locale: user.locale || null };
}

export function workspaceJson(ws: Workspace): Json.Workspace {
  return {
    id: ws.id,
    name: ws.name,
    plan: planNames[ws.plan],
    personal: ws.personal,
    entitlements: { removeBranding: ws.entitlements?.removeBranding ?? false },
    createdAt: stamp(ws.createdAt),
  };
}

/** A workspace as `userId` sees it in the app: with its owner and their role in it. */
export function appWorkspaceJson(ws: Workspace, userId: string): Json.AppWorkspace {
  return { ...workspaceJson(ws), ownerId: ws.ownerId, owned: ws.ownerId === userId, role: roleNames[ws.role], requireTwoFactor: ws.requireTwoFactor };
}

export function memberJson(m: Member): Json.Member {
  return { user: userJson(m.user!), role: roleNames[m.role], joinedAt: iso(m.joinedAt) };
}

export function invitationJson(invitation: GetInvitationResponse): Json.Invitation {
  return {
    email: invitation.email,
    workspaceName: invitation.workspaceName,
    inviterName: invitation.inviterName,
    role: roleNames[invitation.role],
    accountExists: invitation.accountExists,
  };
}

export function pendingInvitationJson(invitation: Invitation): Json.PendingInvitation {
  return {
    id: invitation.id,
    email: invitation.email,
    workspaceId: invitation.workspaceId,
    workspaceName: invitation.workspaceName,
    role: roleNames[invitation.role],
    inviterName: invitation.inviterName,
    createdAt: stamp(invitation.createdAt),
    expiresAt: stamp(invitation.expiresAt),
  };
}

export function auditEventJson(event: AuditEvent): Json.AuditEvent {
  const actor = event.actor;
  return {
    id: event.id,
    occurredAt: stamp(event.occurredAt),
    workspaceId: event.workspaceId || null,
    actor: { type: (actor?.type || "system") as Json.AuditEvent["actor"]["type"], userId: actor?.userId || null, apiKeyId: actor?.apiKeyId || null },
    address: event.address || null,
    action: event.action as Json.AuditActionName,
    target: { type: event.targetType, id: event.targetId || null },
    changes: event.changes.map((c) => (c.value === undefined ? { field: c.field } : { field: c.field, value: c.value })),
    requestId: event.requestId || null,
  };
}

export function apiKeyJson(key: ApiKey): Json.ApiKey {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    createdAt: stamp(key.createdAt),
    lastUsedAt: iso(key.lastUsedAt),
  };
}

export function formJson(form: Form): Json.Form {
  return {
    id: form.id,
    workspaceId: form.workspaceId,
    name: form.name,
    status: formStatusNames[form.status],
    // Forms stores documents and settings it has checked against their schemas.
    document: (form.document ?? {}) as unknown as Json.Form["document"],
    settings: (form.settings ?? {}) as unknown as Json.Form["settings"],
    version: form.version,
    responseCount: Number(form.responseCount),
    createdAt: stamp(form.createdAt),
    updatedAt: stamp(form.updatedAt),
  };
}

export function appFormJson(form: Form): Json.AppForm {
  return { ...formJson(form), trashedAt: iso(form.trashedAt) };
}

export function formHoldingsJson(h: FormHoldings | undefined): Json.FormHoldings {
  return { responses: Number(h?.responses ?? 0), partials: Number(h?.partials ?? 0), files: Number(h?.files ?? 0), bytes: Number(h?.bytes ?? 0) };
}

export function questionJson(q: Question): Json.Question {
  return { id: q.id, type: q.type as Json.Question["type"], label: q.label, key: q.key };
}

/** An answer as stored (or as its message carries it, the value as JSON); `fileUrl` turns a stored file's id into a signed link. */
export function answerJson(
  a: { questionId: string; type: string; label: string; value: unknown; files?: { id: string; name: string }[] },
  fileUrl: (fileId: string) => string,
): Json.Answer {
  return {
    questionId: a.questionId,
    type: a.type,
    label: a.label,
    value: a.value ?? null,
    ...(takesUploads(a.type) ? { files: (a.files ?? []).map((f) => ({ name: f.name, url: fileUrl(f.id) })) } : {}),
  } as Json.Answer;
}

/** A submission; `fileUrl` turns a stored file's id into a signed link. */
export function submissionJson(sub: Submission, fileUrl: (fileId: string) => string): Json.Submission {
  const answers: Record<string, Json.Answer> = {};
  for (const [key, a] of Object.entries(sub.answers)) answers[key] = answerJson({ ...a, value: a.value ? toJson(ValueSchema, a.value) : null }, fileUrl);
  return {
    id: sub.id,
    formId: sub.formId,
    version: sub.version,
    completed: sub.completed,
    createdAt: stamp(sub.createdAt),
    updatedAt: stamp(sub.updatedAt),
    submittedAt: iso(sub.submittedAt),
    language: sub.language || null,
    ...(sub.verifiedEmail ? { verifiedEmail: sub.verifiedEmail } : {}),
    answers,
  };
}

export function webhookJson(hook: Webhook): Json.Webhook {
  return {
    id: hook.id,
    formId: hook.formId,
    url: hook.url,
    secret: hook.secret || null,
    headers: hook.headers,
    eventTypes: hook.eventTypes,
    subscriber: hook.subscriber || null,
    format: (webhookFormats.find((f) => f === hook.format) ?? defaultWebhookFormat),
    enabled: hook.enabled,
    disabledReason: hook.disabledReason || null,
    disabledAt: iso(hook.disabledAt),
    previousSecretExpiresAt: iso(hook.previousSecretExpiresAt),
    createdAt: stamp(hook.createdAt),
    updatedAt: stamp(hook.updatedAt),
  };
}

const deliveryStatusNames: Record<DeliveryStatus, Json.Delivery["status"]> = {
  [DeliveryStatus.UNSPECIFIED]: "pending",
  [DeliveryStatus.PENDING]: "pending",
  [DeliveryStatus.RETRYING]: "retrying",
  [DeliveryStatus.SUCCEEDED]: "succeeded",
  [DeliveryStatus.FAILED]: "failed",
};

export function deliveryJson(d: Delivery): Json.Delivery {
  return {
    id: d.id,
    webhookId: d.webhookId,
    eventId: d.eventId,
    status: deliveryStatusNames[d.status],
    attempts: d.attempts,
    lastError: d.lastError || null,
    lastStatusCode: d.lastStatusCode || null,
    nextAttemptAt: iso(d.nextAttemptAt),
    submissionId: d.submissionId,
    eventType: d.eventType,
    trigger: d.trigger as Json.Delivery["trigger"],
    createdAt: stamp(d.createdAt),
    updatedAt: stamp(d.updatedAt),
  };
}

export function attemptJson(a: Attempt): Json.Attempt {
  return {
    id: a.id,
    number: a.number,
    statusCode: a.statusCode || null,
    durationMs: a.durationMs,
    error: a.error || null,
    responseBody: a.responseBody,
    manual: a.manual,
    createdAt: stamp(a.createdAt),
  };
}
