import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { formDocumentExample } from "@formsvc/form-document";
import { asCaller } from "@formsvc/platform/caller.ts";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { assertMigrationsApplyOnce, createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { FormStatus, FormsService, TrashFormResponseSchema, type Form } from "@formsvc/proto/forms/v1/forms_pb.js";
import { Plan, type Workspace } from "@formsvc/proto/identity/v1/identity_pb.js";
import { entities } from "../entities/index.ts";
import { migrations } from "../migrations/index.ts";
import { createFormsHandlers, routes } from "./forms-handlers.ts";
import { fromBinary } from "@bufbuild/protobuf";
import { eventFacts, eventTypeOf } from "@formsvc/platform/events.ts";
import { createLogger } from "@formsvc/platform/logger.ts";
import { NoticeKeptCache } from "@formsvc/platform/notice-kept-cache.ts";
import { formChangesChannel } from "@formsvc/platform/pg-notices.ts";
import { recordChannel } from "@formsvc/platform/testing/notices.ts";
import { EventSchema, type FormChanged } from "@formsvc/proto/events/v1/events_pb.js";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { FormEventEntity } from "../entities/index.ts";
import { startEventForwarder } from "../event-forwarder.ts";
import { rejectsWith } from "@formsvc/platform/testing/rpc-assertions.ts";
import { verifyPassword } from "@formsvc/platform/password-hash.ts";
import { FakeIdentity, fakeWorkspace } from "../../../identity/src/testing/fake-identity.ts";

// --- Identity's fake: a few users and workspaces, answering as the real one does. ---

const users = { alice: "user-alice", bob: "user-bob", carol: "user-carol", dave: "user-dave", erin: "user-erin" } as const;

const fakeIdentity = new FakeIdentity([
  { workspace: fakeWorkspace("ws-alice", Plan.FREE, users.alice), members: [users.alice] },
  { workspace: fakeWorkspace("ws-alice-pro", Plan.PRO, users.alice), members: [users.alice] },
  { workspace: fakeWorkspace("ws-bob", Plan.FREE, users.bob), members: [users.bob] },
  { workspace: fakeWorkspace("ws-shared", Plan.FREE, users.alice), members: [users.alice, users.bob], admins: [users.bob] },
  { workspace: fakeWorkspace("ws-team", Plan.FREE, users.alice), members: [users.alice, users.bob, users.erin], admins: [users.bob] },
  { workspace: fakeWorkspace("ws-dave-1", Plan.FREE, users.dave), members: [users.dave] },
  { workspace: fakeWorkspace("ws-dave-2", Plan.FREE, users.dave), members: [users.dave] },
  { workspace: fakeWorkspace("ws-erin-pro", Plan.PRO, users.alice), members: [users.alice] },
]);
/** Callers seen by the fake identity, to check the caller is forwarded. */
const identityCallers = fakeIdentity.callers;
/** Workspaces asked for by GetWorkspaceEntitlements (an internal call, without a caller). */
const entitlementLookups = fakeIdentity.entitlementLookups;

// --- The forms service under test, on a fresh database. ---

let database: TestDatabase;
let orm: MikroORM;
let client: Client<typeof FormsService>;
/** The handlers' clock: one second later at every reading, so creation order is unambiguous. */
let clock = Date.parse("2026-01-01T00:00:00Z");

const as = asCaller;

/** What the handlers logged at warn and above. */
const warnings: Record<string, unknown>[] = [];

async function newForm(user: string, workspaceId: string, init: { name?: string; document?: JsonObject } = {}): Promise<Form> {
  const res = await client.createForm({ workspaceId, ...init }, as(user));
  assert.ok(res.form);
  return res.form;
}

async function versionRows(formId: string): Promise<{ version: number; document: any }[]> {
  return orm.em
    .getConnection()
    .execute(`select version, document from "forms"."form_versions" where form_id = ? order by version`, [formId]);
}

const blocks = (doc: JsonObject | undefined) => (doc?.blocks ?? []) as any[];

const signUp: JsonObject = {
  ...formDocumentExample,
  calculatedFields: [{ name: "score", type: "NUMBER", expression: "1" }],
};

before(async () => {
  database = await createTestDatabase("forms_test");
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "forms", entities, migrations });
  const logger = createLogger("forms-test", "warn", { write: (line: string) => void warnings.push(JSON.parse(line)) });
  const handlers = createFormsHandlers({ orm, identity: fakeIdentity.client, logger, now: () => new Date((clock += 1000)) });
  client = createClient(FormsService, createRouterTransport((router) => routes(router, handlers)));
});

after(async () => {
  await orm?.close(true);
  await database?.drop();
});

describe("migrations", () => {
  it("apply once: a second replica opening the same database finds nothing to do", async () => {
    await assertMigrationsApplyOnce({ databaseUrl: database.databaseUrl, schema: "forms", entities, migrations }, [
      "Migration20261122000000_initial",
      "Migration20261215000000_outbox",
      "Migration20270110000000_response_count_revision",
      "Migration20270120000000_form_change_notices",
      "Migration20261127000200_delete_responses_after_days",
    ]);
  });
});

