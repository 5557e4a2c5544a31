import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import { create, toJson, type JsonObject } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate, ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { maxUploadBytes, type FormDocument } from "@formsvc/form-document";
import { asCaller, maxSavesPerCall } from "@formsvc/platform/caller.ts";
import { connectErrorOf } from "@formsvc/platform/rpc-error-items.ts";
import { BadRequestSchema } from "@formsvc/proto/google/rpc/error_details_pb.js";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { NoticeKeptCache } from "@formsvc/platform/notice-kept-cache.ts";
import type { Form } from "@formsvc/proto/forms/v1/forms_pb.js";
import { runWithRequestId } from "@formsvc/platform/request-context.ts";
import { uploadRequests } from "@formsvc/platform/upload-stream.ts";
import { assertMigrationsApplyOnce, createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { decodeEvent, eventFacts } from "@formsvc/platform/events.ts";
import { EventSchema, type ResponseCompleted } from "@formsvc/proto/events/v1/events_pb.js";
import {
  SaveResponseRequestSchema,
  type SaveResponsesItemSchema,
  SubmissionFilter,
  SubmissionsService,
  type Submission,
} from "@formsvc/proto/submissions/v1/submissions_pb.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Logger } from "@formsvc/platform/logger.ts";
import { createCompletionNotifier } from "../outbox/completion-notifier.ts";
import { entities } from "../entities/index.ts";
import { createLocalFileStore } from "../files/local-file-store.ts";
import type { FileStore } from "../files/file-store.ts";
import { sweepAbandonedUploads, sweepUnattachedUploads } from "../files/sweep-uploads.ts";
import { migrations } from "../migrations/index.ts";
import { idempotencyKeysTarget } from "../idempotency.ts";
import { createSubmissionsHandlers, routes } from "./submissions-handlers.ts";
import { createCalculatedFieldsPool } from "../calculated-fields-pool.ts";
import { startResponseCountPusher, type ResponseCountPusher } from "../response-counts.ts";
import { rejectsWith } from "@formsvc/platform/testing/rpc-assertions.ts";
import { FakeForms, type FakeForm } from "../../../forms/src/testing/fake-forms.ts";

// --- Forms' fake: forms in memory, answering as the real one does. ---

const fakeForms = new FakeForms();
const members = fakeForms.members;
members["ws-ada"] = ["user-ada"];
members["ws-bob"] = ["user-bob"];
/** The versions asked for with GetFormVersion, as `<formId>@<version>`. */
const versionCalls = () => fakeForms.calls.getFormVersion.map((call) => `${call.id}@${call.version}`);

// --- The submissions service under test, on a fresh database and a temporary files directory. ---

let database: TestDatabase;
let orm: MikroORM;
let filesDir: string;
let client: Client<typeof SubmissionsService>;
let clock = Date.parse("2026-01-01T00:00:00Z");
const completions = createCompletionNotifier();
const countChanges = createCompletionNotifier();
/** Pushes response counts to the fake forms, as server.ts does; tests settle it with countOf. */
let counts: ResponseCountPusher;
const logged: { level: string; msg: string }[] = [];
const testLogger = {
  info: () => {},
  warn: (_obj: unknown, msg: string) => logged.push({ level: "warn", msg }),
  error: (_obj: unknown, msg: string) => logged.push({ level: "error", msg }),
} as unknown as Logger;

const as = asCaller;
const ada = as("user-ada");
const bob = as("user-bob");

const survey: FormDocument = {
  title: "Survey",
  blocks: [
    { id: "h1", type: "HEADING", text: "Welcome" },
    { id: "b_name", key: "q_name", type: "SHORT_TEXT", question: "Your full name", required: true },
    { id: "b_email", key: "email", type: "EMAIL", question: "Email address", fieldName: "email" },
    { id: "b_age", key: "age", type: "NUMBER", question: "Age", min: 0, max: 150 },
    { id: "b_phone", key: "phone", type: "PHONE", question: "Phone" },
    { id: "b_site", key: "site", type: "URL", question: "Website" },
    { id: "b_when", key: "when", type: "DATE", question: "Date" },
    { id: "b_plan", key: "plan", type: "MULTIPLE_CHOICE", question: "Plan", options: [{ id: "free", text: "Free" }, { id: "pro", text: "Pro" }] },
    { id: "b_tags", key: "tags", type: "CHECKBOXES", question: "Tags", options: [{ id: "a", text: "A" }, { id: "b", text: "B" }] },
    { id: "b_size", key: "size", type: "DROPDOWN", question: "Size", options: [{ id: "s", text: "S" }] },
    { id: "b_stars", key: "stars", type: "RATING", question: "Stars", max: 5 },
    { id: "p1", type: "PAGE_BREAK" },
    { id: "b_cv", key: "cv", type: "FILE", question: "Upload your CV" },
    { id: "b_sig", key: "sig", type: "SIGNATURE", question: "Sign" },
  ],
  hiddenFields: [{ name: "utm_source" }],
  calculatedFields: [
    { name: "score", type: "NUMBER", expression: "age * 2.0 + double(stars)" },
    { name: "broken", type: "NUMBER", expression: "age * 2" },
  ],
};

let formCounter = 0;
function addForm(init: Partial<FakeForm> & { document?: FormDocument } = {}): FakeForm {
  const { document, ...fields } = init;
  const id = `form${String(++formCounter).padStart(4, "0")}`;
  return fakeForms.add({ id, workspaceId: "ws-ada", name: "Survey", versions: [document ?? survey], ...fields });
}

type SaveInit = Omit<MessageInitShape<typeof SaveResponseRequestSchema>, "formId" | "$typeName">;

function save(formId: string, init: SaveInit = {}) {
  return client.saveResponse({ formId, ...init });
}

/** The CreateUpload stream of a file held whole (the gateway's way of sending it). */
function uploadOf(file: { formId: string; name: string; contentType?: string; content: Uint8Array }) {
  return uploadRequests({ formId: file.formId, name: file.name, contentType: file.contentType ?? "" }, file.content);
}

async function upload(formId: string, text: string, name = "cv.pdf", contentType = "application/pdf") {
  return client.createUpload(uploadOf({ formId, name, contentType, content: new TextEncoder().encode(text) }));
}

async function submission(formId: string, id: string): Promise<Submission> {
  const res = await client.getSubmission({ formId, submissionId: id }, ada);
  assert.ok(res.submission);
  return res.submission;
}

/** The JSON value of an answer of a submission. */
const valueOf = (sub: Submission, key: string) => {
  const answer = sub.answers[key];
  assert.ok(answer, `no answer ${key}`);
  return answer.value ? toJson(ValueSchema, answer.value) : undefined;
};

/** The form's outbox rows of one event type (completions unless told), oldest first. */
async function outboxRows(formId: string, eventType = "FORM_RESPONSE") {
  return orm.em
    .fork()
    .getConnection()
    .execute(`select id, event_id, form_id, payload, request_id, created_at from "submissions"."outbox" where form_id = ? and event_type = ? order by id`, [formId, eventType]);
}

/** A completion's outbox row read back. */
function completionOf(row: Record<string, unknown>): ResponseCompleted {
  const { event } = decodeEvent(row.payload as Buffer, "FORM_RESPONSE");
  assert.equal(event.case, "formResponse");
  return event.value;
}

async function responseRows(formId: string) {
  return orm.em.fork().getConnection().execute(`select * from "submissions"."responses" where form_id = ?`, [formId]);
}

async function uploadRows(where: string, params: unknown[]) {
  return orm.em.fork().getConnection().execute(`select * from "submissions"."uploads" where ${where}`, params);
}

// The calculated fields' cut-off is production's 100 ms by default: a worker's first evaluation on a loaded
// machine (two test files at a time) took longer once. The cost bound has tests of its own.
const calculatedFields = createCalculatedFieldsPool({ deadlineMs: 5_000 });

before(async () => {
  database = await createTestDatabase("submissions_test");
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "submissions", entities, migrations });
  filesDir = mkdtempSync(join(tmpdir(), "submissions-handlers-"));
  const handlers = createSubmissionsHandlers({
    calculatedFields,
    orm,
    forms: fakeForms.client,
    files: createLocalFileStore(join(filesDir, "files")),
    logger: testLogger,
    now: () => new Date((clock += 1000)),
    streamPollMs: 50,
    completions,
    countChanges,
  });
  client = createClient(SubmissionsService, createRouterTransport((router) => routes(router, handlers)));
  counts = startResponseCountPusher({ orm, forms: fakeForms.client, logger: testLogger, changes: countChanges, pollMs: 100, spacingMs: 0 });
});

after(async () => {
  await calculatedFields.close();
  await counts?.stop();
  await orm?.close(true);
  await database?.drop();
  if (filesDir) rmSync(filesDir, { recursive: true, force: true });
});

beforeEach(() => {
  fakeForms.failWith = undefined;
  fakeForms.holdWith = undefined;
});

/** The form's count as forms holds it once the changes committed so far are pushed. */
async function countOf(form: FakeForm): Promise<number> {
  await counts.flush();
  return form.responseCount;
}

describe("migrations", () => {
  it("apply once: a second replica opening the same database finds nothing to do", async () => {
    await assertMigrationsApplyOnce({ databaseUrl: database.databaseUrl, schema: "submissions", entities, migrations }, [
      "Migration20261123000000_initial",
      "Migration20261201000000_outbox_published_at",
      "Migration20261202000000_outbox_txid",
      "Migration20261203000000_outbox_trace_parent",
      "Migration20261210000000_upload_quotas",
      "Migration20261220000000_sync_indexes",
      "Migration20261221000000_idempotency_keys",
      "Migration20261222000000_calculated_field_problems",
      "Migration20261231000000_notifications",
      "Migration20270101000000_outbox_event_type",
      "Migration20270110000000_response_counts",
      "Migration20261127000100_retention",
      "Migration20261128000600_response_language",
      "Migration20261128000700_insights",
      "Migration20261128001000_response_links",
      "Migration20261128001100_email_verification",
      "Migration20261128001200_summary_counts",
    ]);
  });
});

