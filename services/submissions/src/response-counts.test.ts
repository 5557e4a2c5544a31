import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { entities } from "./entities/index.ts";
import { migrations } from "./migrations/index.ts";
import { countChangesTable, foldCountChanges, pushResponseCounts, responseCountsTable } from "./response-counts.ts";
import { FakeForms } from "../../forms/src/testing/fake-forms.ts";

// The counts against a real database: the migration's backfill, folds racing one another (two replicas)
// and the completions committing meanwhile, and what a push sends and marks.

let database: TestDatabase;
let orm: MikroORM;
const forms = new FakeForms();
/** The migration that made the counts: the database is first made as it was before it. */
const countsMigration = migrations.findIndex((m) => m.name === "Migration20270110000000_response_counts");

/** Stores `completed` completed and `partial` partial responses of the form, as rows. */
async function storeResponses(formId: string, completed: number, partial = 0): Promise<void> {
  const rows = [...Array.from({ length: completed }, () => true), ...Array.from({ length: partial }, () => false)];
  for (const [i, done] of rows.entries()) {
    await orm.em.getConnection().execute(
      `insert into "submissions"."responses" ("id", "form_id", "workspace_id", "version", "completed", "answers", "hidden", "created_at", "updated_at", "submitted_at")
       values (?, ?, 'ws', 1, ?, '{}', '{}', now(), now(), ?::timestamptz)`,
      [`${formId}-${i}`, formId, done, done ? new Date() : null],
      "run",
    );
  }
}

async function countRow(formId: string) {
  const rows = await orm.em.getConnection().execute<{ completed: string; revision: string; pushed_revision: string }[]>(
    `select "completed"::text, "revision"::text, "pushed_revision"::text from ${responseCountsTable(orm)} where "form_id" = ?`,
    [formId],
  );
  return rows[0] && { completed: Number(rows[0].completed), revision: Number(rows[0].revision), pushed: Number(rows[0].pushed_revision) };
}

before(async () => {
  database = await createTestDatabase("submissions_counts_test");
  // The schema as it was before the counts, with responses stored then: the migration backfills them.
  const earlier = await openDatabase({ databaseUrl: database.databaseUrl, schema: "submissions", entities, migrations: migrations.slice(0, countsMigration) });
  orm = earlier;
  await storeResponses("old-form", 3, 2);
  await storeResponses("partial-only-form", 0, 2);
  await earlier.close(true);
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "submissions", entities, migrations });
});

after(async () => {
  await orm?.close(true);
  await database?.drop();
});