describe("CreateForm", () => {
  it("creates a draft, version 1, with default name, empty document and default settings", async () => {
    const form = await newForm(users.alice, "ws-alice");
    assert.match(form.id, /^[A-Za-z0-9]{16}$/);
    assert.equal(form.workspaceId, "ws-alice");
    assert.equal(form.name, "Untitled form");
    assert.equal(form.status, FormStatus.DRAFT);
    assert.equal(form.version, 1);
    assert.equal(form.responseCount, 0n);
    assert.deepEqual(form.document, { blocks: [] });
    assert.deepEqual(form.settings, {
      language: "en",
      languages: [],
      branding: true,
      closedMessage: "This form is closed.",
      redirectUrl: null,
      submitLabel: "Submit",
      showProgressBar: true,
      saveProgress: true,
      oneQuestionAtATime: false,
      closesAt: null,
      responseLimit: null,
      deleteResponsesAfterDays: null,
      honeypot: true,
      submissionsPerMinute: null,
      embedOrigins: null,
      requireSingleUseLink: false,
      proofOfWork: null,
      password: false,
      requireEmailVerification: false,
      captcha: null,
      notifications: { owner: false, members: [], receiptQuestionId: null },
      theme: { accentColor: "#0969da", backgroundColor: "#f6f7f9", font: "system", buttonStyle: "rounded", logo: null, colorScheme: "light" },
      thankYou: { title: "Thank you!", text: "Your response has been recorded.", buttonLabel: null, buttonUrl: null, redirectSeconds: null },
    });
    assert.ok(form.createdAt && form.updatedAt);
    assert.equal(form.trashedAt, undefined);
    const rows = await versionRows(form.id);
    assert.deepEqual(rows.map((r) => r.version), [1]);
    assert.deepEqual(rows[0].document, { blocks: [] });
    assert.equal(identityCallers.at(-1), users.alice, "identity is asked as the caller");
  });

  it("normalizes the document: ids for every block and option, keys for every question", async () => {
    const form = await newForm(users.alice, "ws-alice", { document: signUp });
    assert.equal(form.name, "Event sign-up", "the name defaults to the document's title");
    const got = blocks(form.document);
    assert.equal(got.length, 6);
    for (const block of got) assert.match(block.id, /^[A-Za-z0-9_-]+$/);
    assert.equal(got[1].id, "b1");
    assert.equal(got[1].key, "q_name");
    assert.match(got[2].key, /^q_[a-z0-9]{8}$/);
    assert.equal(got[0].key, undefined);
    assert.equal(got[3].options[0].id, "o1");
    assert.match(got[3].options[1].id, /^[A-Za-z0-9]{16}$/);
    assert.deepEqual(form.document?.hiddenFields, [{ name: "utm_source" }]);
    const rows = await versionRows(form.id);
    assert.deepEqual(rows[0].document, form.document);
  });

  it("takes an explicit name over the title", async () => {
    const form = await newForm(users.alice, "ws-alice", { name: "Mine", document: signUp });
    assert.equal(form.name, "Mine");
  });

  it("answers NOT_FOUND for a workspace that is not the caller's or does not exist", async () => {
    await rejectsWith(client.createForm({ workspaceId: "ws-bob" }, as(users.alice)), Code.NotFound, "workspace not found");
    await rejectsWith(client.createForm({ workspaceId: "ws-nope" }, as(users.alice)), Code.NotFound, "workspace not found");
    await rejectsWith(client.createForm({ workspaceId: "ws-alice" }, as(users.carol)), Code.NotFound, "workspace not found");
  });

  it("needs a caller and a workspace id", async () => {
    await rejectsWith(client.createForm({ workspaceId: "ws-alice" }), Code.Unauthenticated);
    await rejectsWith(client.createForm({ workspaceId: "" }, as(users.alice)), Code.InvalidArgument, /^workspaceId: /);
  });

  it("refuses an invalid document with the path of the problem", async () => {
    const bad = (document: JsonObject) => client.createForm({ workspaceId: "ws-alice", document }, as(users.alice));
    await rejectsWith(bad({ blocks: [{ type: "SHORT_TEXT", question: "" }] }), Code.InvalidArgument, /^document\.blocks\[0\]\.question: /);
    await rejectsWith(
      bad({ blocks: [{ type: "PAGE_BREAK" }, { type: "DROPDOWN", question: "Pick", options: [] }] }),
      Code.InvalidArgument,
      /^document\.blocks\[1\]\.options: /,
    );
    await rejectsWith(bad({ blocks: [], colour: "red" }), Code.InvalidArgument, "document.colour: unknown property");
    await rejectsWith(bad({}), Code.InvalidArgument, /^document\.blocks: is required/);
    await rejectsWith(
      bad({ blocks: [{ id: "x", type: "PAGE_BREAK" }, { id: "x", type: "PAGE_BREAK" }] }),
      Code.InvalidArgument,
      /^document\.blocks\[1\]\.id: duplicate block id "x"/,
    );
    await rejectsWith(
      bad({ blocks: [{ key: "k", type: "EMAIL", question: "a" }, { key: "k", type: "EMAIL", question: "b" }] }),
      Code.InvalidArgument,
      /^document\.blocks\[1\]\.key: duplicate key "k"/,
    );
    await rejectsWith(client.createForm({ workspaceId: "ws-alice", name: "" }, as(users.alice)), Code.InvalidArgument, /^name: /);
    await rejectsWith(client.createForm({ workspaceId: "ws-alice", name: "x".repeat(201) }, as(users.alice)), Code.InvalidArgument, /^name: /);
  });

  it("refuses, on create and update, a calculated field that does not parse or costs too much, naming it", async () => {
    const withExpression = (expression: string): JsonObject => ({ blocks: [], calculatedFields: [{ name: "slow", type: "NUMBER", expression }] });
    const costly = "l.all(a, l.all(b, l.all(c, a + b + c > 0)))";
    await rejectsWith(
      client.createForm({ workspaceId: "ws-alice", document: withExpression(costly) }, as(users.alice)),
      Code.InvalidArgument,
      "document.calculatedFields[0].expression: runs 3 comprehensions inside one another; at most 2",
    );
    const form = await newForm(users.alice, "ws-alice", { document: withExpression("1") });
    await rejectsWith(
      client.updateForm({ id: form.id, document: withExpression("1 +") }, as(users.alice)),
      Code.InvalidArgument,
      /^document\.calculatedFields\[0\]\.expression: does not parse: /,
    );
  });
});

describe("ListForms", () => {
  it("lists the caller's forms newest first, over every workspace or one, with paging", async () => {
    const a = await newForm(users.dave, "ws-dave-1", { name: "a" });
    const b = await newForm(users.dave, "ws-dave-2", { name: "b" });
    const c = await newForm(users.dave, "ws-dave-1", { name: "c" });
    const d = await newForm(users.dave, "ws-dave-2", { name: "d" });

    const all = await client.listForms({}, as(users.dave));
    assert.deepEqual(all.forms.map((f) => f.name), ["d", "c", "b", "a"]);
    assert.equal(all.hasMore, false);

    const one = await client.listForms({ workspaceId: "ws-dave-1" }, as(users.dave));
    assert.deepEqual(one.forms.map((f) => f.id), [c.id, a.id]);

    const page1 = await client.listForms({ page: 1, limit: 3 }, as(users.dave));
    assert.deepEqual(page1.forms.map((f) => f.id), [d.id, c.id, b.id]);
    assert.equal(page1.hasMore, true);
    const page2 = await client.listForms({ page: 2, limit: 3 }, as(users.dave));
    assert.deepEqual(page2.forms.map((f) => f.id), [a.id]);
    assert.equal(page2.hasMore, false);
    const exact = await client.listForms({ page: 1, limit: 4 }, as(users.dave));
    assert.equal(exact.forms.length, 4);
    assert.equal(exact.hasMore, false);
    const beyond = await client.listForms({ page: 9, limit: 3 }, as(users.dave));
    assert.deepEqual(beyond.forms, []);
    assert.equal(beyond.hasMore, false);

    // the Trash is left out
    await client.trashForm({ id: c.id }, as(users.dave));
    const afterTrash = await client.listForms({}, as(users.dave));
    assert.deepEqual(afterTrash.forms.map((f) => f.name), ["d", "b", "a"]);
  });

  it("shows each member the forms of shared workspaces, and nobody else's", async () => {
    const shared = await newForm(users.bob, "ws-shared", { name: "shared" });
    const bobs = await newForm(users.bob, "ws-bob", { name: "bob's" });
    const alice = await client.listForms({}, as(users.alice));
    const ids = alice.forms.map((f) => f.id);
    assert.ok(ids.includes(shared.id));
    assert.ok(!ids.includes(bobs.id));
    assert.ok(alice.forms.every((f) => ["ws-alice", "ws-alice-pro", "ws-shared"].includes(f.workspaceId)));
    const carol = await client.listForms({}, as(users.carol));
    assert.deepEqual(carol.forms, []);
  });

  it("answers NOT_FOUND for a foreign or unknown workspace, and checks paging", async () => {
    await rejectsWith(client.listForms({ workspaceId: "ws-bob" }, as(users.alice)), Code.NotFound, "workspace not found");
    await rejectsWith(client.listForms({ workspaceId: "ws-nope" }, as(users.alice)), Code.NotFound, "workspace not found");
    await rejectsWith(client.listForms({ limit: 501 }, as(users.alice)), Code.InvalidArgument, /limit/);
    await rejectsWith(client.listForms({ page: -1 }, as(users.alice)), Code.InvalidArgument, /page/);
    await rejectsWith(client.listForms({}), Code.Unauthenticated);
  });
});