describe("SaveResponse: answers", () => {
  it("stores a completed response with every type of answer, as the version's questions", async () => {
    const form = addForm();
    const cv = await upload(form.id, "%PDF cv");
    const sig = await upload(form.id, "png bytes", "sig.png", "image/png");
    const res = await save(form.id, {
      answers: {
        q_name: "Ada",
        email: " ada@example.com ",
        age: 36,
        phone: "+44 20 7946 0958",
        site: "https://ada.example",
        when: "2026-11-22",
        plan: "pro",
        tags: ["a", "b"],
        size: "s",
        stars: 4,
        cv: [cv.uploadId],
        sig: [sig.uploadId],
      },
      completed: true,
    });
    assert.equal(res.completed, true);
    assert.match(res.responseId, /^[A-Za-z0-9]{16}$/);

    const sub = await submission(form.id, res.responseId);
    assert.equal(sub.id, res.responseId);
    assert.equal(sub.formId, form.id);
    assert.equal(sub.version, 1);
    assert.equal(sub.completed, true);
    assert.ok(sub.createdAt && sub.updatedAt && sub.submittedAt);
    assert.deepEqual(
      { questionId: sub.answers.q_name.questionId, type: sub.answers.q_name.type, label: sub.answers.q_name.label },
      { questionId: "b_name", type: "SHORT_TEXT", label: "Your full name" },
    );
    assert.equal(valueOf(sub, "q_name"), "Ada");
    assert.equal(valueOf(sub, "email"), "ada@example.com");
    assert.equal(sub.answers.email.label, "email");
    assert.equal(valueOf(sub, "age"), 36);
    assert.equal(valueOf(sub, "when"), "2026-11-22");
    assert.equal(valueOf(sub, "plan"), "pro");
    assert.deepEqual(valueOf(sub, "tags"), ["a", "b"]);
    assert.equal(valueOf(sub, "stars"), 4);
    assert.deepEqual(valueOf(sub, "cv"), [cv.uploadId]);
    assert.deepEqual(
      sub.answers.cv.files.map((f) => [f.id, f.name, f.contentType, f.size]),
      [[cv.uploadId, "cv.pdf", "application/pdf", 7n]],
    );
    assert.deepEqual(sub.answers.sig.files.map((f) => f.name), ["sig.png"]);
    assert.deepEqual(sub.answers.q_name.files, []);
    // Calculated fields at completion: a failing expression stores null, and the response is stored.
    assert.equal(valueOf(sub, "calculated:score"), 76);
    assert.equal(sub.answers["calculated:score"].type, "CALCULATED_FIELD");
    assert.equal(valueOf(sub, "calculated:broken"), null);
    assert.equal(await countOf(form), 1);
  });

  it("refuses invalid answers with INVALID_ARGUMENT naming the question", async () => {
    const form = addForm();
    const cases: [JsonObject, string][] = [
      [{ email: "not-an-email" }, "answers.email (Email address): must be an email address"],
      [{ age: "twelve" }, "answers.age (Age): must be a number, not a string"],
      [{ age: 151 }, "answers.age (Age): must be at most 150"],
      [{ phone: "phone" }, "answers.phone (Phone): must be a phone number"],
      [{ site: "ftp://x.example" }, "answers.site (Website): must be a URL starting with http:// or https://"],
      [{ when: "22/11/2026" }, "answers.when (Date): must be a date (YYYY-MM-DD)"],
      [{ plan: "gold" }, 'answers.plan (Plan): "gold" is not an option of this question'],
      [{ tags: ["a", "zzz"] }, 'answers.tags (Tags): "zzz" is not an option of this question'],
      [{ size: 1 }, "answers.size (Size): must be the id of an option, not a number"],
      [{ stars: 6 }, "answers.stars (Stars): must be a whole number from 1 to 5"],
      [{ nope: "x" }, "answers.nope: is not a question of this form"],
      [{ cv: ["not-an-upload"] }, 'answers.cv (Upload your CV): "not-an-upload" is not an upload of this form'],
    ];
    for (const [answers, message] of cases) {
      await rejectsWith(save(form.id, { answers }), Code.InvalidArgument, message);
    }
    assert.deepEqual(await responseRows(form.id), [], "nothing is stored");
  });

  it("names each problem's answer in a google.rpc.BadRequest detail: its key and what is wrong", async () => {
    const form = addForm();
    /** The field violations of the error a save fails with, as [field, description]. */
    const violations = (saving: Promise<unknown>) =>
      saving.then(
        () => assert.fail("saved"),
        (err: unknown) => {
          assert.equal(ConnectError.from(err).code, Code.InvalidArgument);
          return ConnectError.from(err).findDetails(BadRequestSchema).flatMap((d) => d.fieldViolations.map((v) => [v.field, v.description]));
        },
      );
    assert.deepEqual(await violations(save(form.id, { answers: { email: "not-an-email" }, hidden: { other: "x" }, completed: true })), [
      ["email", "must be an email address"],
      ["q_name", "is required"],
      ["hidden:other", "is not a hidden field of this form"],
    ]);
    assert.deepEqual(await violations(save(form.id, { answers: { q_name: "Ada", cv: ["not-an-upload"] } })), [["cv", '"not-an-upload" is not an upload of this form']]);
    // Thousands of unknown keys: the message counts them, the detail names the first hundred.
    const many = await violations(save(form.id, { answers: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`x${i}`, 1])) }));
    assert.deepEqual([many.length, many[0], many[99]], [100, ["x0", "is not a question of this form"], ["x99", "is not a question of this form"]]);
  });

  it("binds required questions on completion only", async () => {
    const form = addForm();
    const partial = await save(form.id, { answers: { email: "a@example.com" } });
    assert.equal(partial.completed, false);
    await rejectsWith(save(form.id, { answers: { email: "a@example.com" }, completed: true }), Code.InvalidArgument, "answers.q_name (Your full name): is required");
    await rejectsWith(
      save(form.id, { responseId: partial.responseId, completed: true }),
      Code.InvalidArgument,
      "answers.q_name (Your full name): is required",
    );
    assert.equal((await submission(form.id, partial.responseId)).completed, false);
  });

  it("merges partial saves into one response and completes it", async () => {
    const form = addForm();
    const first = await save(form.id, { answers: { q_name: "Ada", email: "ada@example.com", age: 30 } });
    const partialSub = await submission(form.id, first.responseId);
    assert.equal(partialSub.completed, false);
    assert.equal(partialSub.submittedAt, undefined);
    assert.equal(partialSub.answers["calculated:score"], undefined, "calculated fields wait for completion");

    // A later save adds answers, overwrites some and clears others (null).
    const second = await save(form.id, { responseId: first.responseId, answers: { age: 31, email: null, plan: "free" } });
    assert.deepEqual([second.responseId, second.completed], [first.responseId, false]);
    const merged = await submission(form.id, first.responseId);
    assert.equal(valueOf(merged, "q_name"), "Ada");
    assert.equal(valueOf(merged, "age"), 31);
    assert.equal(valueOf(merged, "plan"), "free");
    assert.equal(merged.answers.email, undefined);
    assert.equal(await countOf(form), 0, "partial responses are not counted");

    const done = await save(form.id, { responseId: first.responseId, answers: { stars: 5 }, completed: true });
    assert.equal(done.responseId, first.responseId);
    assert.equal(done.completed, true);
    const sub = await submission(form.id, first.responseId);
    assert.equal(sub.completed, true);
    assert.equal(valueOf(sub, "calculated:score"), 67);
    assert.equal(await countOf(form), 1);
    assert.equal((await responseRows(form.id)).length, 1);

    // A completed response cannot change.
    await rejectsWith(
      save(form.id, { responseId: first.responseId, answers: { q_name: "Mallory" } }),
      Code.FailedPrecondition,
      "this response is already completed",
    );
    assert.equal(valueOf(await submission(form.id, first.responseId), "q_name"), "Ada");
  });

  it("answers NOT_FOUND for a response id of another form or none at all", async () => {
    const form = addForm();
    const other = addForm();
    const res = await save(other.id, { answers: { q_name: "x" } });
    await rejectsWith(save(form.id, { responseId: res.responseId, answers: {} }), Code.NotFound, "response not found");
    await rejectsWith(save(form.id, { responseId: "NoSuchResponse00", answers: {} }), Code.NotFound, "response not found");
  });

  it("lets only one of two concurrent completions of a response through", async () => {
    const form = addForm();
    const first = await save(form.id, { answers: { q_name: "Ada" } });
    const results = await Promise.allSettled([
      save(form.id, { responseId: first.responseId, completed: true }),
      save(form.id, { responseId: first.responseId, completed: true }),
    ]);
    assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
    const failed = results.find((r) => r.status === "rejected");
    assert.ok(failed && failed.status === "rejected");
    assert.equal(ConnectError.from(failed.reason).code, Code.FailedPrecondition);
    assert.equal((await outboxRows(form.id)).length, 1);
    assert.equal(await countOf(form), 1);
  });
});

describe("SaveResponses: several respondents' saves in one call", () => {
  it("saves each on its own, under its request id, and answers each by its index: a save, or the error a call of its own would fail with", async () => {
    const form = addForm();
    const closed = addForm({ status: "closed" });
    const items: MessageInitShape<typeof SaveResponsesItemSchema>[] = [
      { save: { formId: form.id, answers: { q_name: "Ada" }, completed: true }, requestId: "req-ada", traceParent: "" },
      { save: { formId: form.id, answers: { email: "not-an-email" } }, requestId: "req-bad", traceParent: "" },
      { save: { formId: closed.id, answers: { q_name: "x" }, completed: true }, requestId: "req-closed", traceParent: "" },
      { requestId: "req-empty", traceParent: "" },
    ];
    const results = [];
    for await (const result of client.saveResponses({ items })) results.push(result);
    assert.deepEqual(results.map((r) => r.index).sort(), [0, 1, 2, 3]);
    const byIndex = new Map(results.map((r) => [r.index, r.outcome]));
    const saved = byIndex.get(0)!;
    assert.equal(saved.case, "saved");
    const errorOf = (index: number) => {
      const outcome = byIndex.get(index)!;
      assert.equal(outcome.case, "error");
      return connectErrorOf(outcome.value);
    };
    const invalid = errorOf(1);
    assert.equal(invalid.code, Code.InvalidArgument);
    assert.deepEqual(invalid.findDetails(BadRequestSchema).flatMap((d) => d.fieldViolations.map((v) => [v.field, v.description])), [["email", "must be an email address"]]);
    assert.deepEqual([errorOf(2).code, errorOf(2).rawMessage], [Code.FailedPrecondition, "this form is closed"]);
    assert.equal(errorOf(3).code, Code.InvalidArgument);
    const rows = await responseRows(form.id);
    assert.deepEqual(rows.map((r) => r.id), [saved.value.responseId], "only the good save is stored");
    const [event] = await orm.em.fork().getConnection().execute(`select request_id from "submissions"."outbox" where form_id = ?`, [form.id]);
    assert.equal(event.request_id, "req-ada", "its event carries its own request id");
  });

  it("refuses more saves than a call may carry", async () => {
    const items = Array.from({ length: maxSavesPerCall + 1 }, () => ({ save: { formId: "f" }, requestId: "", traceParent: "" }));
    await rejectsWith(
      (async () => {
        for await (const _ of client.saveResponses({ items })) assert.fail("answered");
      })(),
      Code.InvalidArgument,
      `at most ${maxSavesPerCall} saves per call`,
    );
  });
});

