// The summary read from the counts equals the summary counted over the responses themselves, whatever
// happened to them: completions on many days, partial saves, deletions, the form's retention, a purge, an
// edit of the form, responses stored before the counts existed, date ranges cutting days in two.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import type { FormDocument } from "@formsvc/form-document";
import { asCaller } from "@formsvc/platform/caller.ts";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { FakeForms } from "../../../forms/src/testing/fake-forms.ts";
import { entities } from "../entities/index.ts";
import { createLocalFileStore } from "../files/local-file-store.ts";
import { deleteFormHoldings } from "../form-purge.ts";
import { createSubmissionsHandlers, routes } from "../handlers/submissions-handlers.ts";
import { migrations } from "../migrations/index.ts";
import { deleteResponsesBefore } from "../response-deletion.ts";
import { summarizeResponses, type SummaryFilter } from "./response-summary.ts";
import { foldSummaryChanges } from "./summary-counts.ts";

const fakeForms = new FakeForms();
fakeForms.members["ws-ada"] = ["user-ada"];
const ada = asCaller("user-ada");
const responsesTable = `"submissions"."responses"`;

const options = (...ids: string[]) => ids.map((id) => ({ id, text: id.toUpperCase() }));
/** A question of every tally: texts, numbers, choices, scales, a ranking, a matrix, files, a consent. */
const survey: FormDocument = {
  title: "Survey",
  blocks: [
    { id: "b_name", key: "name", type: "SHORT_TEXT", question: "Name" },
    { id: "b_age", key: "age", type: "NUMBER", question: "Age" },
    { id: "b_day", key: "day", type: "DATE", question: "Day" },
    { id: "b_plan", key: "plan", type: "MULTIPLE_CHOICE", question: "Plan", options: options("free", "pro", "team") },
    { id: "b_tags", key: "tags", type: "CHECKBOXES", question: "Tags", options: options("a", "b", "c") },
    { id: "b_stars", key: "stars", type: "RATING", question: "Stars", max: 5 },
    { id: "b_nps", key: "nps", type: "NPS", question: "Recommend?" },
    { id: "b_agree", key: "agree", type: "LINEAR_SCALE", question: "Agree?", min: 0, max: 4 },
    { id: "b_rank", key: "rank", type: "RANKING", question: "Rank", options: options("x", "y", "z") },
    { id: "b_grid", key: "grid", type: "MATRIX", question: "Grid", multiple: true, rows: options("r1", "r2"), columns: options("c1", "c2", "c3") },
    { id: "b_cv", key: "cv", type: "FILE", question: "CV" },
    { id: "b_terms", key: "terms", type: "CONSENT", question: "Terms", text: "I agree" },
  ],
};
/** The survey edited: an option and a question removed, a question's type changed under its key. */
const edited: FormDocument = {
  title: "Survey",
  blocks: [
    ...survey.blocks.filter((b) => !["name", "tags", "age"].includes((b as { key?: string }).key ?? "")).map((b) =>
      (b as { key?: string }).key === "plan" ? { ...b, options: options("free", "team", "enterprise") } : b,
    ),
    { id: "b_age", key: "age", type: "SHORT_TEXT", question: "Age, in words" },
  ],
};

let database: TestDatabase;
let orm: MikroORM;
let filesDir: string;
let client: Client<typeof SubmissionsService>;
/** Each save comes 5 h 7 min after the one before: several a day, days cut at odd hours. */
let clock = Date.parse("2026-03-01T01:00:00Z");
const step = (5 * 60 + 7) * 60 * 1000;
let formCounter = 0;
/** A fixed sequence of pseudo-random numbers, so every run sees the same responses. */
let seed = 36;
const random = (n: number) => ((seed = (seed * 16807) % 2147483647), seed % n);

before(async () => {
  database = await createTestDatabase("submissions_summary_counts_test");
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "submissions", entities, migrations });
  filesDir = mkdtempSync(join(tmpdir(), "submissions-summary-counts-"));
  const handlers = createSubmissionsHandlers({
    orm,
    forms: fakeForms.client,
    files: createLocalFileStore(join(filesDir, "files")),
    now: () => new Date((clock += step)),
  });
  client = createClient(SubmissionsService, createRouterTransport((router) => routes(router, handlers)));
});

