import { create, type JsonObject, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Client, type ConnectRouter, type ServiceImpl } from "@connectrpc/connect";
import { LockMode } from "@mikro-orm/core";
import type { z } from "zod";
import {
  describeZodError,
  DocumentError,
  emptyDocument,
  formDocumentSchema,
  formNameSchema,
  formSettingsPatchSchema,
  listQuestions,
  normalizeDocument,
  receiptQuestionOf,
  resolveSettings,
  settingsSecrets,
  describeMissingTranslations,
  describeProblems,
  missingTranslations,
  recallProblems,
  type FormDocument,
  type FormSettingsPatch,
} from "@formsvc/form-document";
import { upstreamFailure } from "@formsvc/platform/upstream-failure.ts";
import { actorOf, asCaller, operator, requireCaller } from "@formsvc/platform/caller.ts";
import { qualifiedTable, type MikroORM } from "@formsvc/platform/database.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { newId } from "@formsvc/platform/ids.ts";
import type { NoticeKeptCache } from "@formsvc/platform/notice-kept-cache.ts";
import { keysetAfter, pageOf, pageRequest } from "@formsvc/platform/paging.ts";
import { FormSchema, FormStatus, FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { Role, type IdentityService, type Workspace } from "@formsvc/proto/identity/v1/identity_pb.js";
import type { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import type { DeliveryService } from "@formsvc/proto/delivery/v1/delivery_pb.js";
import type { WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { FormEntity, FormEventEntity, FormVersionEntity, type Form, type FormStatusName } from "../entities/index.ts";
import { encodeEvent, eventFacts } from "@formsvc/platform/events.ts";
import { currentRequestId } from "@formsvc/platform/request-context.ts";
import { traceparentOf } from "@formsvc/platform/tracing.ts";
import { EventSchema } from "@formsvc/proto/events/v1/events_pb.js";
import { BadRequestSchema } from "@formsvc/proto/google/rpc/error_details_pb.js";
import { storedSettingsAfter } from "./form-secrets.ts";

export interface FormsHandlersDeps {
  orm: MikroORM;
  /**
   * Identity, asked on behalf of the caller whether a workspace is theirs, and (internally, without a
   * caller) for the entitlements of a public form's workspace.
   */
  identity: Client<typeof IdentityService>;
  /**
   * The services holding a form's data, asked (internally) to delete it when the form is purged:
   * webhooks, delivery, submissions (also asked what the form's responses hold).
   */
  submissions?: Client<typeof SubmissionsService>;
  webhooks?: Client<typeof WebhooksService>;
  delivery?: Client<typeof DeliveryService>;
  now?: () => Date;
  /** Where failures of identity are logged (they reach the caller only as UNAVAILABLE). */
  logger?: Logger;
  /** Told after a form event was committed to the outbox (the forwarder looks at once). */
  onEvent?: () => void;
  /**
   * The workspaces identity answered for a caller, by `<workspaceId> <userId>`, kept fresh by identity's
   * workspace notices (see server.ts), so a caller's request asks identity nothing in the steady state.
   * Absent: identity is asked every time.
   */
  callerWorkspaces?: NoticeKeptCache<Workspace>;
}

/** The event cases of a form's changes (FORM_PUBLISHED, FORM_CLOSED, FORM_DELETED). */
type FormEventCase = "formPublished" | "formClosed" | "formDeleted";

const statusNames: Record<FormStatusName, FormStatus> = {
  draft: FormStatus.DRAFT,
  published: FormStatus.PUBLISHED,
  closed: FormStatus.CLOSED,
};
const statusFromProto = new Map<FormStatus, FormStatusName>([
  [FormStatus.DRAFT, "draft"],
  [FormStatus.PUBLISHED, "published"],
  [FormStatus.CLOSED, "closed"],
]);

/** The largest count SetResponseCounts takes: counts are read as JavaScript numbers. */
const maxCount = BigInt(Number.MAX_SAFE_INTEGER);

/** Allowed moves between statuses (setting the current status is a no-op, handled apart). */
const transitions: Record<FormStatusName, readonly FormStatusName[]> = {
  draft: ["published"],
  published: ["closed"],
  closed: ["published"],
};

const formNotFound = () => new ConnectError("form not found", Code.NotFound);
const formVersionNotFound = () => new ConnectError("form version not found", Code.NotFound);

/** Statuses respondents may see (a closed form shows its closed message). */
const publicStatuses: readonly FormStatusName[] = ["published", "closed"];

function invalid(err: z.ZodError, root: string): ConnectError {
  return new ConnectError(describeZodError(err, root), Code.InvalidArgument);
}

/** The block id of the EMAIL question a receipt goes to, named by its id or key; a 400 naming the field otherwise. */
function receiptQuestionIdIn(document: FormDocument, idOrKey: string): string {
  const found = receiptQuestionOf(document, idOrKey);
  if ("id" in found) return found.id;
  const field = "settings.notifications.receiptQuestionId";
  const details = [{ desc: BadRequestSchema, value: { fieldViolations: [{ field, description: found.problem }] } }];
  throw new ConnectError(`${field}: ${found.problem}`, Code.InvalidArgument, undefined, details);
}

function parseDocument(raw: JsonObject): FormDocument {
  const parsed = formDocumentSchema.safeParse(raw);
  if (!parsed.success) throw invalid(parsed.error, "document");
  return parsed.data;
}

function parseName(raw: string): string {
  const parsed = formNameSchema.safeParse(raw);
  if (!parsed.success) throw invalid(parsed.error, "name");
  return parsed.data;
}

/** INVALID_ARGUMENT with each problem as a field violation (google.rpc.BadRequest): the gateway answers them as `fields`. */
function invalidDocument(err: DocumentError): ConnectError {
  const fieldViolations = err.problems.map((p) => ({ field: p.path, description: p.message }));
  const details = fieldViolations.length > 0 ? [{ desc: BadRequestSchema, value: { fieldViolations } }] : [];
  return new ConnectError(err.message, Code.InvalidArgument, undefined, details);
}

function normalize(document: FormDocument, blockKeys: Record<string, string>) {
  try {
    return normalizeDocument(document, blockKeys);
  } catch (err) {
    throw err instanceof DocumentError ? invalidDocument(err) : err;
  }
}

/** Every recall (`{{name}}`) of the document's and settings' texts names what it may: else INVALID_ARGUMENT naming each. */
function checkRecall(document: FormDocument, settings: unknown): void {
  const problems = recallProblems(document, resolveSettings(settings));
  if (problems.length === 0) return;
  throw invalidDocument(new DocumentError(describeProblems(problems.map((p) => ({ message: p.message, line: `${p.path}: ${p.message}` })), 3), problems));
}

/** JSON with object keys sorted: equal for equal documents whatever the key order (jsonb reorders them). */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** The Form message: full settings (defaults applied) and the normalized document. */
export function formMessage(form: Form): MessageInitShape<typeof FormSchema> {
  return {
    id: form.id,
    workspaceId: form.workspaceId,
    name: form.name,
    status: statusNames[form.status],
    document: form.document as unknown as JsonObject,
    settings: resolveSettings(form.settings) as unknown as JsonObject,
    version: form.version,
    responseCount: BigInt(form.responseCount),
    createdAt: timestampFromDate(form.createdAt),
    updatedAt: timestampFromDate(form.updatedAt),
    trashedAt: form.trashedAt ? timestampFromDate(form.trashedAt) : undefined,
  };
}

/** A workspace id no workspace has (ids are letters and digits): what a missing form's caller is checked against. */
const noSuchWorkspace = "~";

export function createFormsHandlers(deps: FormsHandlersDeps): ServiceImpl<typeof FormsService> {
  const { orm, identity } = deps;
  const now = deps.now ?? (() => new Date());
  const formsTable = qualifiedTable(orm, FormEntity);

  /**
   * A form as it is now, for reading only: one raw query. Every API read of a form passes here, and the
   * ORM's findOne (query builder, hydration, identity map) cost more CPU than the rest of the read.
   */
  async function readForm(id: string): Promise<Form | undefined> {
    type Row = Omit<Form, "responseCount" | "createdAt" | "updatedAt" | "trashedAt"> & { responseCount: string; createdAt: string; updatedAt: string; trashedAt: string | null };
    const [row]: Row[] = await orm.em.getConnection().execute(
      `select "id", "workspace_id" as "workspaceId", "name", "status", "document", "block_keys" as "blockKeys", "settings", "version",
              "response_count" as "responseCount", "created_at" as "createdAt", "updated_at" as "updatedAt", "trashed_at" as "trashedAt"
         from ${formsTable} where "id" = ?`,
      [id],
      "all",
    );
    return (
      row && {
        ...row,
        responseCount: Number(row.responseCount),
        createdAt: new Date(row.createdAt),
        updatedAt: new Date(row.updatedAt),
        trashedAt: row.trashedAt === null ? null : new Date(row.trashedAt),
      }
    );
  }

  /** The workspace, when the caller is a member of it; NOT_FOUND with `message` otherwise. */
  async function callerWorkspace(caller: string, workspaceId: string, message: string): Promise<Workspace> {
    if (!workspaceId) throw new ConnectError(message, Code.NotFound);
    const ask = async () =>
      (
        await identity
          .getWorkspace({ workspaceId }, asCaller(caller))
          .catch((err: unknown) => upstreamFailure("identity", err, { notFoundMessage: message, logger: deps.logger }))
      ).workspace;
    // Only memberships are held: someone who is not a member is asked about again, so joining counts at once.
    const workspace = await (deps.callerWorkspaces ? deps.callerWorkspaces.read(`${workspaceId} ${caller}`, ask) : ask());
    if (!workspace) throw new ConnectError(message, Code.NotFound);
    return workspace;
  }

  /**
   * The form, when it exists, is outside the Trash (unless `trashed` allows it) and, for a caller, is in
   * one of their workspaces. Every other case is the same NOT_FOUND. For the operator (actorOf) no
   * membership is checked.
   */
  async function accessibleForm(
    id: string,
    actor: string | typeof operator,
    options: { trashed?: boolean } = {},
  ): Promise<{ form: Form; workspace: Workspace | undefined }> {
    const form = id ? await readForm(id) : undefined;
    if (!form || (form.trashedAt && !options.trashed)) {
      // Identity is asked as for another tenant's form, so the time taken does not tell a missing form from
      // someone else's (the probe of issue 34 saw 13-22 ms against 21-36 ms).
      if (actor !== operator) await callerWorkspace(actor, noSuchWorkspace, "form not found").catch(() => undefined);
      throw formNotFound();
    }
    const workspace = actor === operator ? undefined : await callerWorkspace(actor, form.workspaceId, "form not found");
    return { form, workspace };
  }

  /**
   * Changes a form under a row lock, so concurrent changes (versions above all) apply one after the other.
   * `change` returns whether it changed anything; unchanged forms keep their updated_at.
   */
  /**
   * A form event in forms' outbox, in the transaction of the change (`status`: after it; for the Trash, the
   * one it had). Forwarded to the submissions outbox by the event forwarder.
   */
  function recordEvent(em: ReturnType<typeof orm.em.fork>, form: Form, kind: FormEventCase, status: FormStatusName, at: Date): void {
    const event = create(EventSchema, {
      event: {
        case: kind,
        value: { eventId: newId(), formId: form.id, workspaceId: form.workspaceId, formName: form.name, status, version: form.version, changedAt: timestampFromDate(at) },
      },
    });
    em.create(FormEventEntity, {
      eventId: eventFacts(event).eventId,
      formId: form.id,
      payload: encodeEvent(event),
      requestId: currentRequestId() ?? null,
      traceParent: traceparentOf(),
      createdAt: at,
      forwardedAt: null,
    });
  }

  /**
   * Changes the form under its row lock; `event` names the form event the change is, if any (recorded in
   * the same transaction, at the change's time).
   */
  async function changeForm(
    id: string,
    options: { trashed?: boolean; event?: (before: FormStatusName, form: Form) => [FormEventCase, FormStatusName] | undefined },
    change: (form: Form, em: ReturnType<typeof orm.em.fork>) => Promise<boolean> | boolean,
  ): Promise<Form> {
    return orm.em.fork().transactional(async (em) => {
      const form = await em.findOne(FormEntity, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!form || (form.trashedAt && !options.trashed)) throw formNotFound();
      const before = form.status;
      if (await change(form, em)) {
        form.updatedAt = now();
        const event = options.event?.(before, form);
        if (event) recordEvent(em, form, event[0], event[1], form.updatedAt);
      }
      return form;
    });
  }

  /** Deleting a form (to the Trash or for good) takes the workspace's owner or an admin (GetWorkspace tells the caller's role). */
  function requireFormDeleter(workspace: Workspace | undefined): void {
    if (workspace?.role !== Role.OWNER && workspace?.role !== Role.ADMIN) {
      throw new ConnectError("only the workspace's owner or an admin may delete its forms", Code.PermissionDenied);
    }
  }

  /**
   * A form the caller may delete for good: in the Trash (FAILED_PRECONDITION otherwise), of a workspace
   * they own or administer (PERMISSION_DENIED otherwise); NOT_FOUND like every other call.
   */
  async function purgeableForm(id: string, caller: string): Promise<Form> {
    const { form, workspace } = await accessibleForm(id, caller, { trashed: true });
    requireFormDeleter(workspace);
    if (!form.trashedAt) throw new ConnectError("only a form in the Trash can be deleted for good; move it to the Trash first", Code.FailedPrecondition);
    return form;
  }

  /** The client of a service that holds a form's data (a deployment of forms without it cannot purge). */
  function holder<T>(client: T | undefined, name: string): T {
    if (!client) throw new ConnectError(`purging forms needs ${name}`, Code.Unimplemented);
    return client;
  }
  const failed = (name: string) => (err: unknown) => upstreamFailure(name, err, { logger: deps.logger });

  return {
    async createForm(req, ctx) {
      const caller = requireCaller(ctx);
      if (!req.workspaceId) throw new ConnectError("workspaceId: is required", Code.InvalidArgument);
      const name = req.name === undefined ? undefined : parseName(req.name);
      const parsed = req.document === undefined ? emptyDocument() : parseDocument(req.document);
      const { document, blockKeys } = normalize(parsed, {});
      checkRecall(document, {});
      await callerWorkspace(caller, req.workspaceId, "workspace not found");

      const at = now();
      const em = orm.em.fork();
      const form = em.create(FormEntity, {
        id: newId(),
        workspaceId: req.workspaceId,
        name: name ?? (document.title?.trim() || "Untitled form"),
        status: "draft",
        document,
        blockKeys,
        settings: {},
        version: 1,
        responseCount: 0,
        createdAt: at,
        updatedAt: at,
        trashedAt: null,
      });
      em.create(FormVersionEntity, { formId: form.id, version: 1, document, createdAt: at, updatedAt: at });
      await em.flush();
      return { form: formMessage(form) };
    },

    async getForm(req, ctx) {
      const { form } = await accessibleForm(req.id, requireCaller(ctx));
      return { form: formMessage(form) };
    },

    async listForms(req, ctx) {
      const caller = requireCaller(ctx);
      const window = pageRequest(req);
      let workspaceIds: string[];
      if (req.workspaceId) {
        await callerWorkspace(caller, req.workspaceId, "workspace not found");
        workspaceIds = [req.workspaceId];
      } else {
        const res = await identity
          .listWorkspaces({ limit: 0 }, asCaller(caller))
          .catch((err: unknown) => upstreamFailure("identity", err, { notFoundMessage: "workspace not found", logger: deps.logger }));
        workspaceIds = res.workspaces.map((w) => w.id);
      }
      if (workspaceIds.length === 0) return { forms: [], hasMore: false };
      const after = (column: string) => (window.after ? [keysetAfter(formsTable, column, "desc", window.after)] : []);
      const rows = req.trashed
        ? await orm.em.fork().find(
            FormEntity,
            { $and: [{ workspaceId: { $in: workspaceIds }, trashedAt: { $ne: null } }, ...after("trashed_at")] },
            { orderBy: [{ trashedAt: "desc" }, { id: "desc" }], limit: window.fetch, offset: window.offset },
          )
        : await orm.em.fork().find(
            FormEntity,
            { $and: [{ workspaceId: { $in: workspaceIds }, trashedAt: null }, ...after("created_at")] },
            { orderBy: [{ createdAt: "desc" }, { id: "desc" }], limit: window.fetch, offset: window.offset },
          );
      const page = pageOf(rows, window.limit, (form) => (req.trashed ? form.trashedAt! : form.createdAt));
      return { forms: page.items.map(formMessage), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },

    async updateForm(req, ctx) {
      const caller = requireCaller(ctx);
      const name = req.name === undefined ? undefined : parseName(req.name);
      const document = req.document === undefined ? undefined : parseDocument(req.document);
      let patch: FormSettingsPatch | undefined;
      if (req.settings !== undefined) {
        const parsed = formSettingsPatchSchema.safeParse(req.settings);
        if (!parsed.success) throw invalid(parsed.error, "settings");
        patch = parsed.data;
      }

      const { workspace } = await accessibleForm(req.id, caller);
      if (patch?.branding === false && !workspace?.entitlements?.removeBranding) {
        throw new ConnectError("removing branding needs a plan with the branding entitlement", Code.PermissionDenied);
      }

      const form = await changeForm(req.id, {}, async (form, em) => {
        let changed = false;
        if (name !== undefined && name !== form.name) {
          form.name = name;
          changed = true;
        }
        if (document !== undefined) {
          const normalized = normalize(document, form.blockKeys);
          if (canonical(normalized.document) !== canonical(form.document)) {
            const at = now();
            form.document = normalized.document;
            form.blockKeys = normalized.blockKeys;
            if (form.status === "draft") {
              const current = await em.findOne(FormVersionEntity, { formId: form.id, version: form.version });
              if (current) {
                current.document = normalized.document;
                current.updatedAt = at;
              } else {
                em.create(FormVersionEntity, { formId: form.id, version: form.version, document: normalized.document, createdAt: at, updatedAt: at });
              }
            } else {
              // Respondents of a published (or closed, then reopened) form see the new version at once;
              // responses keep the version they were given.
              form.version += 1;
              em.create(FormVersionEntity, { formId: form.id, version: form.version, document: normalized.document, createdAt: at, updatedAt: at });
            }
            changed = true;
          }
        }
        // After the document: a receipt question given with it is looked for in the new blocks.
        if (patch !== undefined) {
          // Only what was ever set is stored; defaults apply to the rest when read.
          const merged = (await storedSettingsAfter(form.settings as Record<string, unknown>, patch)) as FormSettingsPatch;
          // One left as stored is not checked again: its question may have gone since, and the other settings
          // (which the app sends whole) must stay savable.
          const receipt = patch.notifications?.receiptQuestionId;
          if (patch.notifications && receipt && receipt !== resolveSettings(form.settings).notifications.receiptQuestionId) {
            merged.notifications = { ...patch.notifications, receiptQuestionId: receiptQuestionIdIn(form.document, receipt) };
          }
          if (canonical(merged) !== canonical(form.settings)) {
            form.settings = merged;
            changed = true;
          }
        }
        if (changed && (document !== undefined || patch !== undefined)) checkRecall(form.document, form.settings);
        return changed;
      });
      return { form: formMessage(form) };
    },

    async trashForm(req, ctx) {
      const { workspace } = await accessibleForm(req.id, requireCaller(ctx));
      requireFormDeleter(workspace);
      await changeForm(req.id, { event: (before) => ["formDeleted", before] }, (form) => {
        form.trashedAt = now();
        return true;
      });
      deps.onEvent?.();
      return {};
    },

    async listQuestions(req, ctx) {
      const { form } = await accessibleForm(req.formId, requireCaller(ctx));
      return { questions: listQuestions(form.document) };
    },

    async setFormStatus(req, ctx) {
      const target = statusFromProto.get(req.status);
      if (target === undefined) {
        throw new ConnectError("status must be one of draft, published, closed", Code.InvalidArgument);
      }
      await accessibleForm(req.id, actorOf(ctx));
      let evented = false;
      const statusEvent = (_before: FormStatusName, form: Form): [FormEventCase, FormStatusName] | undefined => {
        if (form.status === "draft") return undefined;
        evented = true;
        return [form.status === "published" ? "formPublished" : "formClosed", form.status];
      };
      const form = await changeForm(req.id, { event: statusEvent }, (form) => {
        if (form.status === target) return false;
        if (!transitions[form.status].includes(target)) {
          throw new ConnectError(
            target === "draft"
              ? `a ${form.status} form cannot go back to draft`
              : `a ${form.status} form cannot be ${target}; publish it first`,
            Code.FailedPrecondition,
          );
        }
        if (target === "published") {
          // Each language the form offers is whole before respondents see it (settings.languages).
          const missing = missingTranslations(form.document, resolveSettings(form.settings));
          if (missing.length > 0) throw new ConnectError(`cannot publish: ${describeMissingTranslations(missing)}`, Code.FailedPrecondition);
        }
        form.status = target;
        return true;
      });
      if (evented) deps.onEvent?.();
      return { form: formMessage(form) };
    },

    async getPublicForm(req) {
      // Public: no caller, no membership; drafts and the Trash look exactly like unknown ids.
      const form = req.id ? await readForm(req.id) : undefined;
      if (!form || form.trashedAt || !publicStatuses.includes(form.status)) throw formNotFound();
      let showBranding = true;
      if (!resolveSettings(form.settings).branding) {
        // Branding was removed when the plan allowed it; it shows again once the plan no longer does.
        const res = await identity
          .getWorkspaceEntitlements({ workspaceId: form.workspaceId })
          .catch((err: unknown) => upstreamFailure("identity", err, { notFoundMessage: "form not found", logger: deps.logger }));
        showBranding = !res.entitlements?.removeBranding;
      }
      const { passwordHash, captchaSecret } = settingsSecrets(form.settings);
      return { form: formMessage(form), showBranding, access: { passwordHash, captchaSecret } };
    },

    async getFormVersion(req) {
      // Internal: whatever the status, even in the Trash, since responses refer to their version.
      if (!req.formId) throw formNotFound();
      const form = await readForm(req.formId);
      if (!form) throw formNotFound();
      const row = req.version > 0 ? await orm.em.fork().findOne(FormVersionEntity, { formId: form.id, version: req.version }) : null;
      if (!row) throw formVersionNotFound();
      return {
        formId: form.id,
        workspaceId: form.workspaceId,
        name: form.name,
        version: row.version,
        document: row.document as unknown as JsonObject,
      };
    },

    async setResponseCounts(req) {
      // Internal (submissions owns the counts and sends absolute ones). One UPDATE; a count older than
      // the one held (a late or repeated call) is skipped, and so are unknown forms. Not a change of the
      // form: updated_at stays. A bad entry is skipped and logged, not the whole call refused: the sender
      // retries a refused call as it was, so one bad count would hold back every other count with it.
      const counts = req.counts.filter((c) => {
        const problem = !c.formId
          ? "no form id"
          : c.count < 0n || c.count > maxCount
            ? "count out of range"
            : c.revision < 1n
              ? "revision not positive"
              : undefined;
        if (problem) deps.logger?.warn({ formId: c.formId, count: c.count.toString(), revision: c.revision.toString(), problem }, "response count skipped");
        return !problem;
      });
      if (counts.length === 0) return { updated: 0 };
      const rows: unknown[] = await orm.em
        .fork()
        .getConnection()
        .execute(
          `update ${formsTable} f set response_count = c.count, response_count_revision = c.revision
             from (select distinct on (id) id, count, revision
                     from jsonb_to_recordset(?::jsonb) as u(id text, count bigint, revision bigint)
                    order by id, revision desc) c
            where f.id = c.id and f.response_count_revision < c.revision
           returning f.id`,
          [JSON.stringify(counts.map((c) => ({ id: c.formId, count: c.count.toString(), revision: c.revision.toString() })))],
          "all",
        );
      return { updated: rows.length };
    },

    async previewPurgeForm(req, ctx) {
      const form = await purgeableForm(req.id, requireCaller(ctx));
      const res = await holder(deps.submissions, "submissions").countFormResponses({ formId: form.id }).catch(failed("submissions"));
      return { holdings: res.holdings };
    },

    async purgeForm(req, ctx) {
      const form = await purgeableForm(req.id, requireCaller(ctx));
      // Every holder is known before anything is deleted: a service missing from the configuration fails
      // the purge before its first step, not half-way.
      const webhooksHolder = holder(deps.webhooks, "webhooks");
      const deliveryHolder = holder(deps.delivery, "delivery");
      const submissionsHolder = holder(deps.submissions, "submissions");
      // Everything the other services hold first, the form last: a failure half-way leaves the form in the
      // Trash, to be purged again (each step deletes what is left). Webhooks before deliveries, so no new
      // delivery is made for the form meanwhile; the payloads deliveries keep carry answers and file links.
      const webhooks = await webhooksHolder.deleteFormWebhooks({ formId: form.id }).catch(failed("webhooks"));
      const deliveries = await deliveryHolder.deleteFormDeliveries({ formId: form.id }).catch(failed("delivery"));
      const responses = await submissionsHolder.deleteFormResponses({ formId: form.id }).catch(failed("submissions"));
      // Deliveries once more, last of the other services: delivery's intake lists a form's webhooks and then
      // stores deliveries in a separate step, so a batch that listed them before DeleteFormWebhooks may have
      // stored its deliveries after the first DeleteFormDeliveries. Before the form's own deletion, so a
      // failure still leaves the form in the Trash to purge again.
      const lateDeliveries = await deliveryHolder.deleteFormDeliveries({ formId: form.id }).catch(failed("delivery"));
      const deliveriesDeleted = deliveries.deleted + lateDeliveries.deleted;
      // Only while still in the Trash (a restore meanwhile keeps it); its versions go with it (cascade).
      const purged = await orm.em.fork().nativeDelete(FormEntity, { id: form.id, trashedAt: { $ne: null } });
      if (purged === 0) {
        deps.logger?.warn({ formId: form.id, webhooks: webhooks.deleted, deliveries: deliveriesDeleted }, "form restored during its purge");
        throw new ConnectError(
          "the form was restored during the purge; its responses, webhooks and deliveries were deleted",
          Code.FailedPrecondition,
        );
      }
      deps.logger?.info({ formId: form.id, webhooks: webhooks.deleted, deliveries: deliveriesDeleted }, "form purged");
      return { deleted: responses.deleted, webhooks: webhooks.deleted, deliveries: deliveriesDeleted };
    },

    async duplicateForm(req, ctx) {
      const { form: source } = await accessibleForm(req.id, requireCaller(ctx));
      const suffix = " (copy)";
      const at = now();
      const em = orm.em.fork();
      const copy = em.create(FormEntity, {
        id: newId(),
        workspaceId: source.workspaceId,
        name: source.name.slice(0, (formNameSchema.maxLength ?? source.name.length) - suffix.length) + suffix,
        status: "draft",
        // Block and option ids and keys are unique within one form only, so the copy keeps them (and the
        // keys its blocks ever had, which stay theirs).
        document: source.document,
        blockKeys: source.blockKeys,
        settings: source.settings,
        version: 1,
        responseCount: 0,
        createdAt: at,
        updatedAt: at,
        trashedAt: null,
      });
      em.create(FormVersionEntity, { formId: copy.id, version: 1, document: source.document, createdAt: at, updatedAt: at });
      await em.flush();
      return { form: formMessage(copy) };
    },

    async restoreForm(req, ctx) {
      await accessibleForm(req.id, actorOf(ctx), { trashed: true });
      const form = await changeForm(req.id, { trashed: true }, (form) => {
        if (!form.trashedAt) return false;
        form.trashedAt = null;
        return true;
      });
      return { form: formMessage(form) };
    },
  };
}

export function routes(router: ConnectRouter, handlers: ServiceImpl<typeof FormsService>): void {
  router.service(FormsService, handlers);
}