describe("SaveResponse: Idempotency-Key", () => {
  it("answers a repeat with the first save's result and stores nothing twice; another body under the key is refused", async () => {
    const form = addForm();
    const body = { answers: { q_name: "Ada" }, completed: true, idempotencyKey: "key-1" };
    const first = await save(form.id, body);
    const repeats = await Promise.all([save(form.id, body), save(form.id, body), save(form.id, { ...body, country: "DE" })]);
    assert.equal(first.replayed, false);
    for (const repeat of repeats) assert.deepEqual([repeat.responseId, repeat.completed, repeat.idempotencyKeyReused, repeat.replayed], [first.responseId, true, false, true]);
    assert.equal((await responseRows(form.id)).length, 1);
    assert.equal((await outboxRows(form.id)).length, 1, "one event");
    assert.equal(await countOf(form), 1);
    const other = await save(form.id, { ...body, answers: { q_name: "Bob" } });
    assert.deepEqual([other.idempotencyKeyReused, other.replayed], [true, false]);
    assert.equal((await responseRows(form.id)).length, 1);
    assert.notEqual((await save(addForm().id, body)).responseId, first.responseId, "keys are scoped to their form");
  });

  it("lets only one of concurrent first saves with one key store, the others answer its result", async () => {
    const form = addForm();
    const body = { answers: { q_name: "Ada" }, completed: true, idempotencyKey: "key-race" };
    const results = await Promise.all(Array.from({ length: 8 }, () => save(form.id, body)));
    assert.equal(new Set(results.map((r) => r.responseId)).size, 1);
    assert.equal((await responseRows(form.id)).length, 1);
    assert.equal((await outboxRows(form.id)).length, 1);
  });

  it("keys a continued save (the transaction path) too, and a key past 24 hours is taken afresh by a sweep", async () => {
    const form = addForm();
    const started = await save(form.id, { answers: { q_name: "Ada" }, idempotencyKey: "start" });
    const finish = { responseId: started.responseId, answers: { age: 30 }, completed: true, idempotencyKey: "finish" };
    const done = await save(form.id, finish);
    assert.deepEqual([(await save(form.id, finish)).responseId, (await save(form.id, finish)).completed], [done.responseId, true]);
    assert.equal((await outboxRows(form.id)).length, 1);
    await orm.em.fork().getConnection().execute(`update "submissions"."idempotency_keys" set created_at = created_at - interval '25 hours' where form_id = ?`, [form.id]);
    const keys = idempotencyKeysTarget(orm, () => new Date(clock));
    assert.ok(((await keys.remove(keys.olderThanAt(new Date(clock))!)) as number) >= 2);
    await rejectsWith(save(form.id, finish), Code.FailedPrecondition, "this response is already completed");
  });
});

describe("SaveResponse: hidden fields and country", () => {
  it("stores declared hidden fields as HIDDEN_FIELDS answers and refuses others", async () => {
    const form = addForm();
    await rejectsWith(
      save(form.id, { answers: { q_name: "A" }, hidden: { other: "x" } }),
      Code.InvalidArgument,
      "hidden.other: is not a hidden field of this form",
    );
    const res = await save(form.id, { answers: { q_name: "A" }, hidden: { utm_source: "newsletter" } });
    const sub = await submission(form.id, res.responseId);
    assert.equal(valueOf(sub, "hidden:utm_source"), "newsletter");
    assert.equal(sub.answers["hidden:utm_source"].type, "HIDDEN_FIELDS");
    assert.equal(sub.answers["hidden:utm_source"].label, "utm_source");
    // Kept through later saves that do not send them.
    await save(form.id, { responseId: res.responseId, answers: { age: 3 }, completed: true });
    assert.equal(valueOf(await submission(form.id, res.responseId), "hidden:utm_source"), "newsletter");
  });

  it("stores the country the gateway gives, and none when it gives none", async () => {
    const form = addForm();
    const withCountry = await save(form.id, { answers: { q_name: "A" }, country: "gb", completed: true });
    const sub = await submission(form.id, withCountry.responseId);
    assert.equal(valueOf(sub, "meta:country"), "GB");
    assert.equal(sub.answers["meta:country"].type, "RESPONDENT_COUNTRY");
    const without = await save(form.id, { answers: { q_name: "B" }, completed: true });
    assert.equal((await submission(form.id, without.responseId)).answers["meta:country"], undefined);
    const rows = await responseRows(form.id);
    assert.deepEqual(rows.map((r) => r.country).sort(), ["GB", null]);

    // Given on a partial save, it stays when the completing save has none.
    const partial = await save(form.id, { answers: { q_name: "C" }, country: "DE" });
    await save(form.id, { responseId: partial.responseId, completed: true });
    assert.equal(valueOf(await submission(form.id, partial.responseId), "meta:country"), "DE");
  });

  it("records the language the respondent answers in when the form offers it, else the form's own", async () => {
    const form = addForm({ settings: { language: "en", languages: [{ language: "pt-BR", texts: {} }] } });
    const language = async (init: SaveInit) => (await submission(form.id, (await save(form.id, { answers: { q_name: "A" }, completed: true, ...init })).responseId)).language;
    assert.equal(await language({ language: "pt-br" }), "pt-BR", "as the form spells it");
    assert.equal(await language({ language: "fr" }), "en", "one it does not offer is its own");
    assert.equal(await language({}), "en");
    // A partial save's language stays when a later save names none, and follows a switch.
    const partial = await save(form.id, { answers: { q_name: "C" }, language: "pt-BR" });
    await save(form.id, { responseId: partial.responseId, answers: { q_name: "C" } });
    assert.equal((await submission(form.id, partial.responseId)).language, "pt-BR");
    await save(form.id, { responseId: partial.responseId, language: "en", completed: true });
    assert.equal((await submission(form.id, partial.responseId)).language, "en");
  });
});

describe("SaveResponse: form status and versions", () => {
  it("refuses closed forms with FAILED_PRECONDITION, drafts, the Trash and unknown ids with NOT_FOUND", async () => {
    const closed = addForm({ status: "closed" });
    await rejectsWith(save(closed.id, { answers: { q_name: "x" }, completed: true }), Code.FailedPrecondition, "this form is closed");
    await rejectsWith(upload(closed.id, "x"), Code.FailedPrecondition, "this form is closed");
    const draft = addForm({ status: "draft" });
    const trashed = addForm({ trashed: true });
    for (const id of [draft.id, trashed.id, "unknown-form", ""]) {
      await rejectsWith(save(id, { answers: { q_name: "x" } }), Code.NotFound, "form not found");
      await rejectsWith(upload(id, "x"), Code.NotFound, "form not found");
    }
  });

  it("refuses to continue a partial response once its form is closed", async () => {
    const form = addForm();
    const partial = await save(form.id, { answers: { q_name: "x" } });
    form.status = "closed";
    await rejectsWith(save(form.id, { responseId: partial.responseId, completed: true }), Code.FailedPrecondition, "this form is closed");
  });

  it("answers a form past its closing date as a closed form", async () => {
    const form = addForm({ settings: { closesAt: new Date(clock + 60_000).toISOString() } });
    const partial = await save(form.id, { answers: { q_name: "before" } });
    clock += 60_000;
    await rejectsWith(save(form.id, { answers: { q_name: "x" }, completed: true }), Code.FailedPrecondition, "this form is closed");
    await rejectsWith(save(form.id, { responseId: partial.responseId, completed: true }), Code.FailedPrecondition, "this form is closed");
    await rejectsWith(upload(form.id, "x"), Code.FailedPrecondition, "this form is closed");
  });

  it("takes exactly responseLimit completed responses, however many complete at once; partial saves go on", async () => {
    const form = addForm({ settings: { responseLimit: 5 } });
    const partial = await save(form.id, { answers: { q_name: "later" } });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => save(form.id, { answers: { q_name: `r${i}` }, completed: true })),
    );
    assert.equal(outcomes.filter((o) => o.status === "fulfilled").length, 5);
    for (const o of outcomes) {
      if (o.status === "rejected") assert.deepEqual([ConnectError.from(o.reason).code, ConnectError.from(o.reason).rawMessage], [Code.FailedPrecondition, "this form is closed"]);
    }
    const stored = await client.listSubmissions({ formId: form.id, filter: SubmissionFilter.COMPLETED, limit: 50 }, ada);
    assert.equal(stored.submissions.length, 5);
    await rejectsWith(save(form.id, { responseId: partial.responseId, completed: true }), Code.FailedPrecondition, "this form is closed");
    assert.equal((await save(form.id, { responseId: partial.responseId, answers: { q_name: "still saved" } })).completed, false);

    // Deleting a response makes room for one more.
    await client.deleteSubmission({ formId: form.id, submissionId: stored.submissions[0].id }, ada);
    assert.equal((await save(form.id, { responseId: partial.responseId, completed: true })).completed, true);
    await rejectsWith(save(form.id, { answers: { q_name: "one more" }, completed: true }), Code.FailedPrecondition, "this form is closed");
  });

  it("records the version the respondent saw and labels answers as in that version", async () => {
    const v1: FormDocument = { blocks: [{ id: "q", key: "q", type: "SHORT_TEXT", question: "Old question" }] };
    const v2: FormDocument = {
      blocks: [
        { id: "q", key: "q", type: "SHORT_TEXT", question: "Renamed question" },
        { id: "q2", key: "q2", type: "LONG_TEXT", question: "New question", required: true },
      ],
    };
    const form = addForm({ document: v1 });
    const old = await save(form.id, { answers: { q: "old answer" }, completed: true });
    form.versions.push(v2);

    // The current version (0 = current) needs the new question; the old page does not.
    const fresh = await save(form.id, { answers: { q: "new", q2: "more" }, completed: true });
    fakeForms.calls.getFormVersion.length = 0;
    const late = await save(form.id, { version: 1, answers: { q: "late" }, completed: true });
    const later = await save(form.id, { version: 1, answers: { q: "later" }, completed: true });
    assert.deepEqual(versionCalls(), [], "version 1 was kept from when it was current");
    // A form whose older version was never seen here: fetched once, then cached.
    const twoVersions = addForm({ versions: [v1, v2] });
    await save(twoVersions.id, { version: 1, answers: { q: "x" } });
    await save(twoVersions.id, { version: 1, answers: { q: "y" } });
    assert.deepEqual(versionCalls(), [`${twoVersions.id}@1`], "a version is fetched once, then cached");
    await rejectsWith(save(form.id, { version: 1, answers: { q2: "not in v1" } }), Code.InvalidArgument, "answers.q2: is not a question of this form");

    const oldSub = await submission(form.id, old.responseId);
    const freshSub = await submission(form.id, fresh.responseId);
    const lateSub = await submission(form.id, late.responseId);
    assert.deepEqual([oldSub.version, oldSub.answers.q.label, valueOf(oldSub, "q")], [1, "Old question", "old answer"]);
    assert.deepEqual([freshSub.version, freshSub.answers.q.label, freshSub.answers.q2.label], [2, "Renamed question", "New question"]);
    assert.deepEqual([lateSub.version, lateSub.answers.q.label], [1, "Old question"]);
    assert.ok(later.completed);

    // Versions that do not exist (yet).
    await rejectsWith(save(form.id, { version: 3, answers: {} }), Code.InvalidArgument, "version: 3 is not a version of this form");
    await rejectsWith(save(form.id, { version: -1, answers: {} }), Code.InvalidArgument, "version: -1 is not a version of this form");
  });

  it("keeps a partial response on its version: 0 continues it, another version is refused", async () => {
    const v1: FormDocument = { blocks: [{ id: "q", key: "q", type: "SHORT_TEXT", question: "Q1" }] };
    const form = addForm({ document: v1 });
    const partial = await save(form.id, { answers: { q: "a" } });
    form.versions.push({ blocks: [{ id: "r", key: "r", type: "SHORT_TEXT", question: "R" }] });
    await rejectsWith(
      save(form.id, { responseId: partial.responseId, version: 2, answers: { r: "b" } }),
      Code.InvalidArgument,
      "version: this response was started on version 1 of the form, not 2",
    );
    const done = await save(form.id, { responseId: partial.responseId, answers: { q: "b" }, completed: true });
    const sub = await submission(form.id, done.responseId);
    assert.deepEqual([sub.version, valueOf(sub, "q"), sub.answers.q.label], [1, "b", "Q1"]);
  });
});