describe("TrashForm by role", () => {
  it("the owner and admins delete a workspace's forms; a member may not, and the form stays", async () => {
    const byOwner = await newForm(users.erin, "ws-team", { name: "owner deletes" });
    const byAdmin = await newForm(users.erin, "ws-team", { name: "admin deletes" });
    const refused = await rejectsWith(client.trashForm({ id: byAdmin.id }, as(users.erin)), Code.PermissionDenied);
    assert.equal(refused.rawMessage, "only the workspace's owner or an admin may delete its forms");
    assert.equal((await client.getForm({ id: byAdmin.id }, as(users.erin))).form?.trashedAt, undefined);
    await client.trashForm({ id: byOwner.id }, as(users.alice));
    await client.trashForm({ id: byAdmin.id }, as(users.bob));
    const trash = await client.listForms({ workspaceId: "ws-team", trashed: true }, as(users.erin));
    assert.deepEqual(trash.forms.map((f) => f.id).sort(), [byOwner.id, byAdmin.id].sort());
  });
});

describe("ListForms of the Trash (trashed: true)", () => {
  it("lists only trashed forms of the caller's workspaces, most recently trashed first", async () => {
    const x = await newForm(users.bob, "ws-shared", { name: "to trash first" });
    const y = await newForm(users.bob, "ws-shared", { name: "to trash second" });
    const kept = await newForm(users.bob, "ws-shared", { name: "kept" });
    await client.trashForm({ id: x.id }, as(users.bob));
    await new Promise((r) => setTimeout(r, 5));
    await client.trashForm({ id: y.id }, as(users.alice));

    const trash = await client.listForms({ workspaceId: "ws-shared", trashed: true }, as(users.alice));
    const ids = trash.forms.map((f) => f.id);
    assert.deepEqual(ids.slice(0, 2), [y.id, x.id]);
    assert.ok(!ids.includes(kept.id));
    assert.ok(trash.forms.every((f) => f.trashedAt !== undefined));
    const everywhere = await client.listForms({ trashed: true }, as(users.bob));
    assert.ok(everywhere.forms.some((f) => f.id === x.id));
    assert.ok(!(await client.listForms({ workspaceId: "ws-shared" }, as(users.alice))).forms.some((f) => f.id === y.id));
    assert.deepEqual((await client.listForms({ trashed: true }, as(users.carol))).forms, []);
    await rejectsWith(client.listForms({ workspaceId: "ws-shared", trashed: true }, as(users.carol)), Code.NotFound, "workspace not found");

    // Restored, it leaves the Trash and comes back in its status.
    const restored = await client.restoreForm({ id: x.id }, as(users.alice));
    assert.equal(restored.form?.status, FormStatus.DRAFT);
    const after = await client.listForms({ workspaceId: "ws-shared", trashed: true }, as(users.alice));
    assert.ok(!after.forms.some((f) => f.id === x.id));
    assert.ok(after.forms.some((f) => f.id === y.id));
  });
});

describe("GetForm and ListQuestions", () => {
  it("reads the form and its questions", async () => {
    const form = await newForm(users.alice, "ws-shared", { document: signUp });
    const got = await client.getForm({ id: form.id }, as(users.bob));
    assert.deepEqual(got.form, form);
    const { questions } = await client.listQuestions({ formId: form.id }, as(users.alice));
    const [name, email, plan, cv] = blocks(form.document).filter((b) => b.key);
    assert.deepEqual(
      questions.map(({ id, type, label, key }) => ({ id, type, label, key })),
      [
        { id: "b1", type: "SHORT_TEXT", label: "Your full name", key: "q_name" },
        { id: email.id, type: "EMAIL", label: "email", key: email.key },
        { id: plan.id, type: "MULTIPLE_CHOICE", label: "Plan", key: plan.key },
        { id: cv.id, type: "FILE", label: "Upload your CV", key: cv.key },
        { id: "hidden:utm_source", type: "HIDDEN_FIELDS", label: "utm_source", key: "hidden:utm_source" },
        { id: "meta:country", type: "RESPONDENT_COUNTRY", label: "Respondent country", key: "meta:country" },
        { id: "calculated:score", type: "CALCULATED_FIELD", label: "score", key: "calculated:score" },
      ],
    );
    assert.equal(name.id, "b1");
  });

  it("answers the same NOT_FOUND for missing ids, after asking identity as for another's form (the time tells nothing)", async () => {
    const asked = identityCallers.length;
    await rejectsWith(client.getForm({ id: "nope" }, as(users.alice)), Code.NotFound, "form not found");
    assert.deepEqual(identityCallers.slice(asked), [users.alice], "identity is asked once, as for a form of another workspace");
    await rejectsWith(client.getForm({ id: "" }, as(users.alice)), Code.NotFound, "form not found");
    await rejectsWith(client.listQuestions({ formId: "nope" }, as(users.alice)), Code.NotFound, "form not found");
    await rejectsWith(client.getForm({ id: "nope" }), Code.Unauthenticated);
  });
});

