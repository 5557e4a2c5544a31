// The forms service in memory, for the unit tests of the services that call it (submissions, webhooks,
// delivery): forms, their versions and who may see them, answering GetForm, GetPublicForm,
// GetFormVersion and SetResponseCounts with the codes and messages forms answers. Imported by tests only.
import assert from "node:assert/strict";
import { create, type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { callerOf } from "@formsvc/platform/caller.ts";
import { FormSchema, FormStatus, FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";

export interface FakeForm {
  id: string;
  workspaceId: string;
  name: string;
  status: "draft" | "published" | "closed";
  /** The form's documents: versions[0] is version 1, the last one is current. */
  versions: object[];
  trashed: boolean;
  responseCount: number;
  /** The revision of responseCount (SetResponseCounts takes newer ones only). */
  responseCountRevision?: number;
  /** The form's stored settings (absent ones take their defaults where they are read). */
  settings?: JsonObject;
}

type Method = "getForm" | "getPublicForm" | "getFormVersion" | "setResponseCounts";

/** A call the fake was given: the form, the caller it was made for (null without one), and the version asked for. */
export interface FakeFormsCall {
  id: string;
  caller: string | null;
  version?: number;
}

const statuses = { draft: FormStatus.DRAFT, published: FormStatus.PUBLISHED, closed: FormStatus.CLOSED } as const;
const formNotFound = () => new ConnectError("form not found", Code.NotFound);

export class FakeForms {
  readonly forms = new Map<string, FakeForm>();
  /** Each workspace's members, by workspace id: GetForm answers them, and nobody else. */
  readonly members: Record<string, string[]> = {};
  /** The calls seen, by method, in order. */
  readonly calls: Record<Method, FakeFormsCall[]> = { getForm: [], getPublicForm: [], getFormVersion: [], setResponseCounts: [] };
  /** When it returns an error for a call (after the caller check), the call fails with it: a broken or unreachable forms. */
  failWith: ((method: Method, formId: string) => ConnectError | undefined) | undefined;
  /** When it returns a promise for a call, the call waits for it first: a forms that hangs. */
  holdWith: ((method: Method) => Promise<void> | undefined) | undefined;
  readonly client: Client<typeof FormsService>;

  constructor() {
    const record = (method: Method, id: string, caller: string | undefined, version?: number) =>
      this.calls[method].push({ id, caller: caller ?? null, ...(version === undefined ? {} : { version }) });
    const failIfTold = (method: Method, id: string) => {
      const failure = this.failWith?.(method, id);
      if (failure) throw failure;
    };
    this.client = createClient(
      FormsService,
      createRouterTransport((router) =>
        router.service(FormsService, {
          getForm: (req, ctx) => {
            const caller = callerOf(ctx);
            record("getForm", req.id, caller);
            if (!caller) throw new ConnectError("this call needs a caller", Code.Unauthenticated);
            failIfTold("getForm", req.id);
            const form = this.forms.get(req.id);
            if (!form || form.trashed || !this.members[form.workspaceId]?.includes(caller)) throw formNotFound();
            return { form: formMessage(form) };
          },
          getPublicForm: (req, ctx) => {
            assert.equal(callerOf(ctx), undefined, "public calls carry no caller");
            record("getPublicForm", req.id, undefined);
            failIfTold("getPublicForm", req.id);
            const form = this.forms.get(req.id);
            if (!form || form.trashed || form.status === "draft") throw formNotFound();
            return { form: formMessage(form), showBranding: true };
          },
          getFormVersion: (req, ctx) => {
            record("getFormVersion", req.formId, callerOf(ctx), req.version);
            failIfTold("getFormVersion", req.formId);
            const form = this.forms.get(req.formId);
            if (!form) throw formNotFound();
            const document = form.versions[req.version - 1];
            if (req.version < 1 || !document) throw new ConnectError("form version not found", Code.NotFound);
            return { formId: form.id, workspaceId: form.workspaceId, name: form.name, version: req.version, document: document as JsonObject };
          },
          setResponseCounts: async (req, ctx) => {
            for (const c of req.counts) record("setResponseCounts", c.formId, callerOf(ctx));
            await this.holdWith?.("setResponseCounts");
            for (const c of req.counts) failIfTold("setResponseCounts", c.formId);
            let updated = 0;
            for (const c of req.counts) {
              const form = this.forms.get(c.formId);
              // As forms does: a bad count is skipped, not the call refused.
              if (!c.formId || c.count < 0n || c.revision < 1n) continue;
              if (!form || (form.responseCountRevision ?? 0) >= Number(c.revision)) continue;
              form.responseCount = Number(c.count);
              form.responseCountRevision = Number(c.revision);
              updated += 1;
            }
            return { updated };
          },
        }),
      ),
    );
  }

  /**
   * Adds a form: published, one empty version, in its own workspace `ws-<id>` unless `init` says
   * otherwise; `members` become its workspace's members.
   */
  add(init: Partial<FakeForm> & { id: string; members?: string[] }): FakeForm {
    const { members, ...fields } = init;
    const form: FakeForm = { workspaceId: `ws-${init.id}`, name: init.id, status: "published", versions: [{}], trashed: false, responseCount: 0, ...fields };
    if (members) this.members[form.workspaceId] = members;
    this.forms.set(form.id, form);
    return form;
  }
}

function formMessage(form: FakeForm) {
  return create(FormSchema, {
    id: form.id,
    workspaceId: form.workspaceId,
    name: form.name,
    status: statuses[form.status],
    document: form.versions.at(-1) as JsonObject,
    version: form.versions.length,
    responseCount: BigInt(form.responseCount),
    settings: form.settings ?? {},
  });
}