describe("SaveResponse: open forms held while forms' change notices are listened for", () => {
  /** Handlers like server.ts's, with the cache its notice connection keeps (here told by hand). */
  function withOpenForms() {
    const openForms = new NoticeKeptCache<Form>();
    openForms.listening();
    const handlers = createSubmissionsHandlers({ calculatedFields, orm, forms: fakeForms.client, files: createLocalFileStore(join(filesDir, "files")), logger: testLogger, now: () => new Date(clock), countChanges, openForms });
    const held = createClient(SubmissionsService, createRouterTransport((router) => routes(router, handlers)));
    return { openForms, save: (formId: string, init: SaveInit = {}) => held.saveResponse({ formId, ...init }) };
  }
  const asked = (form: FakeForm) => fakeForms.calls.getPublicForm.filter((call) => call.id === form.id).length;

  it("asks forms once, then takes responses without asking; a change notice makes it ask again", async () => {
    const { openForms, save } = withOpenForms();
    const form = addForm();
    for (let i = 0; i < 5; i++) assert.equal((await save(form.id, { answers: { q_name: `r${i}` }, completed: true })).completed, true);
    assert.equal(asked(form), 1);
    form.status = "closed";
    openForms.forget(form.id);
    await rejectsWith(save(form.id, { answers: { q_name: "late" }, completed: true }), Code.FailedPrecondition, "this form is closed");
    assert.equal(asked(form), 2);
  });

  it("asks again before refusing what the held form does not take: a reopened form, a newer version", async () => {
    const { save } = withOpenForms();
    const form = addForm({ status: "closed" });
    await rejectsWith(save(form.id, { answers: { q_name: "x" } }), Code.FailedPrecondition, "this form is closed");
    // Reopened, and published again as version 2, before any notice came.
    form.status = "published";
    assert.equal((await save(form.id, { answers: { q_name: "reopened" } })).completed, false);
    form.versions.push(survey);
    const onTwo = await save(form.id, { version: 2, answers: { q_name: "v2" }, completed: true });
    assert.equal((await submission(form.id, onTwo.responseId)).version, 2);
  });

  it("asks again before refusing at a held form's response limit: one raised or cleared is taken at once", async () => {
    const { save } = withOpenForms();
    const form = addForm({ settings: { responseLimit: 1 } });
    assert.equal((await save(form.id, { answers: { q_name: "first" }, completed: true })).completed, true);
    await rejectsWith(save(form.id, { answers: { q_name: "second" }, completed: true }), Code.FailedPrecondition, "this form is closed");
    // Cleared in forms before its notice came: the held copy still says 1.
    form.settings = {};
    assert.equal((await save(form.id, { answers: { q_name: "second" }, completed: true })).completed, true);
  });

  it("holds nothing while the notice connection is lost", async () => {
    const { openForms, save } = withOpenForms();
    const form = addForm();
    openForms.lost();
    for (let i = 0; i < 3; i++) await save(form.id, { answers: { q_name: `r${i}` } });
    assert.equal(asked(form), 3);
    openForms.listening();
    for (let i = 0; i < 3; i++) await save(form.id, { answers: { q_name: `r${i}` } });
    assert.equal(asked(form), 4);
  });
});

describe("uploads and files", () => {
  it("stores an upload: sanitised name, given or default content type, size limits", async () => {
    const form = addForm();
    const res = await upload(form.id, "hello", "../../secret/My CV.pdf", "");
    assert.equal(res.name, "My CV.pdf");
    assert.equal(res.contentType, "application/octet-stream");
    assert.equal(res.size, 5n);
    assert.equal(readFileSync(join(filesDir, "files", res.uploadId), "utf8"), "hello");
    const rows = await uploadRows("id = ?", [res.uploadId]);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].response_id, null);
    assert.equal(rows[0].form_id, form.id);

    await rejectsWith(client.createUpload(uploadOf({ formId: form.id, name: "e.txt", content: new Uint8Array() })), Code.InvalidArgument, "file: is empty");
    await rejectsWith(
      client.createUpload(uploadOf({ formId: form.id, name: "big.bin", content: new Uint8Array(maxUploadBytes + 1) })),
      Code.InvalidArgument,
      "file: is larger than 10 MiB",
    );
    const exact = await client.createUpload(uploadOf({ formId: form.id, name: "max.bin", contentType: "application/x-thing", content: new Uint8Array(maxUploadBytes) }));
    assert.equal(exact.size, BigInt(maxUploadBytes));
    assert.equal(exact.contentType, "application/x-thing");
  });

  it("attaches uploads to one response of the same form; ReadFile serves attached files only", async () => {
    const form = addForm();
    const other = addForm();
    const cv = await upload(form.id, "my cv");
    await rejectsWith(client.readFile({ fileId: cv.uploadId }), Code.NotFound, "file not found");

    const foreign = await upload(other.id, "other form's file");
    await rejectsWith(
      save(form.id, { answers: { cv: [foreign.uploadId] } }),
      Code.InvalidArgument,
      `answers.cv (Upload your CV): "${foreign.uploadId}" is not an upload of this form`,
    );
    await rejectsWith(
      save(form.id, { answers: { cv: [cv.uploadId], sig: [cv.uploadId] } }),
      Code.InvalidArgument,
      /is already in answers\.cv/,
    );

    const res = await save(form.id, { answers: { q_name: "A", cv: [cv.uploadId] } });
    const read = await client.readFile({ fileId: cv.uploadId });
    assert.equal(new TextDecoder().decode(read.content), "my cv");
    assert.deepEqual(
      [read.file?.id, read.file?.name, read.file?.contentType, read.file?.size],
      [cv.uploadId, "cv.pdf", "application/pdf", 5n],
    );
    // Saving again with the same upload is fine; another response cannot take it.
    await save(form.id, { responseId: res.responseId, answers: { cv: [cv.uploadId] } });
    await rejectsWith(
      save(form.id, { answers: { cv: [cv.uploadId] } }),
      Code.InvalidArgument,
      `answers.cv (Upload your CV): "${cv.uploadId}" is not an upload of this form`,
    );
    await rejectsWith(client.readFile({ fileId: "NoSuchFile000000" }), Code.NotFound, "file not found");
    await rejectsWith(client.readFile({ fileId: "" }), Code.NotFound, "file not found");
  });

  it("removes the files a later save takes out of the response", async () => {
    const form = addForm();
    const a = await upload(form.id, "first");
    const b = await upload(form.id, "second");
    const res = await save(form.id, { answers: { cv: [a.uploadId] } });
    await save(form.id, { responseId: res.responseId, answers: { cv: [b.uploadId] } });
    await rejectsWith(client.readFile({ fileId: a.uploadId }), Code.NotFound);
    assert.equal(existsSync(join(filesDir, "files", a.uploadId)), false);
    assert.deepEqual(await uploadRows("id = ?", [a.uploadId]), []);
    const sub = await submission(form.id, res.responseId);
    assert.deepEqual(sub.answers.cv.files.map((f) => f.id), [b.uploadId]);
    await save(form.id, { responseId: res.responseId, answers: { cv: null } });
    assert.equal((await submission(form.id, res.responseId)).answers.cv, undefined);
    assert.equal(existsSync(join(filesDir, "files", b.uploadId)), false);
  });

  it("stores an upload question the form's logic skips as a null answer with no files, releasing an upload it held", async () => {
    const form = addForm({
      document: {
        title: "Claims",
        blocks: [
          { id: "b_receipt", key: "has_receipt", type: "MULTIPLE_CHOICE", question: "Have a receipt?", options: [{ id: "yes", text: "Yes" }, { id: "no", text: "No" }] },
          { id: "b_scan", key: "scan", type: "FILE", question: "Receipt scan" },
          { id: "b_sig", key: "sig", type: "SIGNATURE", question: "Sign" },
        ],
        logic: [
          { when: { conditions: [{ question: "b_receipt", operator: "EQUALS", value: "yes" }] }, then: [{ action: "SHOW", block: "b_scan" }] },
          { when: { conditions: [{ question: "b_receipt", operator: "EQUALS", value: "no" }] }, then: [{ action: "HIDE", block: "b_sig" }] },
        ],
      },
    });
    // Completed without ever revealing the upload questions (and with an upload id sent for one).
    const stray = await upload(form.id, "not wanted");
    const done = await save(form.id, { answers: { has_receipt: "no", scan: [stray.uploadId] }, completed: true });
    const sub = await submission(form.id, done.responseId);
    assert.equal(sub.completed, true);
    assert.deepEqual([valueOf(sub, "scan"), sub.answers.scan.type, sub.answers.scan.files], [null, "FILE", []]);
    assert.deepEqual([valueOf(sub, "sig"), sub.answers.sig.type, sub.answers.sig.files], [null, "SIGNATURE", []]);
    assert.deepEqual((await uploadRows("id = ?", [stray.uploadId])).map((row) => row.response_id), [null], "a skipped question attaches nothing");

    // A partial save with the scan shown keeps its file; completing with it hidden again releases the file.
    const scan = await upload(form.id, "%PDF receipt");
    const partial = await save(form.id, { answers: { has_receipt: "yes", scan: [scan.uploadId] } });
    assert.deepEqual((await submission(form.id, partial.responseId)).answers.scan.files.map((f) => f.id), [scan.uploadId]);
    await save(form.id, { responseId: partial.responseId, answers: { has_receipt: "no" }, completed: true });
    const completed = await submission(form.id, partial.responseId);
    assert.deepEqual([valueOf(completed, "scan"), completed.answers.scan.files], [null, []]);
    await rejectsWith(client.readFile({ fileId: scan.uploadId }), Code.NotFound, "file not found");
    assert.equal(await countOf(form), 2);
  });
});

