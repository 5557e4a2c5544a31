import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { asCaller } from "@formsvc/platform/caller.ts";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { rejectsWith } from "@formsvc/platform/testing/rpc-assertions.ts";
import { DeliveryService } from "@formsvc/proto/delivery/v1/delivery_pb.js";
import { FormStatus, FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { Plan } from "@formsvc/proto/identity/v1/identity_pb.js";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { FakeIdentity, fakeWorkspace } from "../../../identity/src/testing/fake-identity.ts";
import { entities } from "../entities/index.ts";
import { migrations } from "../migrations/index.ts";
import { createFormsHandlers, routes } from "./forms-handlers.ts";

// PurgeForm and DuplicateForm against a real database, with the services holding a form's data faked:
// who may purge, what is asked of whom and in which order, and what a copy keeps.

const users = { owner: "user-owner", admin: "user-admin", member: "user-member", stranger: "user-stranger" } as const;
const identity = new FakeIdentity([
  { workspace: fakeWorkspace("ws-team", Plan.FREE, users.owner), members: [users.owner, users.admin, users.member], admins: [users.admin] },
  { workspace: fakeWorkspace("ws-stranger", Plan.FREE, users.stranger), members: [users.stranger] },
]);

/** The calls the fakes got, in order: `<service>.<method> <formId>`. */
const calls: string[] = [];
/** When set, submissions' DeleteFormResponses fails with it (a submissions that is down). */
let submissionsFailure: ConnectError | undefined;
/** When set, runs while submissions' DeleteFormResponses is deleting (something happening mid-purge). */
let duringResponsesDeletion: ((formId: string) => Promise<void>) | undefined;
/** Deliveries the fake delivery holds, by form (its intake storing some late is a push here). */
const deliveriesHeld = new Map<string, number>();
const holdings = { responses: 3n, partials: 1n, files: 5n, bytes: 3_800n };

const transport = createRouterTransport((router) => {
  router.service(SubmissionsService, {
    countFormResponses: (req) => (calls.push(`submissions.count ${req.formId}`), { holdings }),
    deleteFormResponses: async (req) => {
      calls.push(`submissions.delete ${req.formId}`);
      if (submissionsFailure) throw submissionsFailure;
      await duringResponsesDeletion?.(req.formId);
      return { deleted: holdings };
    },
  });
  router.service(WebhooksService, { deleteFormWebhooks: (req) => (calls.push(`webhooks.delete ${req.formId}`), { deleted: 2n }) });
  router.service(DeliveryService, {
    deleteFormDeliveries: (req) => {
      calls.push(`delivery.delete ${req.formId}`);
      const deleted = deliveriesHeld.get(req.formId) ?? 0;
      deliveriesHeld.delete(req.formId);
      return { deleted: BigInt(deleted) };
    },
  });
});

let database: TestDatabase;
let orm: MikroORM;
let client: Client<typeof FormsService>;

before(async () => {
  database = await createTestDatabase("forms_purge_test");
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "forms", entities, migrations });
  const handlers = createFormsHandlers({
    orm,
    identity: identity.client,
    submissions: createClient(SubmissionsService, transport),
    webhooks: createClient(WebhooksService, transport),
    delivery: createClient(DeliveryService, transport),
  });
  client = createClient(FormsService, createRouterTransport((router) => routes(router, handlers)));
});
after(async () => {
  await orm?.close(true);
  await database?.drop();
});

async function trashedForm(name = "Applications"): Promise<string> {
  const { form } = await client.createForm({ workspaceId: "ws-team", name }, asCaller(users.owner));
  await client.trashForm({ id: form!.id }, asCaller(users.owner));
  return form!.id;
}

const formRows = async (id: string) =>
  (await orm.em.fork().getConnection().execute(`select count(*)::int as n from "forms"."forms" where id = ?`, [id]))[0].n as number;

