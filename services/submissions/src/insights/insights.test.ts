import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import type { FormDocument } from "@formsvc/form-document";
import { asCaller } from "@formsvc/platform/caller.ts";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { rejectsWith } from "@formsvc/platform/testing/rpc-assertions.ts";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { FakeForms } from "../../../forms/src/testing/fake-forms.ts";
import { createInsightsHandlers } from "./insights-handlers.ts";
import { completionTimeBucket, medianOf } from "./insight-aggregates.ts";
import { entities } from "../entities/index.ts";
import { migrations } from "../migrations/index.ts";

// Insights' aggregates against a real Postgres: batches add up per form and day, a visitor counts once a
// day, ranges pick whole days, strangers get NOT_FOUND.
const fakeForms = new FakeForms();
fakeForms.members["ws-ada"] = ["user-ada"];
const ada = asCaller("user-ada");
const bob = asCaller("user-bob");

const survey: FormDocument = {
  title: "Survey",
  blocks: [
    { id: "b1", key: "name", type: "SHORT_TEXT", question: "Your name" },
    { id: "b2", key: "plan", type: "MULTIPLE_CHOICE", question: "Plan", fieldName: "plan", options: [{ id: "free", text: "Free" }] },
    { id: "b3", key: "why", type: "LONG_TEXT", question: "Why?" },
  ],
};

let database: TestDatabase;
let orm: MikroORM;
let client: Client<typeof SubmissionsService>;

before(async () => {
  database = await createTestDatabase("submissions_insights_test");
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "submissions", entities, migrations });
  const handlers = createInsightsHandlers({ orm, forms: fakeForms.client });
  client = createClient(SubmissionsService, createRouterTransport((router) => router.service(SubmissionsService, handlers)));
});
after(async () => {
  await orm?.close(true);
  await database?.drop();
});

describe("insights aggregates", () => {
  it("adds batches up per day and question, counts a visitor once a day, and reads a range of days", async () => {
    const form = fakeForms.add({ id: "ins1", workspaceId: "ws-ada", name: "Survey", versions: [survey] });
    const day = (d: string, views: number, starts: number, completions: number) => ({ formId: form.id, day: d, views: BigInt(views), starts: BigInt(starts), completions: BigInt(completions) });
    await client.recordInsights({
      days: [day("2026-05-01", 3, 2, 1), day("2026-05-02", 1, 1, 1)],
      visitors: [{ formId: form.id, day: "2026-05-01", visitor: "v1" }, { formId: form.id, day: "2026-05-01", visitor: "v2" }],
      questions: [
        { formId: form.id, day: "2026-05-01", key: "name", shown: 2n, answered: 2n },
        { formId: form.id, day: "2026-05-01", key: "plan", shown: 2n, answered: 1n, dropOffs: 1n },
      ],
      completionTimes: [{ formId: form.id, day: "2026-05-01", seconds: 30n, count: 1n }],
    });
    await client.recordInsights({
      days: [day("2026-05-01", 1, 0, 0)],
      // v1 again the same day: no new visitor; v1 the next day: one of that day.
      visitors: [{ formId: form.id, day: "2026-05-01", visitor: "v1" }, { formId: form.id, day: "2026-05-02", visitor: "v1" }],
      questions: [{ formId: form.id, day: "2026-05-02", key: "name", shown: 1n, answered: 1n }],
      completionTimes: [{ formId: form.id, day: "2026-05-02", seconds: 50n, count: 1n }],
    });

    const all = await client.getInsights({ formId: form.id }, ada);
    assert.deepEqual([all.views, all.visitors, all.starts, all.completions], [5n, 3n, 3n, 2n]);
    assert.equal(all.medianSecondsToComplete, 40);
    assert.deepEqual(
      all.questions.map((q) => [q.key, q.label, Number(q.shown), Number(q.answered), Number(q.dropOffs)]),
      [["name", "Your name", 3, 3, 0], ["plan", "plan", 2, 1, 1], ["why", "Why?", 0, 0, 0]],
      "every question of the current version, in its order",
    );
    assert.deepEqual(all.days.map((d) => [d.date, Number(d.views), Number(d.starts), Number(d.completions)]), [["2026-05-01", 4, 2, 1], ["2026-05-02", 1, 1, 1]]);

    // A range starting mid-day takes that whole day; one ending at a day's start leaves that day out.
    const first = await client.getInsights({ formId: form.id, since: timestampFromDate(new Date("2026-05-01T15:00:00Z")), until: timestampFromDate(new Date("2026-05-02T00:00:00Z")) }, ada);
    assert.deepEqual([first.views, first.visitors, first.completions, first.medianSecondsToComplete], [4n, 2n, 1n, 30]);
    const none = await client.getInsights({ formId: form.id, since: timestampFromDate(new Date("2026-06-01T00:00:00Z")) }, ada);
    assert.deepEqual([none.views, none.days.length, none.medianSecondsToComplete], [0n, 0, undefined]);
  });

  it("answers NOT_FOUND to a caller who may not see the form, and refuses malformed batches", async () => {
    const form = fakeForms.add({ id: "ins2", workspaceId: "ws-ada", name: "Survey", versions: [survey] });
    await rejectsWith(client.getInsights({ formId: form.id }, bob), Code.NotFound);
    await rejectsWith(client.getInsights({ formId: "nope" }, ada), Code.NotFound);
    await rejectsWith(client.recordInsights({ days: [{ formId: form.id, day: "May 1st", views: 1n }] }), Code.InvalidArgument);
    await rejectsWith(client.recordInsights({ questions: [{ formId: form.id, day: "2026-05-01", key: "" }] }), Code.InvalidArgument);
    await rejectsWith(client.getVisitorSalt({ day: "" }), Code.InvalidArgument);
  });

  it("keeps one salt per day and deletes the days before with their visitors once a new day's is made", async () => {
    const first = await client.getVisitorSalt({ day: "2026-07-01" });
    assert.equal(first.salt.length, 32);
    assert.deepEqual((await client.getVisitorSalt({ day: "2026-07-01" })).salt, first.salt, "the same salt all day");
    await client.recordInsights({ visitors: [{ formId: "ins3", day: "2026-07-01", visitor: "v1" }] });
    const next = await client.getVisitorSalt({ day: "2026-07-02" });
    assert.notDeepEqual(next.salt, first.salt);
    const left = await orm.em.getConnection().execute(
      `select (select count(*) from "submissions"."insight_salts" where "day" < '2026-07-02')::int as "salts",
              (select count(*) from "submissions"."insight_visitors" where "day" < '2026-07-02')::int as "visitors"`,
    );
    assert.deepEqual(left[0], { salts: 0, visitors: 0 });
  });

  it("buckets times to complete coarser as they grow, and takes the median of the buckets", () => {
    assert.deepEqual([0, 59.4, 119, 125, 3_599, 7_000, 99 * 86_400].map(completionTimeBucket), [0, 59, 119, 130, 3_600, 6_900, 30 * 86_400]);
    assert.equal(medianOf([]), null);
    assert.equal(medianOf([{ seconds: 10, count: 2 }, { seconds: 20, count: 1 }]), 10);
    assert.equal(medianOf([{ seconds: 10, count: 1 }, { seconds: 20, count: 1 }]), 15);
  });
});