describe("the outbox", () => {
  it("gets one ResponseCompleted row with the completion only, in the same transaction", async () => {
    const form = addForm({ name: "Sign-up" });
    const partial = await save(form.id, { answers: { q_name: "Ada" } });
    assert.deepEqual(await outboxRows(form.id), [], "a partial save writes no FORM_RESPONSE");
    await runWithRequestId("req-123", () => save(form.id, { responseId: partial.responseId, answers: { age: 30 }, completed: true }));
    const rows = await outboxRows(form.id);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].form_id, form.id);
    assert.equal(rows[0].request_id, "req-123");
    const event = completionOf(rows[0]);
    assert.equal(event.eventId, rows[0].event_id);
    assert.equal(event.responseId, partial.responseId);
    assert.equal(event.formId, form.id);
    assert.equal(event.workspaceId, "ws-ada");
    assert.equal(event.formVersion, 1);
    assert.equal(event.formName, "Sign-up");
    const sub = await submission(form.id, partial.responseId);
    assert.deepEqual(event.submittedAt && timestampDate(event.submittedAt), sub.submittedAt && timestampDate(sub.submittedAt));
    // Every input block of the version, by question text, unanswered ones null.
    assert.deepEqual(
      event.fields.map((f) => [f.questionId, f.type, f.label, f.value ? toJson(ValueSchema, f.value) : undefined]),
      [
        ["b_name", "SHORT_TEXT", "Your full name", "Ada"],
        ["b_email", "EMAIL", "Email address", null],
        ["b_age", "NUMBER", "Age", 30],
        ["b_phone", "PHONE", "Phone", null],
        ["b_site", "URL", "Website", null],
        ["b_when", "DATE", "Date", null],
        ["b_plan", "MULTIPLE_CHOICE", "Plan", null],
        ["b_tags", "CHECKBOXES", "Tags", null],
        ["b_size", "DROPDOWN", "Size", null],
        ["b_stars", "RATING", "Stars", null],
        ["b_cv", "FILE", "Upload your CV", null],
        ["b_sig", "SIGNATURE", "Sign", null],
      ],
    );
    // A refused completion writes nothing.
    await rejectsWith(save(form.id, { answers: {}, completed: true }), Code.InvalidArgument);
    assert.equal((await outboxRows(form.id)).length, 1);
  });

  it("stores new responses arriving together in one statement each batch, each with its outbox row and count", async () => {
    const form = addForm({ document: { blocks: [{ id: "b_name", key: "q_name", type: "SHORT_TEXT", question: "Name" }] } });
    const statements: string[] = [];
    const connection = orm.em.getConnection();
    const execute = connection.execute.bind(connection);
    connection.execute = ((sql: string, ...rest: unknown[]) => (statements.push(sql), (execute as (...a: unknown[]) => unknown)(sql, ...rest))) as typeof connection.execute;
    let saved: { responseId: string; completed: boolean }[];
    try {
      // Completions and a partial save (no event, no count) arrive together.
      saved = await Promise.all(
        Array.from({ length: 20 }, (_, i) => save(form.id, { answers: { q_name: `r${i}` }, completed: i !== 7 })),
      );
    } finally {
      connection.execute = execute;
    }
    const inserts = statements.filter((sql) => sql.includes(`insert into "submissions"."responses"`));
    assert.ok(inserts.length < 20 && inserts.length >= 2, `the first alone, the rest together: ${inserts.length} statements for 20`);
    assert.equal((await responseRows(form.id)).length, 20);
    const rows = await outboxRows(form.id);
    assert.deepEqual(
      rows.map((row) => completionOf(row).responseId).sort(),
      saved.filter((s) => s.completed).map((s) => s.responseId).sort(),
      "one completion event per completed response",
    );
    const first = completionOf(rows[0]);
    assert.equal(toJson(ValueSchema, first.fields[0].value!), valueOf(await submission(form.id, first.responseId), "q_name"));
    assert.equal(await countOf(form), 19);
  });

  it("carries what makes each value usable: option texts, files, hidden and calculated fields, the country", async () => {
    const form = addForm();
    const cv = await upload(form.id, "my cv", "cv.pdf");
    const res = await save(form.id, {
      answers: { q_name: "Ada", age: 30, stars: 4, plan: "pro", tags: ["a"], cv: [cv.uploadId] },
      hidden: { utm_source: "newsletter" },
      country: "de",
      completed: true,
    });
    const [row] = await outboxRows(form.id);
    const event = completionOf(row);
    assert.equal(event.responseId, res.responseId);
    const byId = new Map(event.fields.map((f) => [f.questionId, f]));
    assert.deepEqual(byId.get("b_plan")!.options.map((o) => [o.id, o.text]), [["free", "Free"], ["pro", "Pro"]]);
    assert.deepEqual(byId.get("b_tags")!.options.map((o) => o.text), ["A", "B"]);
    assert.deepEqual(byId.get("b_name")!.options, [], "only choice questions list options");
    assert.deepEqual(
      byId.get("b_cv")!.files.map((f) => [f.id, f.name, f.contentType, f.size]),
      [[cv.uploadId, "cv.pdf", "application/pdf", 5n]],
    );
    assert.deepEqual(Object.fromEntries(Object.entries(event.hiddenFields).map(([k, v]) => [k, toJson(ValueSchema, v)])), { utm_source: "newsletter" });
    assert.deepEqual(Object.fromEntries(Object.entries(event.calculatedFields).map(([k, v]) => [k, toJson(ValueSchema, v)])), { score: 64, broken: null });
    assert.equal(event.respondentCountry, "DE");
  });

  it("tells the notifier once each event (a completion, a partial save's) has committed, and only then", async () => {
    const form = addForm();
    const told: number[] = [];
    const unsubscribe = completions.subscribe(() => told.push(1));
    try {
      const partial = await save(form.id, { answers: { q_name: "A" } });
      assert.equal(told.length, 1, "the partial save's FORM_RESPONSE_PARTIAL");
      await save(form.id, { responseId: partial.responseId, answers: { q_name: "B" } });
      assert.equal(told.length, 1, "saved again on the same page: no event");
      await rejectsWith(save(form.id, { answers: {}, completed: true }), Code.InvalidArgument);
      assert.equal(told.length, 1, "a refused completion neither");
      await save(form.id, { responseId: partial.responseId, answers: { q_name: "A" }, completed: true });
      assert.equal(told.length, 2);
      assert.equal((await outboxRows(form.id)).length, 1);
    } finally {
      unsubscribe();
    }
  });

  it("streams completions from a cursor, then new ones as they commit", async () => {
    const form = addForm();
    const before = await save(form.id, { answers: { q_name: "first" }, completed: true });
    const [row] = await outboxRows(form.id);
    const txid = BigInt((await orm.em.getConnection().execute(`select "txid"::text as txid from "submissions"."outbox" where id = ?`, [row.id]))[0].txid);
    const abort = new AbortController();
    const stream = client.streamCompletions({ afterCursor: txid - 1n }, { signal: abort.signal });
    const iterator = stream[Symbol.asyncIterator]();
    const first = await iterator.next();
    assert.ok(!first.done);
    assert.equal(first.value.cursor, txid);
    assert.equal(first.value.event?.responseId, before.responseId);

    const pending = iterator.next();
    const after = await save(form.id, { answers: { q_name: "second" }, completed: true });
    const second = await pending;
    assert.ok(!second.done);
    assert.equal(second.value.event?.responseId, after.responseId);
    assert.ok(second.value.cursor > first.value.cursor);
    abort.abort();
    await iterator.return?.();
  });

  it("streams a completion an older transaction held back soon after that transaction ends, not at the next poll", async () => {
    // A stream that polls once a minute: only looking again by itself brings the held row in time.
    const handlers = createSubmissionsHandlers({ calculatedFields, orm, forms: fakeForms.client, files: createLocalFileStore(join(filesDir, "files")), logger: testLogger, streamPollMs: 60_000, completions, countChanges });
    const slowPolling = createClient(SubmissionsService, createRouterTransport((router) => routes(router, handlers)));
    const form = addForm();
    const abort = new AbortController();
    const [{ txid: now }] = await orm.em.getConnection().execute(`select pg_current_xact_id()::text as txid`);
    const iterator = slowPolling.streamCompletions({ afterCursor: BigInt(now) }, { signal: abort.signal })[Symbol.asyncIterator]();
    // Another service's transaction, begun first and still running, which will tell submissions nothing when it ends.
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    let begin!: () => void;
    const begun = new Promise<void>((resolve) => (begin = resolve));
    const older = orm.em.fork().transactional(async (em) => {
      await em.getConnection().execute(`select pg_current_xact_id()`, [], "all", em.getTransactionContext());
      begin();
      await ended;
    });
    await begun;
    const next = iterator.next();
    const saved = await save(form.id, { answers: { q_name: "behind" }, completed: true });
    const early = await Promise.race([next.then(() => "streamed"), new Promise((resolve) => setTimeout(() => resolve("held"), 300))]);
    assert.equal(early, "held", "a row behind a running transaction is not read yet (it could be skipped)");
    const endedAt = performance.now();
    end();
    await older;
    const streamed = await next;
    assert.ok(!streamed.done);
    assert.equal(streamed.value.event?.responseId, saved.responseId);
    assert.ok(performance.now() - endedAt < 10_000, "found by looking again, not by the minute's poll");
    abort.abort();
    await iterator.return?.();
  });
});

describe("StreamCompletions: transactions of many rows (group commit)", () => {
  it("streams a transaction larger than one read whole, its rows before the last carrying the cursor before it", { timeout: 30_000 }, async () => {
    const form = addForm();
    await save(form.id, { answers: { q_name: "template" }, completed: true });
    const [template] = await outboxRows(form.id);
    const connection = orm.em.getConnection();
    // 150 rows in one transaction (one read takes 100), after one of their own.
    const [{ txid: beforeTxid }] = await connection.execute(`select max("txid")::text as txid from "submissions"."outbox"`);
    await connection.execute(
      `insert into "submissions"."outbox" ("event_id", "form_id", "event_type", "payload", "request_id", "trace_parent", "created_at")
       select 'evt_many_' || n, form_id, event_type, payload, request_id, trace_parent, created_at
         from "submissions"."outbox", generate_series(1, 150) as n where id = ?`,
      [template.id],
    );
    const [{ txid: manyTxid }] = await connection.execute(`select "txid"::text as txid from "submissions"."outbox" where event_id = 'evt_many_1'`);
    const abort = new AbortController();
    const iterator = client.streamCompletions({ afterCursor: BigInt(beforeTxid) }, { signal: abort.signal })[Symbol.asyncIterator]();
    const cursors: bigint[] = [];
    for (let i = 0; i < 150; i++) cursors.push((await iterator.next()).value!.cursor);
    abort.abort();
    await iterator.return?.();
    assert.deepEqual(cursors.slice(0, 149), Array(149).fill(BigInt(beforeTxid)), "mid-transaction rows: the cursor before it");
    assert.equal(cursors[149], BigInt(manyTxid));
  });
});