describe("masking: another person's form is NOT_FOUND in every RPC", () => {
  it("get, list questions, update, trash, set status and restore", async () => {
    const form = await newForm(users.bob, "ws-bob", { document: signUp });
    const missing = async (call: Promise<unknown>) => rejectsWith(call, Code.NotFound, "form not found");
    const unknown = "doesNotExist0000";
    for (const id of [form.id, unknown]) {
      await missing(client.getForm({ id }, as(users.alice)));
      await missing(client.listQuestions({ formId: id }, as(users.alice)));
      await missing(client.updateForm({ id, name: "mine now" }, as(users.alice)));
      await missing(client.updateForm({ id }, as(users.alice)));
      await missing(client.trashForm({ id }, as(users.alice)));
      await missing(client.setFormStatus({ id, status: FormStatus.PUBLISHED }, as(users.alice)));
      await missing(client.restoreForm({ id }, as(users.alice)));
    }
    // nothing changed
    const still = await client.getForm({ id: form.id }, as(users.bob));
    assert.equal(still.form?.name, "Event sign-up");
    assert.equal(still.form?.status, FormStatus.DRAFT);
    assert.equal(still.form?.trashedAt, undefined);
    // a trashed foreign form is not restored either
    await client.trashForm({ id: form.id }, as(users.bob));
    await missing(client.restoreForm({ id: form.id }, as(users.alice)));
    await missing(client.restoreForm({ id: form.id }, as(users.carol)));
  });
});