after(async () => {
  await orm?.close(true);
  await database?.drop();
  if (filesDir) rmSync(filesDir, { recursive: true, force: true });
});

async function upload(formId: string) {
  const done = await client.createUpload(
    (async function* () {
      yield { part: { case: "header" as const, value: { formId, name: "cv.pdf", contentType: "application/pdf", size: 3n } } };
      yield { part: { case: "chunk" as const, value: new TextEncoder().encode("pdf") } };
    })(),
  );
  return done.uploadId;
}

/** `count` responses with a varied part of the questions answered; every fifth left partial. */
async function respond(formId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  const pick = <T>(list: T[]) => list[random(list.length)]!;
  for (let i = 0; i < count; i++) {
    const answers: JsonObject = {};
    const some = () => random(4) > 0;
    if (some()) answers.name = pick(["Ada", "Grace", "Linus", "Edsger"]) + i;
    if (some()) answers.age = pick([18, 21.5, 36, 36, 45, -3, 1e6, 0.1]);
    if (some()) answers.day = pick(["2026-05-01", "2026-05-03", "2026-06-30"]);
    if (some()) answers.plan = pick(["free", "pro", "team"]);
    if (some()) answers.tags = pick([["a"], ["a", "b"], ["c", "b", "a"], ["b"]]);
    if (some()) answers.stars = 1 + random(5);
    if (some()) answers.nps = random(11);
    if (some()) answers.agree = random(5);
    if (some()) answers.rank = pick([["x", "y", "z"], ["z", "x", "y"], ["y", "z", "x"]]);
    if (some()) answers.grid = pick<JsonObject>([{ r1: ["c1"], r2: ["c2", "c3"] }, { r1: ["c3"] }, { r2: ["c1"] }]);
    if (random(6) === 0) answers.cv = [await upload(formId)];
    if (some()) answers.terms = true;
    const saved = await client.saveResponse({ formId, answers, completed: i % 5 !== 4 });
    ids.push(saved.responseId);
  }
  return ids;
}

const day = (iso: string) => new Date(`${iso}T00:00:00Z`);
const at = (iso: string) => new Date(iso);

/** The ranges compared: all, whole days, days cut at either end, within one day, open at either end, the widest. */
function ranges(): Omit<SummaryFilter, "formId">[] {
  return [
    {},
    { since: day("2026-03-03"), until: day("2026-03-08") },
    { since: at("2026-03-02T13:30:00Z"), until: at("2026-03-07T04:00:00Z") },
    { since: at("2026-03-04T02:00:00Z"), until: at("2026-03-04T20:00:00Z") },
    { since: at("2026-03-05T07:00:00Z") },
    { until: at("2026-03-06T22:00:00Z") },
    { since: at("2026-03-06T00:00:00Z"), until: at("2026-03-06T00:00:00Z") },
    // The ends the gateway takes: whole days from the year 1, and none left before the year 10000.
    { since: at("0001-01-01T00:00:00Z"), until: at("9999-12-31T23:59:59.999Z") },
    { since: at("9999-12-31T12:00:00Z") },
  ];
}

/** Asserts the counted summary equals the scanned one, for the document and every range. */
async function assertSame(formId: string, document: FormDocument, why: string) {
  for (const range of ranges()) {
    const filter = { formId, ...range };
    const counted = await summarizeResponses(orm.em.fork(), responsesTable, document, filter);
    const scanned = await summarizeResponses(orm.em.fork(), responsesTable, document, filter, true);
    assert.deepEqual(counted, scanned, `${why}, ${JSON.stringify(range)}`);
  }
}

async function countRowsOf(formId: string) {
  const [row] = await orm.em
    .fork()
    .getConnection()
    .execute<{ counts: string; changes: string }[]>(
      `select (select count(*) from "submissions"."summary_counts" where "form_id" = ?)::text as "counts",
              (select count(*) from "submissions"."summary_changes" where "form_id" = ?)::text as "changes"`,
      [formId, formId],
    );
  return { counts: Number(row!.counts), changes: Number(row!.changes) };
}