describe("events beyond completions", () => {
  const paged: FormDocument = {
    title: "Paged",
    blocks: [
      { id: "p_name", key: "name", type: "SHORT_TEXT", question: "Name" },
      { id: "pb1", type: "PAGE_BREAK" },
      { id: "p_age", key: "age", type: "NUMBER", question: "Age" },
      { id: "pb2", type: "PAGE_BREAK" },
      { id: "p_mail", key: "mail", type: "EMAIL", question: "Email" },
    ],
  };

  it("writes a FORM_RESPONSE_PARTIAL when a partial save reaches another page, once per page change, with the answers so far", async () => {
    const form = addForm({ name: "Paged", versions: [paged] });
    const partials = async () =>
      (await outboxRows(form.id, "FORM_RESPONSE_PARTIAL")).map((row) => {
        const { event } = decodeEvent(row.payload as Buffer, "FORM_RESPONSE_PARTIAL");
        assert.equal(event.case, "formResponsePartial");
        return event.value;
      });
    const first = await save(form.id, { answers: { name: "Ada" } });
    await save(form.id, { responseId: first.responseId, answers: { name: "Ada L." } });
    assert.deepEqual((await partials()).map((p) => p.page), [1], "saved again on page 1: no second event");
    await save(form.id, { responseId: first.responseId, answers: { name: "Ada L.", age: 36 } });
    const [, second] = await partials();
    assert.deepEqual([second.page, second.responseId, second.formName, second.workspaceId], [2, first.responseId, "Paged", "ws-ada"]);
    assert.deepEqual(second.fields.map((f) => [f.questionId, f.value ? toJson(ValueSchema, f.value) : undefined]), [["p_name", "Ada L."], ["p_age", 36], ["p_mail", null]]);
    await save(form.id, { responseId: first.responseId, answers: { name: "Ada L.", age: 36, mail: "ada@example.com" }, completed: true });
    assert.equal((await partials()).length, 2, "a completion is a FORM_RESPONSE, not a partial");
    assert.equal((await outboxRows(form.id)).length, 1);
  });

  it("streams every event type in the envelope (a completion also bare, for an older delivery)", async () => {
    const form = addForm({ versions: [paged] });
    const partial = await save(form.id, { answers: { name: "Bo" } });
    const [row] = await outboxRows(form.id, "FORM_RESPONSE_PARTIAL");
    const txid = BigInt((await orm.em.getConnection().execute(`select "txid"::text as txid from "submissions"."outbox" where id = ?`, [row.id]))[0].txid);
    await save(form.id, { responseId: partial.responseId, answers: { name: "Bo" }, completed: true });
    const abort = new AbortController();
    const iterator = client.streamCompletions({ afterCursor: txid - 1n }, { signal: abort.signal })[Symbol.asyncIterator]();
    const one = (await iterator.next()).value!;
    const two = (await iterator.next()).value!;
    assert.deepEqual([one.envelope?.event.case, one.event], ["formResponsePartial", undefined]);
    assert.deepEqual([two.envelope?.event.case, two.event?.responseId], ["formResponse", partial.responseId]);
    abort.abort();
    await iterator.return?.();
  });

  it("RecordFormEvent puts a form event into the outbox once per event id, and refuses any other event", async () => {
    const form = addForm();
    const closed = create(EventSchema, { event: { case: "formClosed", value: { eventId: `evt_${form.id}`, formId: form.id, formName: "Survey", status: "closed", version: 1 } } });
    await client.recordFormEvent({ event: closed, requestId: "req-9" });
    await client.recordFormEvent({ event: closed, requestId: "req-9" });
    const rows = await outboxRows(form.id, "FORM_CLOSED");
    assert.deepEqual(rows.map((r) => [r.event_id, r.request_id]), [[`evt_${form.id}`, "req-9"]]);
    const completion = create(EventSchema, { event: { case: "formResponse", value: { eventId: "evt_x", formId: form.id } } });
    await rejectsWith(client.recordFormEvent({ event: completion }), Code.InvalidArgument, "event: must be a FORM_PUBLISHED, FORM_CLOSED or FORM_DELETED event");
    await rejectsWith(client.recordFormEvent({}), Code.InvalidArgument);
  });
});

describe("ListSubmissions, GetSubmission, DeleteSubmission", () => {
  it("lists newest first, filtered and paged", async () => {
    const form = addForm();
    const a = await save(form.id, { answers: { q_name: "a" }, completed: true });
    const b = await save(form.id, { answers: { q_name: "b" } });
    const c = await save(form.id, { answers: { q_name: "c" }, completed: true });
    const ids = async (filter: SubmissionFilter, page = 0, limit = 0) => {
      const res = await client.listSubmissions({ formId: form.id, filter, page, limit }, ada);
      return { ids: res.submissions.map((s) => s.id), hasMore: res.hasMore };
    };
    assert.deepEqual(await ids(SubmissionFilter.UNSPECIFIED), { ids: [c.responseId, b.responseId, a.responseId], hasMore: false });
    assert.deepEqual(await ids(SubmissionFilter.ALL), { ids: [c.responseId, b.responseId, a.responseId], hasMore: false });
    assert.deepEqual(await ids(SubmissionFilter.COMPLETED), { ids: [c.responseId, a.responseId], hasMore: false });
    assert.deepEqual(await ids(SubmissionFilter.PARTIAL), { ids: [b.responseId], hasMore: false });
    assert.deepEqual(await ids(SubmissionFilter.ALL, 1, 2), { ids: [c.responseId, b.responseId], hasMore: true });
    assert.deepEqual(await ids(SubmissionFilter.ALL, 2, 2), { ids: [a.responseId], hasMore: false });
    const listed = (await client.listSubmissions({ formId: form.id, filter: SubmissionFilter.COMPLETED }, ada)).submissions[0];
    assert.equal(listed.answers.q_name.value && toJson(ValueSchema, listed.answers.q_name.value), "c");
    await rejectsWith(client.listSubmissions({ formId: form.id, filter: 9 as SubmissionFilter }, ada), Code.InvalidArgument);
    await rejectsWith(client.listSubmissions({ formId: form.id, limit: 501 }, ada), Code.InvalidArgument);
  });

  it("pages by cursor: every row once, in order, while rows arrive and the cursor's own row goes; OFFSET repeats", async () => {
    const form = addForm();
    const original: string[] = [];
    for (let i = 0; i < 7; i++) original.unshift((await save(form.id, { answers: { q_name: `r${i}` }, completed: i % 2 === 0 })).responseId);
    // Three rows, now the oldest, share one timestamp to the microsecond: the id decides, and a cursor
    // (milliseconds) still finds its place.
    await orm.em
      .fork()
      .getConnection()
      .execute(`update "submissions"."responses" set created_at = '2025-06-01 10:00:00.123456+00' where id in (?, ?, ?)`, original.slice(2, 5));
    const expected = [...original.slice(0, 2), ...original.slice(5), ...original.slice(2, 5).sort().reverse()];
    const byCursor: string[] = [];
    let cursor = "";
    for (let pages = 0; ; pages++) {
      const res = await client.listSubmissions({ formId: form.id, limit: 2, cursor }, ada);
      byCursor.push(...res.submissions.map((s) => s.id));
      await save(form.id, { answers: { q_name: "arrived meanwhile" }, completed: true });
      if (pages === 1) await client.deleteSubmission({ formId: form.id, submissionId: byCursor.at(-1)! }, ada);
      assert.equal(res.hasMore, res.nextCursor !== "");
      if (!res.hasMore) break;
      cursor = res.nextCursor;
    }
    assert.deepEqual(byCursor, expected, "every row that was there at the start, once, newest first");

    const byOffset: string[] = [];
    for (let page = 1; page <= 3; page++) {
      byOffset.push(...(await client.listSubmissions({ formId: form.id, limit: 2, page }, ada)).submissions.map((s) => s.id));
      await save(form.id, { answers: { q_name: "arrived meanwhile" }, completed: true });
    }
    assert.ok(new Set(byOffset).size < byOffset.length, "OFFSET paging shows a row twice when rows arrive between pages");

    await rejectsWith(client.listSubmissions({ formId: form.id, cursor: "bm90IGEgY3Vyc29y" }, ada), Code.InvalidArgument, "cursor is not a cursor this list gave");
    await rejectsWith(client.listSubmissions({ formId: form.id, cursor, page: 2 }, ada), Code.InvalidArgument, "give page or cursor, not both");
  });

  it("filters by since/until (submittedAt), updatedSince (updatedAt) and afterId, with each other and with filter", async () => {
    const form = addForm();
    const at = async (id: string) => {
      const sub = await submission(form.id, id);
      return { created: timestampDate(sub.createdAt!), updated: timestampDate(sub.updatedAt!), submitted: sub.submittedAt && timestampDate(sub.submittedAt) };
    };
    const a = (await save(form.id, { answers: { q_name: "a" }, completed: true })).responseId;
    const b = (await save(form.id, { answers: { q_name: "b" } })).responseId;
    const c = (await save(form.id, { answers: { q_name: "c" }, completed: true })).responseId;
    const d = (await save(form.id, { answers: { q_name: "d" } })).responseId;
    const beforeB = new Date((await at(c)).submitted!.getTime() + 1);
    await save(form.id, { responseId: b, answers: { q_name: "b" }, completed: true }); // completed after c
    const ts = (date: Date) => timestampFromDate(date);
    const ids = async (query: Omit<Parameters<typeof client.listSubmissions>[0], "formId" | "$typeName">) =>
      (await client.listSubmissions({ formId: form.id, ...query }, ada)).submissions.map((s) => s.id);
    const times = { a: await at(a), c: await at(c), b: await at(b), d: await at(d) };

    assert.deepEqual(await ids({ since: ts(times.c.submitted!) }), [c, b], "completed at or after c's submit: b was completed later");
    assert.deepEqual(await ids({ until: ts(times.c.submitted!) }), [a], "until is exclusive; partial ones have no submittedAt");
    assert.deepEqual(await ids({ since: ts(times.a.submitted!), until: ts(beforeB) }), [c, a]);
    assert.deepEqual(await ids({ updatedSince: ts(times.d.updated) }), [d, b], "b was completed after d was created");
    assert.deepEqual(await ids({ updatedSince: ts(times.d.updated), filter: SubmissionFilter.COMPLETED }), [b]);
    assert.deepEqual(await ids({ updatedSince: ts(times.d.updated), filter: SubmissionFilter.PARTIAL }), [d]);
    assert.deepEqual(await ids({ afterId: a }), [d, c, b], "created after a, newest first");
    assert.deepEqual(await ids({ afterId: b, filter: SubmissionFilter.COMPLETED }), [c]);
    assert.deepEqual(await ids({ afterId: d }), []);
    const first = await client.listSubmissions({ formId: form.id, afterId: a, limit: 2 }, ada);
    assert.deepEqual(first.submissions.map((s) => s.id), [d, c]);
    assert.deepEqual(await ids({ afterId: a, limit: 2, cursor: first.nextCursor }), [b], "a cursor keeps the filters' range");
    await rejectsWith(client.listSubmissions({ formId: form.id, afterId: "no-such" }, ada), Code.InvalidArgument, "afterId names no submission of this form");
  });

  it("masks forms the caller cannot see: forms' NOT_FOUND passes through unchanged", async () => {
    const form = addForm();
    const res = await save(form.id, { answers: { q_name: "secret" }, completed: true });
    const calls = [
      (who: ReturnType<typeof as>, formId: string) => client.listSubmissions({ formId }, who),
      (who: ReturnType<typeof as>, formId: string) => client.getSubmission({ formId, submissionId: res.responseId }, who),
      (who: ReturnType<typeof as>, formId: string) => client.deleteSubmission({ formId, submissionId: res.responseId }, who),
    ];
    for (const call of calls) {
      await rejectsWith(call(bob, form.id), Code.NotFound, "form not found");
      await rejectsWith(call(bob, "unknown-form"), Code.NotFound, "form not found");
      await rejectsWith(client.listSubmissions({ formId: form.id }), Code.Unauthenticated);
    }
    form.trashed = true;
    await rejectsWith(client.getSubmission({ formId: form.id, submissionId: res.responseId }, ada), Code.NotFound, "form not found");
    form.trashed = false;
    assert.equal((await submission(form.id, res.responseId)).id, res.responseId, "nothing was deleted");
    assert.equal(await countOf(form), 1);
  });

  it("answers NOT_FOUND for a submission of another form or none", async () => {
    const form = addForm();
    const other = addForm();
    const res = await save(other.id, { answers: { q_name: "x" } });
    await rejectsWith(client.getSubmission({ formId: form.id, submissionId: res.responseId }, ada), Code.NotFound, "submission not found");
    await rejectsWith(client.deleteSubmission({ formId: form.id, submissionId: res.responseId }, ada), Code.NotFound, "submission not found");
    await rejectsWith(client.getSubmission({ formId: form.id, submissionId: "" }, ada), Code.NotFound, "submission not found");
  });

  it("deletes a completed submission with every file, and lowers the count", async () => {
    const form = addForm();
    const cv = await upload(form.id, "cv bytes");
    const sig = await upload(form.id, "sig bytes");
    const res = await save(form.id, { answers: { q_name: "A", cv: [cv.uploadId], sig: [sig.uploadId] }, completed: true });
    const keep = await save(form.id, { answers: { q_name: "B" }, completed: true });
    assert.equal(await countOf(form), 2);
    assert.ok(existsSync(join(filesDir, "files", cv.uploadId)));

    await client.deleteSubmission({ formId: form.id, submissionId: res.responseId }, ada);
    await rejectsWith(client.getSubmission({ formId: form.id, submissionId: res.responseId }, ada), Code.NotFound, "submission not found");
    for (const id of [cv.uploadId, sig.uploadId]) {
      await rejectsWith(client.readFile({ fileId: id }), Code.NotFound, "file not found");
      assert.equal(existsSync(join(filesDir, "files", id)), false, "bytes are gone from disk");
    }
    assert.deepEqual(await uploadRows("response_id = ?", [res.responseId]), []);
    assert.equal(await countOf(form), 1);
    assert.equal((await submission(form.id, keep.responseId)).id, keep.responseId);
    // Twice: NOT_FOUND, and the count is lowered once only.
    await rejectsWith(client.deleteSubmission({ formId: form.id, submissionId: res.responseId }, ada), Code.NotFound, "submission not found");
    assert.equal(await countOf(form), 1);
  });

  it("deletes a partial submission without touching the count", async () => {
    const form = addForm();
    await save(form.id, { answers: { q_name: "done" }, completed: true });
    const partial = await save(form.id, { answers: { q_name: "partial" } });
    await client.deleteSubmission({ formId: form.id, submissionId: partial.responseId }, ada);
    assert.equal(await countOf(form), 1);
    await rejectsWith(client.getSubmission({ formId: form.id, submissionId: partial.responseId }, ada), Code.NotFound);
  });
});