describe("UpdateForm", () => {
  it("renames; an empty update returns the form unchanged", async () => {
    const form = await newForm(users.alice, "ws-alice");
    const same = await client.updateForm({ id: form.id }, as(users.alice));
    assert.deepEqual(same.form, form);
    const renamed = await client.updateForm({ id: form.id, name: "Renamed" }, as(users.alice));
    assert.equal(renamed.form?.name, "Renamed");
    assert.ok(timestampDate(renamed.form!.updatedAt!) > timestampDate(form.updatedAt!));
    assert.deepEqual(renamed.form?.createdAt, form.createdAt);
    await rejectsWith(client.updateForm({ id: form.id, name: " " }, as(users.alice)), Code.InvalidArgument, /^name: must not be blank/);
    await rejectsWith(client.updateForm({ id: form.id, name: "x" }), Code.Unauthenticated);
  });

  it("takes the receipt question by block id or key, stores its block id, and refuses one that is unknown or no EMAIL question", async () => {
    const form = await newForm(users.alice, "ws-alice", { document: signUp });
    const [, name, email] = blocks(form.document);
    assert.equal(email.type, "EMAIL");
    const receiptTo = (receiptQuestionId: string, document?: JsonObject) =>
      client.updateForm({ id: form.id, document, settings: { notifications: { owner: false, members: [], receiptQuestionId } } }, as(users.alice));
    const byKey = (await receiptTo(email.key)).form!;
    assert.equal((byKey.settings as { notifications: { receiptQuestionId: string } }).notifications.receiptQuestionId, email.id);
    const byId = (await receiptTo(email.id)).form!;
    assert.equal((byId.settings as { notifications: { receiptQuestionId: string } }).notifications.receiptQuestionId, email.id);
    const field = /^settings\.notifications\.receiptQuestionId: /;
    await rejectsWith(receiptTo("no_such_question"), Code.InvalidArgument, /^settings\.notifications\.receiptQuestionId: no question of the form has the id or key "no_such_question"$/);
    await rejectsWith(receiptTo(name.key), Code.InvalidArgument, new RegExp(`${field.source}"${name.key}" is a SHORT_TEXT question; a receipt needs an EMAIL question$`));
    // With a new document in the same update, the question is looked for in its blocks.
    await rejectsWith(receiptTo(email.key, { blocks: [{ id: name.id, type: "SHORT_TEXT", question: "Name" }] }), Code.InvalidArgument, field);
    const kept = (await client.getForm({ id: form.id }, as(users.alice))).form!;
    assert.equal((kept.settings as { notifications: { receiptQuestionId: string } }).notifications.receiptQuestionId, email.id, "a refused update changes nothing");
    assert.equal(blocks(kept.document).length, blocks(form.document).length);
  });

  it("replaces a draft's document in place (version 1) and keeps keys across renames", async () => {
    const form = await newForm(users.alice, "ws-alice", { document: signUp });
    const before = blocks(form.document);
    const email = before[2];
    const next: JsonObject = {
      blocks: [
        { id: email.id, key: "q_changed", type: "EMAIL", question: "Work email", fieldName: "work_email" },
        { type: "NUMBER", question: "Age", min: 0 },
      ],
    };
    const updated = (await client.updateForm({ id: form.id, document: next }, as(users.alice))).form!;
    assert.equal(updated.version, 1);
    assert.equal(updated.status, FormStatus.DRAFT);
    const after = blocks(updated.document);
    assert.equal(after.length, 2);
    assert.equal(after[0].key, email.key, "the key follows the block id, whatever was sent");
    assert.equal(after[0].question, "Work email");
    assert.match(after[1].key, /^q_[a-z0-9]{8}$/);
    assert.equal(updated.document?.title, undefined, "the document is replaced as a unit");
    assert.equal(updated.name, "Event sign-up", "the name is not derived again");
    const rows = await versionRows(form.id);
    assert.deepEqual(rows.map((r) => r.version), [1]);
    assert.deepEqual(rows[0].document, updated.document);

    // the removed block b1 comes back with its old key; its key cannot be taken by another block meanwhile
    const again = await client.updateForm(
      {
        id: form.id,
        document: {
          blocks: [
            { key: "q_name", type: "SHORT_TEXT", question: "Impostor" },
            { id: "b1", type: "SHORT_TEXT", question: "Name, again" },
          ],
        },
      },
      as(users.alice),
    );
    const [impostor, b1] = blocks(again.form?.document);
    assert.equal(b1.key, "q_name");
    assert.notEqual(impostor.key, "q_name");
    const questions = (await client.listQuestions({ formId: form.id }, as(users.alice))).questions;
    assert.deepEqual(questions.slice(0, 2).map((q) => q.key), [impostor.key, "q_name"]);
  });

  it("makes a new version for every document change of a published or closed form", async () => {
    const form = await newForm(users.alice, "ws-alice", { document: signUp });
    await client.setFormStatus({ id: form.id, status: FormStatus.PUBLISHED }, as(users.alice));
    const doc1 = form.document!;
    const changed: JsonObject = { ...doc1, title: "Sign-up, v2" };
    const v2 = (await client.updateForm({ id: form.id, document: changed }, as(users.alice))).form!;
    assert.equal(v2.version, 2);
    assert.equal(v2.status, FormStatus.PUBLISHED, "UpdateForm never changes status");
    assert.deepEqual(
      blocks(v2.document).map((b) => b.key),
      blocks(doc1).map((b) => b.key),
      "keys are stable across versions",
    );

    // the same document again is no change and no version
    const same = (await client.updateForm({ id: form.id, document: v2.document }, as(users.alice))).form!;
    assert.equal(same.version, 2);
    assert.deepEqual(same.updatedAt, v2.updatedAt);

    await client.setFormStatus({ id: form.id, status: FormStatus.CLOSED }, as(users.alice));
    const v3 = (await client.updateForm({ id: form.id, document: { blocks: [] } }, as(users.alice))).form!;
    assert.equal(v3.version, 3);
    assert.equal(v3.status, FormStatus.CLOSED);

    const rows = await versionRows(form.id);
    assert.deepEqual(rows.map((r) => r.version), [1, 2, 3]);
    assert.deepEqual(rows[0].document, doc1, "earlier versions are kept as they were");
    assert.equal(rows[1].document.title, "Sign-up, v2");
    assert.deepEqual(rows[2].document, { blocks: [] });
  });

  it("gives concurrent changes of a published form one version each", async () => {
    const form = await newForm(users.alice, "ws-alice");
    await client.setFormStatus({ id: form.id, status: FormStatus.PUBLISHED }, as(users.alice));
    await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        client.updateForm({ id: form.id, document: { title: `t${i}`, blocks: [] } }, as(users.alice)),
      ),
    );
    const rows = await versionRows(form.id);
    assert.deepEqual(rows.map((r) => r.version), [1, 2, 3, 4, 5, 6]);
    const got = (await client.getForm({ id: form.id }, as(users.alice))).form!;
    assert.equal(got.version, 6);
    assert.deepEqual(got.document, rows[5].document);
  });

  it("refuses invalid documents and settings with the path", async () => {
    const form = await newForm(users.alice, "ws-alice");
    await rejectsWith(
      client.updateForm({ id: form.id, document: { blocks: [{ type: "RATING", question: "Stars", max: 11 }] } }, as(users.alice)),
      Code.InvalidArgument,
      /^document\.blocks\[0\]\.max: /,
    );
    await rejectsWith(
      client.updateForm({ id: form.id, settings: { colours: "dark" } }, as(users.alice)),
      Code.InvalidArgument,
      "settings.colours: unknown property",
    );
    await rejectsWith(
      client.updateForm({ id: form.id, settings: { redirectUrl: "javascript:alert(1)" } }, as(users.alice)),
      Code.InvalidArgument,
      /^settings\.redirectUrl: /,
    );
    const unchanged = (await client.getForm({ id: form.id }, as(users.alice))).form!;
    assert.deepEqual(unchanged, form);
  });

  it("merges settings and reports them in full", async () => {
    const form = await newForm(users.alice, "ws-alice");
    const one = (await client.updateForm({ id: form.id, settings: { submitLabel: "Send", redirectUrl: "https://example.com/thanks" } }, as(users.alice))).form!;
    assert.deepEqual(one.settings, { ...form.settings, submitLabel: "Send", redirectUrl: "https://example.com/thanks" });
    const two = (await client.updateForm({ id: form.id, settings: { saveProgress: false, redirectUrl: null } }, as(users.alice))).form!;
    assert.deepEqual(two.settings, { ...form.settings, submitLabel: "Send", saveProgress: false });
    const three = (await client.updateForm({ id: form.id, settings: {} }, as(users.alice))).form!;
    assert.deepEqual(three, two);
  });

  it("keeps a password as its hash and a captcha's secret, answering neither; GetPublicForm hands them to the gateway", async () => {
    const form = await newForm(users.alice, "ws-alice");
    const update = (settings: JsonObject) => client.updateForm({ id: form.id, settings }, as(users.alice)).then((res) => res.form!);
    const keys = { provider: "turnstile", siteKey: "0x4AAAAAAAsite", secret: "0x4AAAAAAAsecretkey1234" };
    const protectedForm = await update({ password: "open sesame", captcha: keys });
    assert.equal(protectedForm.settings?.password, true);
    assert.deepEqual(protectedForm.settings?.captcha, { provider: "turnstile", siteKey: "0x4AAAAAAAsite", secretHint: "…1234" });
    const answered = JSON.stringify(protectedForm.settings);
    assert.ok(!answered.includes("open sesame") && !answered.includes("secretkey") && !answered.includes("scrypt"), "neither is answered");
    await client.setFormStatus({ id: form.id, status: FormStatus.PUBLISHED }, as(users.alice));
    const { access } = await client.getPublicForm({ id: form.id });
    assert.match(access!.passwordHash, /^scrypt\$/);
    assert.equal(access!.captchaSecret, keys.secret);
    assert.ok(await verifyPassword("open sesame", access!.passwordHash));

    // What a read answers goes back unchanged (the app sends its settings whole): the hash and secret stay.
    const again = await update(protectedForm.settings as JsonObject);
    assert.deepEqual(again.settings, protectedForm.settings);
    assert.deepEqual((await client.getPublicForm({ id: form.id })).access, access);
    await rejectsWith(update({ captcha: { provider: "hcaptcha", siteKey: "10000000-ffff" } }), Code.InvalidArgument, "settings.captcha.secret: is required (the hcaptcha secret key)");
    await rejectsWith(update({ proofOfWork: { workFactor: 100 } }), Code.InvalidArgument, /one captcha/);

    const cleared = await update({ password: null, captcha: null });
    assert.equal(cleared.settings?.password, false);
    assert.equal(cleared.settings?.captcha, null);
    assert.deepEqual((await client.getPublicForm({ id: form.id })).access, { ...access, passwordHash: "", captchaSecret: "", $typeName: access!.$typeName });
    await rejectsWith(update({ password: true }), Code.InvalidArgument, /the form has none/);
    await rejectsWith(update({ password: "abc" }), Code.InvalidArgument, /^settings\.password/);
  });

  it("removing branding needs the workspace's entitlement", async () => {
    const free = await newForm(users.alice, "ws-alice");
    await rejectsWith(
      client.updateForm({ id: free.id, name: "changed?", settings: { branding: false } }, as(users.alice)),
      Code.PermissionDenied,
      "removing branding needs a plan with the branding entitlement",
    );
    const untouched = (await client.getForm({ id: free.id }, as(users.alice))).form!;
    assert.equal(untouched.name, "Untitled form", "a refused update changes nothing");
    assert.equal(untouched.settings?.branding, true);
    const keep = (await client.updateForm({ id: free.id, settings: { branding: true } }, as(users.alice))).form!;
    assert.equal(keep.settings?.branding, true);

    const pro = await newForm(users.alice, "ws-alice-pro");
    const removed = (await client.updateForm({ id: pro.id, settings: { branding: false } }, as(users.alice))).form!;
    assert.equal(removed.settings?.branding, false);
  });
});

