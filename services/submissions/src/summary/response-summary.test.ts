import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import type { FormDocument } from "@formsvc/form-document";
import { asCaller } from "@formsvc/platform/caller.ts";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { rejectsWith } from "@formsvc/platform/testing/rpc-assertions.ts";
import { SubmissionsService, type QuestionSummary, type SummarizeResponsesResponse } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { FakeForms } from "../../../forms/src/testing/fake-forms.ts";
import { entities } from "../entities/index.ts";
import { createLocalFileStore } from "../files/local-file-store.ts";
import { createSubmissionsHandlers, routes } from "../handlers/submissions-handlers.ts";
import { migrations } from "../migrations/index.ts";
import { latestTextCount, maxSearchLength } from "./response-summary.ts";

const fakeForms = new FakeForms();
fakeForms.members["ws-ada"] = ["user-ada"];
const ada = asCaller("user-ada");
const bob = asCaller("user-bob");

/** A question of every answer shape (and dates), so each kind of summary is seen. */
const poll: FormDocument = {
  title: "Poll",
  blocks: [
    { id: "b_name", key: "name", type: "SHORT_TEXT", question: "Name" },
    { id: "b_age", key: "age", type: "NUMBER", question: "Age" },
    { id: "b_day", key: "day", type: "DATE", question: "Day" },
    { id: "b_plan", key: "plan", type: "MULTIPLE_CHOICE", question: "Plan", options: [{ id: "free", text: "Free" }, { id: "pro", text: "Professional" }, { id: "team", text: "Team" }] },
    { id: "b_tags", key: "tags", type: "CHECKBOXES", question: "Tags", fieldName: "tags", options: [{ id: "a", text: "Alpha" }, { id: "b", text: "Beta" }] },
    { id: "b_stars", key: "stars", type: "RATING", question: "Stars", max: 4 },
    { id: "b_cv", key: "cv", type: "FILE", question: "CV" },
  ],
};

let database: TestDatabase;
let orm: MikroORM;
let filesDir: string;
let client: Client<typeof SubmissionsService>;
/** Each save happens a day after the one before. */
let clock = Date.parse("2026-03-01T12:00:00Z");
let formCounter = 0;

before(async () => {
  database = await createTestDatabase("submissions_summary_test");
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "submissions", entities, migrations });
  filesDir = mkdtempSync(join(tmpdir(), "submissions-summary-"));
  const handlers = createSubmissionsHandlers({
    orm,
    forms: fakeForms.client,
    files: createLocalFileStore(join(filesDir, "files")),
    now: () => new Date((clock += 24 * 3600 * 1000)),
  });
  client = createClient(SubmissionsService, createRouterTransport((router) => routes(router, handlers)));
});

after(async () => {
  await orm?.close(true);
  await database?.drop();
  if (filesDir) rmSync(filesDir, { recursive: true, force: true });
});

function addForm(document = poll) {
  return fakeForms.add({ id: `sum${++formCounter}`, workspaceId: "ws-ada", name: "Poll", versions: [document] });
}

const question = (summary: SummarizeResponsesResponse, key: string): QuestionSummary => {
  const found = summary.questions.find((q) => q.key === key);
  assert.ok(found, `no summary of ${key}`);
  return found;
};
const counts = (q: QuestionSummary) => q.counts.map((c) => [c.value, c.label, Number(c.count)]);

/** Three completed responses (each on a day of its own) and a partial one, which summaries leave out. */
async function filledForm() {
  const form = addForm();
  const cv = await client.createUpload(
    (async function* () {
      yield { part: { case: "header" as const, value: { formId: form.id, name: "cv.pdf", contentType: "application/pdf", size: 3n } } };
      yield { part: { case: "chunk" as const, value: new TextEncoder().encode("pdf") } };
    })(),
  );
  const answers: JsonObject[] = [
    { name: "Ada", age: 36, day: "2026-05-01", plan: "pro", tags: ["a", "b"], stars: 4, cv: [cv.uploadId] },
    { name: "Grace", age: 45, day: "2026-05-01", plan: "pro", tags: ["a"], stars: 2 },
    { name: "Linus", age: 21.5, day: "2026-05-03", plan: "free", stars: 4 },
  ];
  for (const a of answers) await client.saveResponse({ formId: form.id, answers: a, completed: true });
  await client.saveResponse({ formId: form.id, answers: { name: "Partial Pete", plan: "team" }, completed: false });
  return form;
}