describe("response counts", () => {
  /** Until forms has been asked to set the form's count (the pusher runs on its own). */
  async function pushAttempted(form: FakeForm): Promise<void> {
    for (let i = 0; i < 500 && !fakeForms.calls.setResponseCounts.some((call) => call.id === form.id); i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.ok(fakeForms.calls.setResponseCounts.some((call) => call.id === form.id), "the pusher sent the form's count");
  }

  it("answers a completion while forms' count call hangs; the count follows once forms answers", async () => {
    const form = addForm();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    fakeForms.holdWith = (method) => (method === "setResponseCounts" ? held : undefined);
    const first = await save(form.id, { answers: { q_name: "A" }, completed: true });
    await pushAttempted(form);
    // The push of the first completion is hanging; the next ones are answered all the same.
    const more = await Promise.all([save(form.id, { answers: { q_name: "B" }, completed: true }), save(form.id, { answers: { q_name: "C" }, completed: true })]);
    assert.deepEqual([first, ...more].map((r) => r.completed), [true, true, true]);
    assert.equal(form.responseCount, 0, "forms has not taken any count yet");
    release();
    assert.equal(await countOf(form), 3);
  });

  it("keeps pushing after forms fails, and converges to the exact count", async () => {
    const form = addForm();
    fakeForms.failWith = (method) => (method === "setResponseCounts" ? new ConnectError("forms is down", Code.Unavailable) : undefined);
    logged.length = 0;
    for (const name of ["A", "B", "C"]) assert.equal((await save(form.id, { answers: { q_name: name }, completed: true })).completed, true);
    await assert.rejects(counts.flush(), /forms is down/);
    await pushAttempted(form);
    assert.equal(form.responseCount, 0);
    assert.ok(logged.some((line) => line.level === "warn" && line.msg === "response counts not pushed: retrying"));
    fakeForms.failWith = undefined;
    // Nobody flushes: the pusher's own retry brings the count.
    const held = () => fakeForms.forms.get(form.id)!.responseCount;
    for (let i = 0; i < 500 && held() !== 3; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(held(), 3);
  });

  it("is exact after concurrent completions of every kind and deletions, and follows a purge to zero", async () => {
    const form = addForm();
    const partials = await Promise.all(Array.from({ length: 5 }, (_, i) => save(form.id, { answers: { q_name: `partial ${i}` } })));
    const completions = await Promise.all([
      ...Array.from({ length: 40 }, (_, i) => save(form.id, { answers: { q_name: `new ${i}` }, completed: true })),
      ...Array.from({ length: 5 }, (_, i) => save(form.id, { answers: { q_name: `keyed ${i}` }, completed: true, idempotencyKey: `count-${i}` })),
      ...Array.from({ length: 5 }, (_, i) => save(form.id, { answers: { q_name: `keyed ${i}` }, completed: true, idempotencyKey: `count-${i}` })),
      ...partials.map((p) => save(form.id, { responseId: p.responseId, completed: true })),
    ]);
    assert.equal(new Set(completions.map((r) => r.responseId)).size, 50, "a repeated key stores nothing twice");
    await Promise.all([
      ...completions.slice(0, 5).map((r) => client.deleteSubmission({ formId: form.id, submissionId: r.responseId }, ada)),
      save(form.id, { answers: { q_name: "left partial" } }).then((r) => client.deleteSubmission({ formId: form.id, submissionId: r.responseId }, ada)),
    ]);
    assert.equal(await countOf(form), 45);
    const stored = await orm.em.fork().getConnection().execute(`select count(*)::int as n from "submissions"."responses" where form_id = ? and completed`, [form.id]);
    assert.equal(stored[0].n, 45);

    form.trashed = true;
    await client.deleteFormResponses({ formId: form.id });
    assert.equal(await countOf(form), 0);
  });
});

describe("files left behind", () => {
  it("a store failing to remove bytes after a delete leaves an unreachable orphan, logged; the submission is gone", async () => {
    const store = createLocalFileStore(join(filesDir, "files"));
    const failing: FileStore = { ...store, delete: async () => Promise.reject(new Error("disk on fire")) };
    const handlers = createSubmissionsHandlers({ calculatedFields, orm, forms: fakeForms.client, files: failing, logger: testLogger });
    const flaky = createClient(SubmissionsService, createRouterTransport((router) => routes(router, handlers)));
    const form = addForm();
    const cv = await flaky.createUpload(uploadOf({ formId: form.id, name: "cv.pdf", content: new TextEncoder().encode("cv") }));
    const res = await flaky.saveResponse({ formId: form.id, answers: { q_name: "A", cv: [cv.uploadId] }, completed: true });
    logged.length = 0;
    await flaky.deleteSubmission({ formId: form.id, submissionId: res.responseId }, ada);
    assert.deepEqual(logged, [{ level: "error", msg: "orphan file left in the store" }]);
    await rejectsWith(flaky.readFile({ fileId: cv.uploadId }), Code.NotFound, "file not found");
    await rejectsWith(flaky.getSubmission({ formId: form.id, submissionId: res.responseId }, ada), Code.NotFound);
    assert.ok(existsSync(join(filesDir, "files", cv.uploadId)), "the bytes are still there, but nothing reaches them");
    assert.equal(await countOf(form), 0);
  });

  it("sweeps uploads no save attached within the time-to-live, and only those", async () => {
    const form = addForm();
    const attached = await upload(form.id, "kept");
    const stale = await upload(form.id, "stale");
    await save(form.id, { answers: { cv: [attached.uploadId] } });
    const fresh = await upload(form.id, "fresh");
    const files = createLocalFileStore(join(filesDir, "files"));
    const cutoff = new Date(clock - 500);
    // Everything older than `fresh` that is unattached goes (earlier tests leave some too).
    const swept = await sweepUnattachedUploads({ orm, files, createdBefore: cutoff, batchSize: 2 });
    assert.ok(swept >= 1);
    assert.deepEqual(await uploadRows("id = ?", [stale.uploadId]), []);
    assert.equal(existsSync(join(filesDir, "files", stale.uploadId)), false);
    assert.equal((await uploadRows("id = ?", [attached.uploadId])).length, 1);
    assert.equal((await uploadRows("id = ?", [fresh.uploadId])).length, 1);
    assert.deepEqual(await uploadRows("response_id is null and created_at < ?", [cutoff]), []);
    assert.equal(new TextDecoder().decode((await client.readFile({ fileId: attached.uploadId })).content), "kept");
    await rejectsWith(save(form.id, { answers: { sig: [stale.uploadId] } }), Code.InvalidArgument, /is not an upload of this form/);
  });
});

describe("storage quotas, sweeping abandoned uploads, download links", () => {
  /** A client of handlers sharing the database, with their own quotas and store. */
  function clientWith(deps: Partial<Parameters<typeof createSubmissionsHandlers>[0]>) {
    const handlers = createSubmissionsHandlers({
      calculatedFields,
      orm,
      forms: fakeForms.client,
      files: createLocalFileStore(join(filesDir, "files")),
      logger: testLogger,
      now: () => new Date((clock += 1000)),
      ...deps,
    });
    return createClient(SubmissionsService, createRouterTransport((router) => routes(router, handlers)));
  }
  const bytes = (n: number) => new Uint8Array(n).fill(7);

  it("refuses an upload past the form's or the workspace's quota, storing nothing", async () => {
    members["ws-quota"] = ["user-ada"];
    const limited = clientWith({ quotas: { formQuotaBytes: 10, workspaceQuotaBytes: 15 } });
    const first = addForm({ workspaceId: "ws-quota" });
    const second = addForm({ workspaceId: "ws-quota" });
    await limited.createUpload(uploadOf({ formId: first.id, name: "a.bin", content: bytes(6) }));
    await rejectsWith(limited.createUpload(uploadOf({ formId: first.id, name: "b.bin", content: bytes(5) })), Code.ResourceExhausted, "file: this form's storage quota of 10 bytes is full");
    await limited.createUpload(uploadOf({ formId: second.id, name: "c.bin", content: bytes(9) }));
    await rejectsWith(limited.createUpload(uploadOf({ formId: second.id, name: "d.bin", content: bytes(1) })), Code.ResourceExhausted, /this workspace's storage quota/);
    assert.equal((await uploadRows("workspace_id = ?", ["ws-quota"])).length, 2);
    assert.equal(readdirSync(join(filesDir, "files")).filter((f) => f.startsWith(".")).length, 0, "no temporary file left");
  });

  it("bounds an upload of unannounced size (0) while it streams: by 10 MiB, by the quota, and refuses an empty one", async () => {
    members["ws-unannounced"] = ["user-ada"];
    const limited = clientWith({ quotas: { formQuotaBytes: maxUploadBytes, workspaceQuotaBytes: maxUploadBytes * 4 } });
    const form = addForm({ workspaceId: "ws-unannounced" });
    const unannounced = (...sizes: number[]) =>
      (async function* () {
        yield { part: { case: "header" as const, value: { formId: form.id, name: "s.bin", contentType: "", size: 0n } } };
        for (const n of sizes) yield { part: { case: "chunk" as const, value: bytes(n) } };
      })();
    const kept = await limited.createUpload(unannounced(3, 4));
    assert.equal(kept.size, 7n);
    const roomy = clientWith({ quotas: { formQuotaBytes: maxUploadBytes * 4, workspaceQuotaBytes: maxUploadBytes * 4 } });
    await rejectsWith(roomy.createUpload(unannounced(maxUploadBytes / 2, maxUploadBytes / 2, 1)), Code.InvalidArgument, /larger than 10 MiB/);
    await rejectsWith(limited.createUpload(unannounced(maxUploadBytes / 2, maxUploadBytes / 2)), Code.ResourceExhausted, /this form's storage quota/);
    await rejectsWith(limited.createUpload(unannounced()), Code.InvalidArgument, "file: is empty");
    assert.deepEqual((await uploadRows("form_id = ?", [form.id])).map((r) => Number(r.size)), [7]);
    assert.equal(readdirSync(join(filesDir, "files")).filter((f) => f.startsWith(".")).length, 0, "no temporary file left");
  });

  it("counts concurrent uploads of one workspace one after another: together they never pass the quota", async () => {
    members["ws-race"] = ["user-ada"];
    const limited = clientWith({ quotas: { formQuotaBytes: 10, workspaceQuotaBytes: 100 } });
    const form = addForm({ workspaceId: "ws-race" });
    const results = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => limited.createUpload(uploadOf({ formId: form.id, name: `${i}.bin`, content: bytes(4) }))));
    assert.equal(results.filter((r) => r.status === "fulfilled").length, 2);
    const rows = await uploadRows("form_id = ?", [form.id]);
    assert.equal(rows.length, 2);
    // The refused ones' bytes were removed again.
    for (const r of results) {
      if (r.status === "rejected") assert.equal(ConnectError.from(r.reason).code, Code.ResourceExhausted);
    }
  });

  it("tells the files and bytes a form's responses hold (not unattached uploads), and the quota", async () => {
    const form = addForm();
    const cv = await upload(form.id, "12345");
    const sig = await upload(form.id, "123", "sig.png", "image/png");
    await upload(form.id, "not attached");
    await save(form.id, { answers: { cv: [cv.uploadId], sig: [sig.uploadId] } });
    const held = await client.getFormStorage({ formId: form.id }, ada);
    assert.equal(held.files, 2n);
    assert.equal(held.bytes, 8n);
    assert.equal(held.quotaBytes, 1024n ** 3n);
    await rejectsWith(client.getFormStorage({ formId: form.id }, as("user-bob")), Code.NotFound);
  });

  it("sweeps the uploads of partial responses not saved since the cut-off, and only those", async () => {
    const form = addForm();
    const abandoned = await upload(form.id, "left behind");
    const partial = await save(form.id, { answers: { cv: [abandoned.uploadId] } });
    const done = await upload(form.id, "completed");
    await save(form.id, { answers: { cv: [done.uploadId], q_name: "Ada" }, completed: true });
    const cutoff = new Date(clock + 500);
    const recent = await upload(form.id, "recent");
    await save(form.id, { answers: { cv: [recent.uploadId] } });
    const files = createLocalFileStore(join(filesDir, "files"));

    const swept = await sweepAbandonedUploads({ orm, files, updatedBefore: cutoff, batchSize: 1 });
    assert.ok(swept >= 1);
    assert.deepEqual(await uploadRows("id = ?", [abandoned.uploadId]), []);
    assert.equal(existsSync(join(filesDir, "files", abandoned.uploadId)), false);
    for (const kept of [done, recent]) assert.equal((await uploadRows("id = ?", [kept.uploadId])).length, 1);
    // The partial response stays; its answer's file is gone, so resuming it asks for the file again.
    assert.equal((await responseRows(form.id)).length, 3);
    await rejectsWith(save(form.id, { responseId: partial.responseId, completed: true, answers: { q_name: "Ada" } }), Code.InvalidArgument, /is not an upload of this form/);
  });

  it("takes a file in chunks, and refuses a stream that is not header then exactly the bytes announced, keeping nothing", async () => {
    const form = addForm();
    const content = new Uint8Array(600_000).map((_, i) => i % 251);
    const chunked = await client.createUpload(uploadOf({ formId: form.id, name: "big.bin", content }));
    assert.equal(chunked.size, 600_000n);
    await save(form.id, { answers: { cv: [chunked.uploadId] } });
    assert.deepEqual((await client.readFile({ fileId: chunked.uploadId })).content, content);

    const header = (size: number) => ({ part: { case: "header" as const, value: { formId: form.id, name: "x.bin", size: BigInt(size) } } });
    const chunk = (n: number) => ({ part: { case: "chunk" as const, value: new Uint8Array(n) } });
    async function* stream(...messages: object[]) {
      for (const m of messages) yield m as ReturnType<typeof chunk>;
    }
    const before = (await uploadRows("form_id = ?", [form.id])).length;
    const files = () => readdirSync(join(filesDir, "files")).length;
    const storedFiles = files();
    await rejectsWith(client.createUpload(stream(chunk(3))), Code.InvalidArgument, "the upload must begin with its header");
    await rejectsWith(client.createUpload(stream(header(5), chunk(3))), Code.InvalidArgument, "file: 3 bytes of the 5 announced");
    await rejectsWith(client.createUpload(stream(header(5), chunk(3), chunk(3))), Code.InvalidArgument, "file: more than the 5 bytes announced");
    await rejectsWith(client.createUpload(stream(header(5), header(5))), Code.InvalidArgument, "the upload has a second header");
    await rejectsWith(client.createUpload(stream(header(maxUploadBytes + 1), chunk(1))), Code.InvalidArgument, /larger than 10 MiB/);
    assert.equal((await uploadRows("form_id = ?", [form.id])).length, before);
    assert.equal(files(), storedFiles, "no file, temporary or not, is left");
  });

  it("answers a store's download URL instead of the bytes when the store has one", async () => {
    const local = createLocalFileStore(join(filesDir, "files"));
    const asked: unknown[] = [];
    const presigning: FileStore = {
      ...local,
      async downloadUrl(key, file, seconds) {
        asked.push({ key, name: file.name, contentType: file.contentType, seconds });
        return `http://127.0.0.1:1/bucket/${key}?X-Amz-Expires=${seconds}`;
      },
    };
    const withUrls = clientWith({ files: presigning });
    const form = addForm();
    const cv = await withUrls.createUpload(uploadOf({ formId: form.id, name: "cv.pdf", contentType: "application/pdf", content: bytes(3) }));
    await save(form.id, { answers: { cv: [cv.uploadId] } });
    const read = await withUrls.readFile({ fileId: cv.uploadId });
    assert.equal(read.downloadUrl, `http://127.0.0.1:1/bucket/${cv.uploadId}?X-Amz-Expires=300`);
    assert.equal(read.content.length, 0);
    assert.equal(read.file?.name, "cv.pdf");
    assert.deepEqual(asked, [{ key: cv.uploadId, name: "cv.pdf", contentType: "application/pdf", seconds: 300 }]);
  });
});

describe("ListResponseEvents", () => {
  it("answers the latest responses' events newest first, as a webhook is sent them; partial ones as FORM_RESPONSE_PARTIAL", async () => {
    const form = addForm();
    const first = await save(form.id, { answers: { q_name: "Ada", plan: "pro" }, completed: true });
    const second = await save(form.id, { answers: { q_name: "Bob" }, completed: true });
    const partial = await save(form.id, { answers: { q_name: "Cy" }, completed: false });
    const { events } = await client.listResponseEvents({ formId: form.id, eventType: "FORM_RESPONSE", limit: 10 }, ada);
    assert.deepEqual(events.map((e) => e.event.case), ["formResponse", "formResponse"]);
    const [latest, earlier] = events.map((e) => e.event.value as ResponseCompleted);
    assert.deepEqual([latest.responseId, earlier.responseId], [second.responseId, first.responseId]);
    assert.equal(earlier.eventId, `sample_${first.responseId}`);
    const plan = earlier.fields.find((f) => f.label === "Plan");
    assert.deepEqual([plan?.options.map((o) => o.text), plan?.value && toJson(ValueSchema, plan.value)], [["Free", "Pro"], "pro"]);
    const partials = await client.listResponseEvents({ formId: form.id, eventType: "FORM_RESPONSE_PARTIAL", limit: 1 }, ada);
    assert.deepEqual(partials.events.map((e) => [e.event.case, eventFacts(e).responseId]), [["formResponsePartial", partial.responseId]]);
    assert.deepEqual((await client.listResponseEvents({ formId: addForm().id, eventType: "FORM_RESPONSE", limit: 3 }, ada)).events, []);
  });

  it("refuses other event types, limits out of 1 to 10, and a form the caller cannot see", async () => {
    const form = addForm();
    await rejectsWith(client.listResponseEvents({ formId: form.id, eventType: "FORM_PUBLISHED", limit: 3 }, ada), Code.InvalidArgument, /^eventType: /);
    await rejectsWith(client.listResponseEvents({ formId: form.id, eventType: "FORM_RESPONSE", limit: 11 }, ada), Code.InvalidArgument, "limit: 1 to 10");
    await rejectsWith(client.listResponseEvents({ formId: form.id, eventType: "FORM_RESPONSE", limit: 3 }, bob), Code.NotFound);
  });
});