describe("response counts", () => {
  it("are backfilled from the stored responses by the migration, unpushed, and the first push sends them", async () => {
    assert.equal(migrations[countsMigration].name, "Migration20270110000000_response_counts");
    assert.deepEqual(await countRow("old-form"), { completed: 3, revision: 1, pushed: 0 });
    assert.deepEqual(await countRow("partial-only-form"), { completed: 0, revision: 1, pushed: 0 }, "a form with no completion is counted too");
    const form = forms.add({ id: "old-form", responseCount: 7 });
    const partialOnly = forms.add({ id: "partial-only-form", responseCount: 2 });
    assert.equal(await pushResponseCounts(orm, forms.client), 2);
    assert.equal(form.responseCount, 3, "a count that had drifted is set right");
    assert.equal(partialOnly.responseCount, 0, "down to 0 as well");
    assert.deepEqual(await countRow("old-form"), { completed: 3, revision: 1, pushed: 1 });
    assert.equal(await pushResponseCounts(orm, forms.client), 0, "nothing left to push");
  });

  it("count every change once when folds race each other and changes commit meanwhile", async () => {
    const changes = countChangesTable(orm);
    const add = (delta: number) => orm.em.fork().getConnection().execute(`insert into ${changes} ("form_id", "delta") values ('raced', ?)`, [delta], "run");
    const writes: Promise<unknown>[] = [];
    const folds: Promise<number>[] = [];
    for (let i = 0; i < 200; i++) {
      writes.push(add(i % 10 === 9 ? -1 : 1));
      if (i % 20 === 0) folds.push(foldCountChanges(orm), foldCountChanges(orm));
    }
    await Promise.all([...writes, ...folds]);
    await foldCountChanges(orm);
    // 180 completions, 20 deletions.
    assert.equal((await countRow("raced"))!.completed, 160);
    const [left] = await orm.em.getConnection().execute<{ n: number }[]>(`select count(*)::int as "n" from ${changes}`);
    assert.equal(left.n, 0);
  });

  it("push in batches, each count at its revision, and mark only what was sent", async () => {
    // What earlier tests left (a form forms does not know: skipped there, marked here all the same).
    await pushResponseCounts(orm, forms.client);
    const ids = Array.from({ length: 7 }, (_, i) => `batch-${i}`);
    for (const id of ids) forms.add({ id });
    for (const [i, id] of ids.entries()) {
      await orm.em.getConnection().execute(`insert into ${countChangesTable(orm)} ("form_id", "delta") select ?, 1 from generate_series(1, ?)`, [id, i + 1], "run");
    }
    await foldCountChanges(orm);
    let calls = 0;
    forms.holdWith = () => void (calls += 1);
    assert.equal(await pushResponseCounts(orm, forms.client, { batchSize: 3 }), 7);
    forms.holdWith = undefined;
    assert.equal(calls, 3, "three calls: 3, 3 and 1 counts");
    assert.deepEqual(ids.map((id) => forms.forms.get(id)!.responseCount), [1, 2, 3, 4, 5, 6, 7]);

    // A count that moves again is pushed at its next revision; a failed push leaves it to send again.
    await orm.em.getConnection().execute(`insert into ${countChangesTable(orm)} ("form_id", "delta") values ('batch-0', -1)`, [], "run");
    await foldCountChanges(orm);
    assert.deepEqual(await countRow("batch-0"), { completed: 0, revision: 2, pushed: 1 });
    forms.failWith = (method) => (method === "setResponseCounts" ? new ConnectError("forms is down", Code.Unavailable) : undefined);
    await assert.rejects(pushResponseCounts(orm, forms.client), /forms is down/);
    assert.deepEqual(await countRow("batch-0"), { completed: 0, revision: 2, pushed: 1 });
    forms.failWith = undefined;
    assert.equal(await pushResponseCounts(orm, forms.client), 1);
    assert.equal(forms.forms.get("batch-0")!.responseCount, 0);
    assert.deepEqual(await countRow("batch-0"), { completed: 0, revision: 2, pushed: 2 });
  });

  it("push a count folded below 0 as 0, in a batch with others, and later changes still flow", async () => {
    // A response completed by a replica of an older version (no change) and then deleted: -1.
    const counted = forms.add({ id: "below-zero", responseCount: 1 });
    const other = forms.add({ id: "beside-below-zero" });
    const add = (formId: string, delta: number) =>
      orm.em.getConnection().execute(`insert into ${countChangesTable(orm)} ("form_id", "delta") values (?, ?)`, [formId, delta], "run");
    await add("below-zero", -1);
    await add("beside-below-zero", 1);
    await foldCountChanges(orm);
    assert.deepEqual(await countRow("below-zero"), { completed: -1, revision: 1, pushed: 0 });
    assert.equal(await pushResponseCounts(orm, forms.client), 2);
    assert.deepEqual([counted.responseCount, other.responseCount], [0, 1], "sent as 0, taken, and the other count with it");
    assert.deepEqual(await countRow("below-zero"), { completed: -1, revision: 1, pushed: 1 });
    await add("below-zero", 1);
    await add("below-zero", 1);
    await foldCountChanges(orm);
    assert.equal(await pushResponseCounts(orm, forms.client), 1);
    assert.equal(counted.responseCount, 1);
    assert.deepEqual(await countRow("below-zero"), { completed: 1, revision: 2, pushed: 2 });
  });
});