describe("SummarizeResponses", () => {
  it("sums up each question by its answer shape over the completed responses", async () => {
    const form = await filledForm();
    const summary = await client.summarizeResponses({ formId: form.id }, ada);
    assert.equal(summary.responses, 3n);
    // The clock moves a day at each save (and more), so each response has a day of its own.
    const days = summary.submittedByDay.map((d) => d.value);
    assert.deepEqual(summary.submittedByDay.map((d) => d.count), [1n, 1n, 1n]);
    assert.deepEqual(days, [...days].sort(), "oldest first");
    assert.match(days[0], /^2026-03-\d\d$/);

    const name = question(summary, "name");
    assert.equal(name.shape, "text");
    assert.equal(name.answered, 3n);
    assert.deepEqual(name.latest, ["Linus", "Grace", "Ada"], "newest first");

    const age = question(summary, "age");
    assert.equal(age.shape, "number");
    assert.deepEqual([age.min, age.median, age.max], [21.5, 36, 45]);
    assert.ok(Math.abs(age.mean! - 34.1667) < 0.001);

    assert.deepEqual(counts(question(summary, "day")), [["2026-05-01", "", 2], ["2026-05-03", "", 1]], "dates by day");
    assert.deepEqual(question(summary, "day").latest, [], "dates are counted, not listed");
    assert.deepEqual(counts(question(summary, "plan")), [["free", "Free", 1], ["pro", "Professional", 2], ["team", "Team", 0]], "every option, the partial one not counted");
    const tags = question(summary, "tags");
    assert.equal(tags.label, "tags", "the field name labels it where one is given");
    assert.equal(tags.answered, 2n);
    assert.deepEqual(counts(tags), [["a", "Alpha", 2], ["b", "Beta", 1]]);
    assert.deepEqual(counts(question(summary, "stars")), [["1", "1", 0], ["2", "2", 1], ["3", "3", 0], ["4", "4", 2]], "every step of the scale");
    const cv = question(summary, "cv");
    assert.deepEqual([cv.shape, cv.answered, cv.files], ["uploads", 1n, 1n]);
  });

  it("sums up numbers at the ends of the double range without failing", async () => {
    const form = addForm();
    for (const age of [1e200, -1e200, 1.5e308]) await client.saveResponse({ formId: form.id, answers: { age }, completed: true });
    const age = question(await client.summarizeResponses({ formId: form.id }, ada), "age");
    assert.deepEqual([age.min, age.median, age.max], [-1e200, 1e200, 1.5e308]);
    assert.equal(age.mean, 5e307);
  });

  it("lists only the latest text answers", async () => {
    const form = addForm();
    for (let i = 1; i <= latestTextCount + 3; i++) await client.saveResponse({ formId: form.id, answers: { name: `n${i}` }, completed: true });
    const name = question(await client.summarizeResponses({ formId: form.id }, ada), "name");
    assert.equal(name.answered, BigInt(latestTextCount + 3));
    assert.equal(name.latest.length, latestTextCount);
    assert.equal(name.latest[0], `n${latestTextCount + 3}`);
  });

  it("answers zeros for a form without responses", async () => {
    const form = addForm();
    const summary = await client.summarizeResponses({ formId: form.id }, ada);
    assert.equal(summary.responses, 0n);
    assert.deepEqual(summary.submittedByDay, []);
    assert.equal(summary.questions.length, poll.blocks.length);
    for (const q of summary.questions) assert.equal(q.answered, 0n, q.key);
    assert.equal(question(summary, "age").min, undefined, "no numbers, no minimum");
    assert.deepEqual(counts(question(summary, "plan")), [["free", "Free", 0], ["pro", "Professional", 0], ["team", "Team", 0]]);
  });

  it("searches the answers' text and the chosen options' texts, case-insensitively", async () => {
    const form = await filledForm();
    const ofSearch = async (search: string) => (await client.summarizeResponses({ formId: form.id, search }, ada)).responses;
    assert.equal(await ofSearch("gRaCe"), 1n);
    assert.equal(await ofSearch("professional"), 2n, "Ada and Grace chose Professional");
    assert.equal(await ofSearch("beta"), 1n, "Ada ticked Beta");
    assert.equal(await ofSearch("2026-05"), 3n);
    assert.equal(await ofSearch("%"), 0n, "a LIKE wildcard matches itself only");
    assert.equal(await ofSearch("pete"), 0n, "partial responses are not summed up");
    await rejectsWith(client.summarizeResponses({ formId: form.id, search: "x".repeat(maxSearchLength + 1) }, ada), Code.InvalidArgument);
    const grace = await client.summarizeResponses({ formId: form.id, search: "grace" }, ada);
    assert.deepEqual(question(grace, "name").latest, ["Grace"]);
    assert.deepEqual([question(grace, "age").min, question(grace, "age").max], [45, 45]);
  });

  it("takes the responses submitted in a date range", async () => {
    const form = await filledForm();
    const [first, second] = (await client.summarizeResponses({ formId: form.id }, ada)).submittedByDay.map((d) => new Date(`${d.value}T00:00:00Z`));
    const since = await client.summarizeResponses({ formId: form.id, since: timestampFromDate(second) }, ada);
    assert.equal(since.responses, 2n);
    const until = await client.summarizeResponses({ formId: form.id, until: timestampFromDate(second) }, ada);
    assert.equal(until.responses, 1n);
    assert.deepEqual(question(until, "name").latest, ["Ada"]);
    const between = await client.summarizeResponses({ formId: form.id, since: timestampFromDate(first), until: timestampFromDate(first) }, ada);
    assert.equal(between.responses, 0n);
  });

  it("is a 404 for a caller outside the form's workspace", async () => {
    const form = addForm();
    await rejectsWith(client.summarizeResponses({ formId: form.id }, bob), Code.NotFound);
  });
});