describe("Trash and restore", () => {
  it("a trashed form is NOT_FOUND until restored, in the status it had", async () => {
    const form = await newForm(users.alice, "ws-alice", { document: signUp });
    await client.setFormStatus({ id: form.id, status: FormStatus.PUBLISHED }, as(users.alice));
    const res = await client.trashForm({ id: form.id }, as(users.alice));
    assert.deepEqual(res, create(TrashFormResponseSchema, {}));

    const missing = (call: Promise<unknown>) => rejectsWith(call, Code.NotFound, "form not found");
    await missing(client.getForm({ id: form.id }, as(users.alice)));
    await missing(client.listQuestions({ formId: form.id }, as(users.alice)));
    await missing(client.updateForm({ id: form.id, name: "x" }, as(users.alice)));
    await missing(client.trashForm({ id: form.id }, as(users.alice)));
    await missing(client.setFormStatus({ id: form.id, status: FormStatus.CLOSED }, as(users.alice)));
    await missing(client.setFormStatus({ id: form.id, status: FormStatus.CLOSED }));

    const restored = (await client.restoreForm({ id: form.id }, as(users.alice))).form!;
    assert.equal(restored.status, FormStatus.PUBLISHED);
    assert.equal(restored.trashedAt, undefined);
    const got = (await client.getForm({ id: form.id }, as(users.alice))).form!;
    assert.deepEqual(got, restored);
  });

  it("an operator (no caller) restores; restoring a form outside the Trash returns it unchanged", async () => {
    const form = await newForm(users.bob, "ws-bob");
    const unchanged = (await client.restoreForm({ id: form.id })).form!;
    assert.deepEqual(unchanged, form);
    await client.trashForm({ id: form.id }, as(users.bob));
    const trashedRow = await orm.em.getConnection().execute(`select trashed_at, status from "forms"."forms" where id = ?`, [form.id]);
    assert.equal(Number.isNaN(Date.parse(String(trashedRow[0].trashed_at))), false, "trashed_at is set");
    assert.equal(trashedRow[0].status, "draft");
    const restored = (await client.restoreForm({ id: form.id })).form!;
    assert.equal(restored.status, FormStatus.DRAFT);
    assert.equal(restored.trashedAt, undefined);
    await rejectsWith(client.restoreForm({ id: "nope" }), Code.NotFound, "form not found");
  });

  it("trashing needs a caller", async () => {
    const form = await newForm(users.bob, "ws-bob");
    await rejectsWith(client.trashForm({ id: form.id }), Code.Unauthenticated);
  });
});

describe("SetFormStatus", () => {
  it("publishes, closes and reopens; never back to draft", async () => {
    const form = await newForm(users.alice, "ws-shared");
    const set = (status: FormStatus, user?: string) =>
      client.setFormStatus({ id: form.id, status }, user ? as(user) : undefined).then((r) => r.form!);

    await rejectsWith(set(FormStatus.CLOSED, users.alice), Code.FailedPrecondition, /draft form cannot be closed/);
    const drafted = await set(FormStatus.DRAFT, users.alice);
    assert.equal(drafted.status, FormStatus.DRAFT);
    assert.deepEqual(drafted.updatedAt, form.updatedAt, "setting the current status is a no-op");

    const published = await set(FormStatus.PUBLISHED, users.bob);
    assert.equal(published.status, FormStatus.PUBLISHED);
    assert.equal(published.version, 1, "publishing does not make a version");
    const again = await set(FormStatus.PUBLISHED, users.alice);
    assert.deepEqual(again, published);
    await rejectsWith(set(FormStatus.DRAFT, users.alice), Code.FailedPrecondition, "a published form cannot go back to draft");

    const closed = await set(FormStatus.CLOSED);
    assert.equal(closed.status, FormStatus.CLOSED, "an operator (no caller) may close");
    await rejectsWith(set(FormStatus.DRAFT), Code.FailedPrecondition, /cannot go back to draft/);
    const reopened = await set(FormStatus.PUBLISHED, users.alice);
    assert.equal(reopened.status, FormStatus.PUBLISHED);
  });

  it("refuses an unspecified status and unknown forms", async () => {
    const form = await newForm(users.alice, "ws-alice");
    await rejectsWith(client.setFormStatus({ id: form.id, status: FormStatus.UNSPECIFIED }, as(users.alice)), Code.InvalidArgument, /status/);
    await rejectsWith(client.setFormStatus({ id: form.id, status: 42 as FormStatus }), Code.InvalidArgument, /status/);
    await rejectsWith(client.setFormStatus({ id: "nope", status: FormStatus.PUBLISHED }), Code.NotFound, "form not found");
  });
});

describe("GetPublicForm", () => {
  it("shows published and closed forms to anyone; drafts, the Trash and unknown ids are NOT_FOUND", async () => {
    const form = await newForm(users.alice, "ws-alice", { document: signUp });
    const missing = (id: string) => rejectsWith(client.getPublicForm({ id }), Code.NotFound, "form not found");
    await missing(form.id);

    const published = (await client.setFormStatus({ id: form.id, status: FormStatus.PUBLISHED }, as(users.alice))).form!;
    const lookups = entitlementLookups.length;
    const seen = await client.getPublicForm({ id: form.id });
    assert.deepEqual(seen.form, published);
    assert.equal(seen.showBranding, true);
    assert.equal(entitlementLookups.length, lookups, "branding kept: identity is not asked");
    const withCaller = await client.getPublicForm({ id: form.id }, as(users.carol));
    assert.deepEqual(withCaller.form, published, "a caller, even a stranger, changes nothing");

    const closed = (await client.setFormStatus({ id: form.id, status: FormStatus.CLOSED }, as(users.alice))).form!;
    assert.deepEqual((await client.getPublicForm({ id: form.id })).form, closed);

    await client.trashForm({ id: form.id }, as(users.alice));
    await missing(form.id);
    await client.restoreForm({ id: form.id }, as(users.alice));
    assert.equal((await client.getPublicForm({ id: form.id })).form?.status, FormStatus.CLOSED);

    await missing("doesNotExist0000");
    await missing("");
  });

  it("hides branding only while the workspace's plan allows it", async () => {
    const form = await newForm(users.alice, "ws-erin-pro");
    await client.updateForm({ id: form.id, settings: { branding: false } }, as(users.alice));
    await client.setFormStatus({ id: form.id, status: FormStatus.PUBLISHED }, as(users.alice));
    try {
      const pro = await client.getPublicForm({ id: form.id });
      assert.equal(pro.form?.settings?.branding, false);
      assert.equal(pro.showBranding, false);
      assert.equal(entitlementLookups.at(-1), "ws-erin-pro");

      fakeIdentity.setPlan("ws-erin-pro", Plan.FREE);
      const downgraded = await client.getPublicForm({ id: form.id });
      assert.equal(downgraded.form?.settings?.branding, false, "the setting is kept for when the plan comes back");
      assert.equal(downgraded.showBranding, true);
    } finally {
      fakeIdentity.setPlan("ws-erin-pro", Plan.PRO);
    }
    assert.equal((await client.getPublicForm({ id: form.id })).showBranding, false);
  });
});

