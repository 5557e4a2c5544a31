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
  resolveSettings,
  type FormDocument,
  type FormSettingsPatch,
} from "@formsvc/form-document";
import { upstreamFailure } from "@formsvc/platform/upstream-failure.ts";
import { actorOf, asCaller, operator, requireCaller } from "@formsvc/platform/caller.ts";
import { qualifiedTable, type MikroORM } from "@formsvc/platform/database.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { newId } from "@formsvc/platform/ids.ts";
import { keysetAfter, pageOf, pageRequest } from "@formsvc/platform/paging.ts";
import { FormSchema, FormStatus, FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { Role, type IdentityService, type Workspace } from "@formsvc/proto/identity/v1/identity_pb.js";
import { FormEntity, FormEventEntity, FormVersionEntity, type Form, type FormStatusName } from "../entities/index.ts";
import { encodeEvent, eventFacts } from "@formsvc/platform/events.ts";
import { currentRequestId } from "@formsvc/platform/request-context.ts";
import { traceparentOf } from "@formsvc/platform/tracing.ts";
import { EventSchema } from "@formsvc/proto/events/v1/events_pb.js";

export interface FormsHandlersDeps {
  orm: MikroORM;
  /**
   * Identity, asked on behalf of the caller whether a workspace is theirs, and (internally, without a
   * caller) for the entitlements of a public form's workspace.
   */
  identity: Client<typeof IdentityService>;
  now?: () => Date;
  /** Where failures of identity are logged (they reach the caller only as UNAVAILABLE). */
  logger?: Logger;
  /** Told after a form event was committed to the outbox (the forwarder looks at once). */
  onEvent?: () => void;
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

/** The largest |delta| AdjustResponseCount takes: counts are read as JavaScript numbers. */
const maxDelta = BigInt(Number.MAX_SAFE_INTEGER);

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

function normalize(document: FormDocument, blockKeys: Record<string, string>) {
  try {
    return normalizeDocument(document, blockKeys);
  } catch (err) {
    if (err instanceof DocumentError) throw new ConnectError(err.message, Code.InvalidArgument);
    throw err;
  }
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

export function createFormsHandlers(deps: FormsHandlersDeps): ServiceImpl<typeof FormsService> {
  const { orm, identity } = deps;
  const now = deps.now ?? (() => new Date());
  const formsTable = qualifiedTable(orm, FormEntity);

  /** The workspace, when the caller is a member of it; NOT_FOUND with `message` otherwise. */
  async function callerWorkspace(caller: string, workspaceId: string, message: string): Promise<Workspace> {
    if (!workspaceId) throw new ConnectError(message, Code.NotFound);
    const res = await identity
      .getWorkspace({ workspaceId }, asCaller(caller))
      .catch((err: unknown) => upstreamFailure("identity", err, { notFoundMessage: message, logger: deps.logger }));
    if (!res.workspace) throw new ConnectError(message, Code.NotFound);
    return res.workspace;
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
    const form = id ? await orm.em.fork().findOne(FormEntity, { id }) : null;
    if (!form || (form.trashedAt && !options.trashed)) throw formNotFound();
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

  return {
    async createForm(req, ctx) {
      const caller = requireCaller(ctx);
      if (!req.workspaceId) throw new ConnectError("workspaceId: is required", Code.InvalidArgument);
      const name = req.name === undefined ? undefined : parseName(req.name);
      const parsed = req.document === undefined ? emptyDocument() : parseDocument(req.document);
      const { document, blockKeys } = normalize(parsed, {});
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
        if (patch !== undefined) {
          // Only what was ever set is stored; defaults apply to the rest when read.
          const merged: FormSettingsPatch = { ...form.settings };
          for (const [key, value] of Object.entries(patch)) {
            if (value !== undefined) (merged as Record<string, unknown>)[key] = value;
          }
          if (canonical(merged) !== canonical(form.settings)) {
            form.settings = merged;
            changed = true;
          }
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
        return changed;
      });
      return { form: formMessage(form) };
    },

    async trashForm(req, ctx) {
      const { workspace } = await accessibleForm(req.id, requireCaller(ctx));
      // Deleting a form takes the workspace's owner or an admin (GetWorkspace tells the caller's role).
      if (workspace?.role !== Role.OWNER && workspace?.role !== Role.ADMIN) {
        throw new ConnectError("only the workspace's owner or an admin may delete its forms", Code.PermissionDenied);
      }
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
        form.status = target;
        return true;
      });
      if (evented) deps.onEvent?.();
      return { form: formMessage(form) };
    },

    async getPublicForm(req) {
      // Public: no caller, no membership; drafts and the Trash look exactly like unknown ids.
      const form = req.id ? await orm.em.fork().findOne(FormEntity, { id: req.id }) : null;
      if (!form || form.trashedAt || !publicStatuses.includes(form.status)) throw formNotFound();
      let showBranding = true;
      if (!resolveSettings(form.settings).branding) {
        // Branding was removed when the plan allowed it; it shows again once the plan no longer does.
        const res = await identity
          .getWorkspaceEntitlements({ workspaceId: form.workspaceId })
          .catch((err: unknown) => upstreamFailure("identity", err, { notFoundMessage: "form not found", logger: deps.logger }));
        showBranding = !res.entitlements?.removeBranding;
      }
      return { form: formMessage(form), showBranding };
    },

    async getFormVersion(req) {
      // Internal: whatever the status, even in the Trash, since responses refer to their version.
      if (!req.formId) throw formNotFound();
      const em = orm.em.fork();
      const form = await em.findOne(FormEntity, { id: req.formId });
      if (!form) throw formNotFound();
      const row = req.version > 0 ? await em.findOne(FormVersionEntity, { formId: form.id, version: req.version }) : null;
      if (!row) throw formVersionNotFound();
      return {
        formId: form.id,
        workspaceId: form.workspaceId,
        name: form.name,
        version: row.version,
        document: row.document as unknown as JsonObject,
      };
    },

    async adjustResponseCount(req) {
      // Internal (submissions). One UPDATE, so concurrent adjustments never lose one another; the count
      // never goes below zero. Not a change of the form: updated_at stays.
      if (!req.formId) throw formNotFound();
      if (req.delta > maxDelta || req.delta < -maxDelta) {
        throw new ConnectError("delta is out of range", Code.InvalidArgument);
      }
      const rows: { response_count: string | number }[] = await orm.em
        .fork()
        .getConnection()
        .execute(
          `update ${formsTable} set response_count = greatest(response_count + ?::bigint, 0) where id = ? returning response_count`,
          [req.delta.toString(), req.formId],
          "all",
        );
      if (rows.length === 0) throw formNotFound();
      return { responseCount: BigInt(rows[0].response_count) };
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