describe("The summary's counts", () => {
  it("give the scan's summary through completions, deletions, retention, edits and folds", async () => {
    const form = fakeForms.add({ id: `counts${++formCounter}`, workspaceId: "ws-ada", name: "Survey", versions: [survey] });
    const ids = await respond(form.id, 40);
    const summary = await summarizeResponses(orm.em.fork(), responsesTable, survey, { formId: form.id });
    assert.equal(summary.responses, 32n, "the partial ones are left out");
    assert.ok(summary.questions?.find((q) => q.key === "age")?.median !== undefined);
    await assertSame(form.id, survey, "unfolded");
    assert.ok((await foldSummaryChanges(orm)) > 0);
    assert.deepEqual((await countRowsOf(form.id)).changes, 0, "folded");
    await assertSame(form.id, survey, "folded");

    // Partial responses completed later, completed ones deleted (some counted, some still changes).
    await client.saveResponse({ formId: form.id, responseId: ids[4], answers: { plan: "team", age: 36 }, completed: true });
    for (const id of [ids[0], ids[7], ids[13]]) await client.deleteSubmission({ formId: form.id, submissionId: id }, ada);
    await assertSame(form.id, survey, "after deletions");
    await foldSummaryChanges(orm);
    await assertSame(form.id, survey, "after deletions, folded");

    // The form's retention takes the oldest days.
    await deleteResponsesBefore({ orm, files: createLocalFileStore(join(filesDir, "files")) }, form.id, at("2026-03-03T10:00:00Z"));
    await foldSummaryChanges(orm);
    await assertSame(form.id, survey, "after retention");

    // Edited: an option gone and one new, questions gone, a key now of a text type (counted by the scan).
    await assertSame(form.id, edited, "edited");
    await respond(form.id, 6);
    await assertSame(form.id, edited, "edited, new responses");

    // Purged: nothing is left of it in the counts once folded.
    await deleteFormHoldings(form.id, { orm, files: createLocalFileStore(join(filesDir, "files")) });
    await foldSummaryChanges(orm);
    assert.deepEqual(await countRowsOf(form.id), { counts: 0, changes: 0 });
    assert.equal((await summarizeResponses(orm.em.fork(), responsesTable, survey, { formId: form.id })).responses, 0n);
  });

  it("are rebuilt once for responses stored before they existed, counting later ones once", async () => {
    const form = fakeForms.add({ id: `counts${++formCounter}`, workspaceId: "ws-ada", name: "Survey", versions: [survey] });
    const older = fakeForms.add({ id: `counts${++formCounter}`, workspaceId: "ws-ada", name: "Survey", versions: [survey] });
    await respond(older.id, 20);
    // Copies stored as a release before the counts would have: no trigger fires.
    await orm.em.fork().transactional(async (em) => {
      const connection = em.getConnection();
      const tx = em.getTransactionContext();
      await connection.execute(`set local session_replication_role = replica`, [], "run", tx);
      await connection.execute(
        `insert into ${responsesTable} ("id", "form_id", "workspace_id", "version", "completed", "answers", "hidden", "created_at", "updated_at", "submitted_at")
         select "id" || '_old', ?, "workspace_id", "version", "completed", "answers", "hidden", "created_at", "updated_at", "submitted_at"
           from ${responsesTable} where "form_id" = ?`,
        [form.id, older.id],
        "run",
        tx,
      );
      await connection.execute(`insert into "submissions"."summary_unbuilt" ("form_id") values (?)`, [form.id], "run", tx);
    });
    // Then the new release's completions and a deletion of an old one, as changes.
    await respond(form.id, 5);
    await orm.em.fork().getConnection().execute(`delete from ${responsesTable} where "id" in (select "id" from ${responsesTable} where "form_id" = ? and "completed" and "id" like '%_old' limit 2)`, [form.id]);

    await assertSame(form.id, survey, "rebuilt");
    const [{ unbuilt }] = await orm.em.fork().getConnection().execute<{ unbuilt: string }[]>(`select count(*)::text as "unbuilt" from "submissions"."summary_unbuilt" where "form_id" = ?`, [form.id]);
    assert.equal(unbuilt, "0", "rebuilt once");
    assert.equal((await countRowsOf(form.id)).changes, 0, "its changes were replaced by the rebuild");
    await respond(form.id, 3);
    await assertSame(form.id, survey, "after the rebuild");
  });
});