describe("GetFormVersion", () => {
  it("returns any version of the document, whatever the form's status, even in the Trash", async () => {
    const form = await newForm(users.bob, "ws-bob", { document: signUp });
    const v1 = await client.getFormVersion({ formId: form.id, version: 1 });
    assert.equal(v1.formId, form.id);
    assert.equal(v1.workspaceId, "ws-bob");
    assert.equal(v1.name, "Event sign-up");
    assert.equal(v1.version, 1);
    assert.deepEqual(v1.document, form.document, "a draft's version 1");

    await client.setFormStatus({ id: form.id, status: FormStatus.PUBLISHED }, as(users.bob));
    const v2doc = (await client.updateForm({ id: form.id, name: "Renamed", document: { title: "v2", blocks: [] } }, as(users.bob))).form!
      .document;
    await client.setFormStatus({ id: form.id, status: FormStatus.CLOSED }, as(users.bob));
    await client.trashForm({ id: form.id }, as(users.bob));

    const again = await client.getFormVersion({ formId: form.id, version: 1 });
    assert.deepEqual(again.document, form.document, "earlier versions stay as they were");
    assert.equal(again.name, "Renamed", "the form's current name");
    const v2 = await client.getFormVersion({ formId: form.id, version: 2 });
    assert.equal(v2.version, 2);
    assert.deepEqual(v2.document, v2doc);
  });

  it("answers NOT_FOUND for unknown forms and versions", async () => {
    const form = await newForm(users.bob, "ws-bob");
    await rejectsWith(client.getFormVersion({ formId: "doesNotExist0000", version: 1 }), Code.NotFound, "form not found");
    await rejectsWith(client.getFormVersion({ formId: "", version: 1 }), Code.NotFound, "form not found");
    for (const version of [0, -1, 2]) {
      await rejectsWith(client.getFormVersion({ formId: form.id, version }), Code.NotFound, "form version not found");
    }
  });
});

describe("SetResponseCounts", () => {
  const countOf = async (id: string) => (await client.getForm({ id }, as(users.alice))).form!.responseCount;

  it("sets each form's count when its revision is newer, leaving updated_at alone", async () => {
    const form = await newForm(users.alice, "ws-alice");
    const other = await newForm(users.alice, "ws-alice");
    const set = async (counts: { formId: string; count: bigint; revision: bigint }[]) => (await client.setResponseCounts({ counts })).updated;
    assert.equal(await set([{ formId: form.id, count: 6n, revision: 2n }, { formId: other.id, count: 1n, revision: 1n }]), 2);
    assert.deepEqual([await countOf(form.id), await countOf(other.id)], [6n, 1n]);
    assert.equal(await set([{ formId: form.id, count: 4n, revision: 1n }]), 0, "an older revision comes too late");
    assert.equal(await set([{ formId: form.id, count: 6n, revision: 2n }]), 0, "a repeat changes nothing");
    assert.equal(await countOf(form.id), 6n);
    assert.equal(await set([{ formId: form.id, count: 5n, revision: 3n }, { formId: form.id, count: 9n, revision: 4n }]), 1, "the newest of one call");
    assert.equal(await countOf(form.id), 9n);
    const got = (await client.getForm({ id: form.id }, as(users.alice))).form!;
    assert.deepEqual(got.updatedAt, form.updatedAt);

    assert.equal(await set([{ formId: "doesNotExist0000", count: 1n, revision: 1n }]), 0, "unknown forms are skipped");
    assert.equal(await set([]), 0);
    await client.trashForm({ id: form.id }, as(users.alice));
    assert.equal(await set([{ formId: form.id, count: 0n, revision: 5n }]), 1, "a trashed form keeps its count");
  });

  it("skips (and logs) counts without a form id, out of range, or without a revision, applying the others", async () => {
    const form = await newForm(users.alice, "ws-alice");
    const other = await newForm(users.alice, "ws-alice");
    warnings.length = 0;
    const bad = [
      { formId: "", count: 1n, revision: 1n },
      { formId: form.id, count: -1n, revision: 1n },
      { formId: form.id, count: 2n ** 62n, revision: 2n },
      { formId: form.id, count: 1n, revision: 0n },
    ];
    const { updated } = await client.setResponseCounts({ counts: [...bad, { formId: other.id, count: 4n, revision: 1n }] });
    assert.equal(updated, 1, "the good count of the batch is taken");
    assert.deepEqual([await countOf(form.id), await countOf(other.id)], [0n, 4n]);
    const skipped = warnings.filter((w) => w.msg === "response count skipped");
    assert.deepEqual(
      skipped.map((w) => [w.formId, w.problem]),
      [
        ["", "no form id"],
        [form.id, "count out of range"],
        [form.id, "count out of range"],
        [form.id, "revision not positive"],
      ],
    );
    assert.equal((await client.setResponseCounts({ counts: bad })).updated, 0, "a batch of bad counts only is answered, not refused");
  });
});

describe("identity failures", () => {
  it("an unreachable identity is UNAVAILABLE, without its details", async () => {
    const broken = new FakeIdentity();
    broken.failWith = (method) =>
      method === "listWorkspaces" ? new ConnectError("boom", Code.Internal) : new ConnectError("connect ECONNREFUSED 10.0.0.7:8081", Code.Unavailable);
    const handlers = createFormsHandlers({ orm, identity: broken.client });
    const brokenClient = createClient(FormsService, createRouterTransport((router) => routes(router, handlers)));
    await rejectsWith(brokenClient.createForm({ workspaceId: "ws-alice" }, as(users.alice)), Code.Unavailable, "identity is unavailable");
    await rejectsWith(brokenClient.listForms({}, as(users.alice)), Code.Unavailable, "identity is unavailable");
    // operator calls do not need identity
    const form = await newForm(users.alice, "ws-alice");
    const published = await brokenClient.setFormStatus({ id: form.id, status: FormStatus.PUBLISHED });
    assert.equal(published.form?.status, FormStatus.PUBLISHED);
    // a public form keeping its branding does not need identity; one without branding does
    assert.equal((await brokenClient.getPublicForm({ id: form.id })).showBranding, true);
    const unbranded = await newForm(users.alice, "ws-alice-pro");
    await client.updateForm({ id: unbranded.id, settings: { branding: false } }, as(users.alice));
    await client.setFormStatus({ id: unbranded.id, status: FormStatus.PUBLISHED }, as(users.alice));
    await rejectsWith(brokenClient.getPublicForm({ id: unbranded.id }), Code.Unavailable, "identity is unavailable");
  });
});

