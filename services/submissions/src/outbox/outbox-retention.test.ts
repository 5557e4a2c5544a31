import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { entities } from "../entities/index.ts";
import { migrations } from "../migrations/index.ts";
import { acknowledgeWhenReadable, addOutboxRow, outboxIds } from "../testing/outbox-rows.ts";
import { acknowledgeCompletions, outboxTarget } from "./outbox-retention.ts";

const follower = "submissions-outbox";
const hour = 3600;
const longAgo = () => new Date(Date.now() - 2 * hour * 1000);

let database: TestDatabase;
let orm: MikroORM;
before(async () => {
  database = await createTestDatabase("formsvc_outbox_retention");
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "submissions", entities, migrations });
});
beforeEach(async () => {
  await orm.em.getConnection().execute(`truncate "submissions"."outbox", "submissions"."outbox_followers"`);
});
after(async () => {
  await orm?.close();
  await database?.drop();
});

const sql = <T = unknown[]>(query: string, params: unknown[] = []) => orm.em.getConnection().execute(query, params, "all") as Promise<T>;

/** Moves the notifier's cursor (in the service, only the notifier moves it, forward). */
async function setNotifier(txid: bigint): Promise<void> {
  await sql(`update "submissions"."notification_cursor" set "txid" = ?::text::xid8`, [txid.toString()]);
}

async function position(name = follower): Promise<bigint | undefined> {
  const [row] = await sql<{ position: string }[]>(`select "position"::text as "position" from "submissions"."outbox_followers" where "name" = ?`, [name]);
  return row ? BigInt(row.position) : undefined;
}

/** count() and then remove() at `olderThan`: both, which must agree. */
async function countThenRemove(target: ReturnType<typeof outboxTarget>, olderThan: Date): Promise<number> {
  const counted = await target.count(olderThan);
  const removed = await target.remove(olderThan);
  assert.equal(removed, counted, "remove() removes what count() counted");
  return removed as number;
}

describe("outbox retention on the embedded bus", () => {
  it("removes the rows the stream's follower and the notifier have both passed, once the safety window is over", async () => {
    const [a, b, c] = [await addOutboxRow(orm, longAgo()), await addOutboxRow(orm, longAgo()), await addOutboxRow(orm, longAgo())];
    const d = await addOutboxRow(orm);
    await setNotifier(b.txid);
    const target = outboxTarget(orm, { bus: "embedded", notifications: true, safetySeconds: hour });
    assert.equal(target.what, "submissions.outbox");
    const periodic = () => target.olderThanAt(new Date())!;
    assert.ok(Math.abs(periodic().getTime() - (Date.now() - hour * 1000)) < 1000, "the periodic bound is the safety window ago");

    assert.equal(await countThenRemove(target, periodic()), 0, "no follower has acknowledged anything: nothing goes");
    assert.deepEqual(await outboxIds(orm), [a.id, b.id, c.id, d.id]);

    await acknowledgeWhenReadable(orm, follower, b.txid);
    assert.equal(await countThenRemove(target, periodic()), 2);
    assert.deepEqual(await outboxIds(orm), [c.id, d.id], "c: not passed yet; d: within the window");

    await acknowledgeWhenReadable(orm, follower, d.txid);
    assert.equal(await countThenRemove(target, periodic()), 0, "c is still ahead of the notifier");
    await setNotifier(d.txid);
    assert.equal(await countThenRemove(target, periodic()), 1);
    assert.deepEqual(await outboxIds(orm), [d.id], "passed by everyone but written within the window");

    // The operator's prune: its own bound, no window.
    assert.equal(await countThenRemove(target, new Date(Date.now() + 60_000)), 1);
    assert.deepEqual(await outboxIds(orm), []);
  });

  it("holds rows for the lowest of several followers; without notifications only the followers count", async () => {
    const a = await addOutboxRow(orm, longAgo());
    const b = await addOutboxRow(orm, longAgo());
    await setNotifier(0n);
    await acknowledgeWhenReadable(orm, follower, b.txid);
    await acknowledgeWhenReadable(orm, "another-follower", a.txid);
    const target = outboxTarget(orm, { bus: "embedded", notifications: false, safetySeconds: hour });
    assert.equal(await countThenRemove(target, target.olderThanAt(new Date())!), 1);
    assert.deepEqual(await outboxIds(orm), [b.id]);
  });

  it("deletes a batch per statement until one comes back short", async () => {
    const rows = [];
    for (let i = 0; i < 7; i++) rows.push(await addOutboxRow(orm, longAgo()));
    await setNotifier(rows.at(-1)!.txid);
    await acknowledgeWhenReadable(orm, follower, rows.at(-1)!.txid);
    const target = outboxTarget(orm, { bus: "embedded", notifications: true, safetySeconds: hour, batchSize: 3 });
    assert.equal(await countThenRemove(target, target.olderThanAt(new Date())!), 7);
    assert.deepEqual(await outboxIds(orm), []);
  });
});

describe("outbox retention with Kafka", () => {
  it("removes the published rows the notifier has passed; unpublished ones stay", async () => {
    const a = await addOutboxRow(orm, longAgo(), true);
    const b = await addOutboxRow(orm, longAgo(), false);
    const c = await addOutboxRow(orm, longAgo(), true);
    const d = await addOutboxRow(orm, longAgo(), true);
    const e = await addOutboxRow(orm, new Date(), true);
    await setNotifier(c.txid);
    const target = outboxTarget(orm, { bus: "kafka", notifications: true, safetySeconds: hour });
    assert.equal(await countThenRemove(target, target.olderThanAt(new Date())!), 2, "no follower is needed with Kafka");
    assert.deepEqual(await outboxIds(orm), [b.id, d.id, e.id], "b: unpublished; d: ahead of the notifier; e: within the window");

    const withoutNotifications = outboxTarget(orm, { bus: "kafka", notifications: false, safetySeconds: hour });
    assert.equal(await countThenRemove(withoutNotifications, withoutNotifications.olderThanAt(new Date())!), 1);
    assert.deepEqual(await outboxIds(orm), [b.id, e.id]);
  });
});

describe("AcknowledgeCompletions' record", () => {
  it("never moves a follower back", async () => {
    const a = await addOutboxRow(orm);
    const b = await addOutboxRow(orm);
    await acknowledgeWhenReadable(orm, follower, b.txid);
    await acknowledgeCompletions(orm, follower, a.txid);
    assert.equal(await position(), b.txid);
  });

  it("holds a cursor past what StreamCompletions can have streamed at the oldest transaction still running", async () => {
    await acknowledgeCompletions(orm, follower, 1n << 60n);
    const [{ xmin }] = await sql<{ xmin: string }[]>(`select pg_snapshot_xmin(pg_current_snapshot())::text as "xmin"`);
    assert.ok((await position())! <= BigInt(xmin));

    // A transaction still running: a cursor past it is held at it, and its rows (once committed) stay.
    await orm.em.fork().transactional(async (em) => {
      const [{ txid }] = await em
        .getConnection()
        .execute<{ txid: string }[]>(`select pg_current_xact_id()::text as "txid"`, [], "all", em.getTransactionContext());
      await acknowledgeCompletions(orm, "while-running", BigInt(txid) + 10n);
      assert.ok((await position("while-running"))! <= BigInt(txid));
    });
  });
});