describe("PurgeForm", () => {
  it("deletes webhooks, then deliveries, then responses and files, then deliveries stored late, then the form; answers what went", async () => {
    const id = await trashedForm();
    deliveriesHeld.set(id, 7);
    calls.length = 0;
    const preview = await client.previewPurgeForm({ id }, asCaller(users.admin));
    const counted = preview.holdings!;
    assert.deepEqual([counted.responses, counted.partials, counted.files, counted.bytes], [3n, 1n, 5n, 3_800n]);
    const res = await client.purgeForm({ id }, asCaller(users.admin));
    assert.deepEqual([res.deleted?.responses, res.deleted?.files, res.webhooks, res.deliveries], [3n, 5n, 2n, 7n]);
    assert.deepEqual(calls, [`submissions.count ${id}`, `webhooks.delete ${id}`, `delivery.delete ${id}`, `submissions.delete ${id}`, `delivery.delete ${id}`]);
    assert.equal(await formRows(id), 0);
    await rejectsWith(client.purgeForm({ id }, asCaller(users.owner)), Code.NotFound, "form not found");
    await rejectsWith(client.restoreForm({ id }, asCaller(users.owner)), Code.NotFound);
  });

  it("is refused outside the Trash, to members without the role and to strangers, asking nobody to delete", async () => {
    const { form } = await client.createForm({ workspaceId: "ws-team", name: "Live" }, asCaller(users.owner));
    calls.length = 0;
    await rejectsWith(client.purgeForm({ id: form!.id }, asCaller(users.owner)), Code.FailedPrecondition, /only a form in the Trash/);
    await rejectsWith(client.previewPurgeForm({ id: form!.id }, asCaller(users.owner)), Code.FailedPrecondition);
    const id = await trashedForm();
    await rejectsWith(client.purgeForm({ id }, asCaller(users.member)), Code.PermissionDenied, /owner or an admin/);
    await rejectsWith(client.previewPurgeForm({ id }, asCaller(users.member)), Code.PermissionDenied);
    await rejectsWith(client.purgeForm({ id }, asCaller(users.stranger)), Code.NotFound, "form not found");
    await rejectsWith(client.purgeForm({ id: "" }, asCaller(users.owner)), Code.NotFound);
    assert.deepEqual(calls, []);
    assert.equal(await formRows(id), 1);
  });

  it("a failure half-way leaves the form in the Trash; purging again finishes", async () => {
    const id = await trashedForm();
    submissionsFailure = new ConnectError("down", Code.Unavailable);
    try {
      await rejectsWith(client.purgeForm({ id }, asCaller(users.owner)), Code.Unavailable, "submissions is unavailable");
    } finally {
      submissionsFailure = undefined;
    }
    assert.equal(await formRows(id), 1);
    const { forms } = await client.listForms({ workspaceId: "ws-team", trashed: true }, asCaller(users.owner));
    assert.ok(forms.some((f) => f.id === id), "still in the Trash");
    await client.purgeForm({ id }, asCaller(users.owner));
    assert.equal(await formRows(id), 0);
  });

  it("deletes the deliveries an intake stored after the first DeleteFormDeliveries (webhooks listed before their deletion)", async () => {
    const id = await trashedForm();
    deliveriesHeld.set(id, 4);
    // A delivery batch that had listed the form's webhooks before DeleteFormWebhooks stores its deliveries now.
    duringResponsesDeletion = async (formId) => void deliveriesHeld.set(formId, 2);
    try {
      const res = await client.purgeForm({ id }, asCaller(users.owner));
      assert.equal(res.deliveries, 6n, "both sweeps' deliveries are counted");
    } finally {
      duringResponsesDeletion = undefined;
    }
    assert.equal(deliveriesHeld.has(id), false, "no delivery of the purged form is left");
    assert.equal(await formRows(id), 0);
  });

  it("a form restored during the purge stays, and the purge answers FAILED_PRECONDITION saying what went", async () => {
    const id = await trashedForm();
    duringResponsesDeletion = async (formId) => void (await client.restoreForm({ id: formId }, asCaller(users.owner)));
    try {
      await rejectsWith(
        client.purgeForm({ id }, asCaller(users.owner)),
        Code.FailedPrecondition,
        "the form was restored during the purge; its responses, webhooks and deliveries were deleted",
      );
    } finally {
      duringResponsesDeletion = undefined;
    }
    assert.equal(await formRows(id), 1);
    const { form } = await client.getForm({ id }, asCaller(users.owner));
    assert.equal(form!.trashedAt, undefined, "out of the Trash");
  });
});

describe("DuplicateForm", () => {
  it("makes a draft '<name> (copy)' with the same document, keys and settings", async () => {
    const document: JsonObject = {
      title: "Lunch",
      blocks: [
        { id: "who", key: "q_name", type: "SHORT_TEXT", question: "Your name", required: true },
        { id: "menu", key: "q_menu", type: "MULTIPLE_CHOICE", question: "Menu", options: [{ id: "veg", text: "Veggie" }, { id: "fish", text: "Fish" }] },
      ],
    };
    const { form: source } = await client.createForm({ workspaceId: "ws-team", name: "Team lunch", document }, asCaller(users.owner));
    await client.updateForm({ id: source!.id, settings: { submitLabel: "Count me in", responseLimit: 12 } }, asCaller(users.owner));
    await client.setFormStatus({ id: source!.id, status: FormStatus.PUBLISHED }, asCaller(users.owner));
    const { form: fresh } = await client.getForm({ id: source!.id }, asCaller(users.owner));

    const { form: copy } = await client.duplicateForm({ id: source!.id }, asCaller(users.member));
    assert.notEqual(copy!.id, source!.id);
    assert.deepEqual([copy!.name, copy!.status, copy!.version, copy!.responseCount, copy!.workspaceId], ["Team lunch (copy)", FormStatus.DRAFT, 1, 0n, "ws-team"]);
    assert.deepEqual(copy!.document, fresh!.document);
    assert.deepEqual(copy!.settings, fresh!.settings);
    // The copy's keys stay its blocks' own: a later save keeps them.
    const saved = await client.updateForm({ id: copy!.id, document: copy!.document }, asCaller(users.owner));
    assert.deepEqual((saved.form!.document!.blocks as { key?: string }[]).map((b) => b.key), ["q_name", "q_menu"]);
  });

  it("cuts a long name to fit; the Trash and strangers get NOT_FOUND", async () => {
    const { form } = await client.createForm({ workspaceId: "ws-team", name: "x".repeat(200) }, asCaller(users.owner));
    const { form: copy } = await client.duplicateForm({ id: form!.id }, asCaller(users.owner));
    assert.equal(copy!.name, `${"x".repeat(193)} (copy)`);
    await rejectsWith(client.duplicateForm({ id: form!.id }, asCaller(users.stranger)), Code.NotFound, "form not found");
    await rejectsWith(client.duplicateForm({ id: await trashedForm() }, asCaller(users.owner)), Code.NotFound, "form not found");
  });
});