describe("form events", () => {
  /** The form's outbox events, oldest first, as [type, status, version]. */
  async function formEvents(formId: string) {
    const rows = await orm.em.fork().find(FormEventEntity, { formId }, { orderBy: { id: "asc" } });
    return rows.map((row) => {
      const event = fromBinary(EventSchema, row.payload);
      const value = event.event.value as FormChanged;
      assert.equal(value.eventId, row.eventId);
      return [eventTypeOf(event), value.status, value.version, value.formName];
    });
  }

  it("writes FORM_PUBLISHED, FORM_CLOSED and FORM_DELETED with the change, and nothing for a change that is none", async () => {
    const form = await newForm(users.alice, "ws-alice", { name: "Evented" });
    await client.setFormStatus({ id: form.id, status: FormStatus.PUBLISHED }, as(users.alice));
    await client.setFormStatus({ id: form.id, status: FormStatus.PUBLISHED }, as(users.alice));
    await client.setFormStatus({ id: form.id, status: FormStatus.CLOSED }, as(users.alice));
    await rejectsWith(client.setFormStatus({ id: form.id, status: FormStatus.DRAFT }, as(users.alice)), Code.FailedPrecondition);
    await client.trashForm({ id: form.id }, as(users.alice));
    assert.deepEqual(await formEvents(form.id), [
      ["FORM_PUBLISHED", "published", 1, "Evented"],
      ["FORM_CLOSED", "closed", 1, "Evented"],
      ["FORM_DELETED", "closed", 1, "Evented"],
    ]);
  });

  it("are forwarded to submissions in order, once each; a failed call leaves them for the next round", async () => {
    const form = await newForm(users.alice, "ws-alice");
    await client.setFormStatus({ id: form.id, status: FormStatus.PUBLISHED }, as(users.alice));
    await client.setFormStatus({ id: form.id, status: FormStatus.CLOSED }, as(users.alice));
    const received: [string, string][] = [];
    let down = true;
    const submissions = createClient(
      SubmissionsService,
      createRouterTransport((router) =>
        router.service(SubmissionsService, {
          recordFormEvent(req) {
            if (down) throw new ConnectError("submissions down", Code.Unavailable);
            received.push([eventFacts(req.event!).formId, eventTypeOf(req.event!)]);
            return {};
          },
        }),
      ),
    );
    const forwarder = startEventForwarder({ orm, submissions, logger: createLogger("forms-test", "silent"), pollIntervalMs: 60_000 });
    try {
      await assert.rejects(forwarder.forwardOnce(), /submissions down/);
      down = false;
      // Earlier tests' events are forwarded too (forms side by side): this form's come in order.
      while ((await forwarder.forwardOnce()) > 0);
      assert.deepEqual(received.filter(([formId]) => formId === form.id).map(([, type]) => type), ["FORM_PUBLISHED", "FORM_CLOSED"]);
      assert.equal(await forwarder.forwardOnce(), 0, "each once");
    } finally {
      await forwarder.stop();
    }
  });
});

describe("callers' workspaces held while identity's notices are listened for", () => {
  it("asks identity once per caller and workspace; a notice, or a loss of the notices, makes it ask again; non-members are asked about every time", async () => {
    const callerWorkspaces = new NoticeKeptCache<Workspace>();
    callerWorkspaces.listening();
    const handlers = createFormsHandlers({ orm, identity: fakeIdentity.client, now: () => new Date((clock += 1000)), callerWorkspaces });
    const held = createClient(FormsService, createRouterTransport((router) => routes(router, handlers)));
    const form = await newForm(users.alice, "ws-team");
    const asked = () => identityCallers.length;
    const before = asked();
    for (let i = 0; i < 3; i++) assert.equal((await held.getForm({ id: form.id }, as(users.erin))).form?.id, form.id);
    assert.equal(asked() - before, 1);
    for (let i = 0; i < 2; i++) await rejectsWith(held.getForm({ id: form.id }, as(users.carol)), Code.NotFound, "form not found");
    assert.equal(asked() - before, 3);
    // Erin leaves the team: the notice drops what was held for the workspace.
    const team = fakeIdentity.workspaces.find((w) => w.workspace.id === "ws-team")!;
    team.members = team.members.filter((m) => m !== users.erin);
    callerWorkspaces.forgetWhere((workspace) => workspace.id === "ws-team");
    await rejectsWith(held.getForm({ id: form.id }, as(users.erin)), Code.NotFound, "form not found");
    team.members.push(users.erin);
    callerWorkspaces.lost();
    for (let i = 0; i < 2; i++) await held.getForm({ id: form.id }, as(users.erin));
    assert.equal(asked() - before, 6);
  });
});

describe("change notices for the forms submissions holds", () => {
  it("notifies the form's id when what a submit reads changes, once committed; not when its response count does", async () => {
    const notices = await recordChannel(database.databaseUrl, formChangesChannel);
    try {
      const form = await newForm(users.alice, "ws-alice");
      assert.deepEqual(await notices.settled(0), [], "a new form is nobody's yet");
      await client.setFormStatus({ id: form.id, status: FormStatus.PUBLISHED }, as(users.alice));
      assert.deepEqual(await notices.settled(1), [form.id], "published");
      await client.updateForm({ id: form.id, settings: { closesAt: "2030-01-01T00:00:00Z" } }, as(users.alice));
      assert.deepEqual(await notices.settled(1), [form.id], "settings");
      await client.setResponseCounts({ counts: [{ formId: form.id, count: 3n, revision: 1n }] });
      assert.deepEqual(await notices.settled(0), [], "the response count is not a change respondents see");
      await client.setFormStatus({ id: form.id, status: FormStatus.CLOSED }, as(users.alice));
      assert.deepEqual(await notices.settled(1), [form.id], "closed");
      await client.trashForm({ id: form.id }, as(users.alice));
      assert.deepEqual(await notices.settled(1), [form.id], "moved to the Trash");
    } finally {
      await notices.stop();
    }
  });
});
