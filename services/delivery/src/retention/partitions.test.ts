import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { asCaller } from "@formsvc/platform/caller.ts";
import { openDatabase } from "@formsvc/platform/database.ts";
import { prune, retentionPass } from "@formsvc/platform/retention.ts";
import { createTestDatabase } from "@formsvc/platform/testing/database.ts";
import { DeliveryService } from "@formsvc/proto/delivery/v1/delivery_pb.js";
import { FakeWebhooks } from "../../../webhooks/src/testing/fake-webhooks.ts";
import { entities } from "../entities/index.ts";
import { createDeliveryHandlers, routes } from "../handlers/delivery-handlers.ts";
import { migrations } from "../migrations/index.ts";
import { openTestDatabase, type DeliveryTestDatabase } from "../testing/database.ts";
import { createAcceptEvent, eventually, fakeForms, fakeSubmissions, quietLogger, sampleEvent, startReceiver, testFileLinks, type Receiver } from "../testing/fixtures.ts";
import { DeliveryWorker } from "../worker/worker.ts";
import { deliveryRetention, ensurePartitions, listPartitions } from "./partitions.ts";

const minute = 60_000;
let db: DeliveryTestDatabase;
const webhooks = new FakeWebhooks();
const receivers: Receiver[] = [];

before(async () => {
  db = await openTestDatabase("delivery_partitions_test");
});

after(async () => {
  for (const r of receivers) await r.close();
  await db?.close();
});

beforeEach(async () => {
  webhooks.hooks.clear();
  await db.reset();
  for (const p of await listPartitions(db.orm)) {
    if (p.from !== null) await db.orm.em.getConnection().execute(`drop table "delivery"."deliveries_${p.suffix}", "delivery"."attempts_${p.suffix}", "delivery"."payloads_${p.suffix}"`);
  }
});

const rows = async (table: string) => Number((await db.orm.em.getConnection().execute(`select count(*)::int as "n" from "delivery"."${table}"`))[0].n);
const counts = async () => ({ deliveries: await rows("deliveries"), attempts: await rows("attempts"), payloads: await rows("payloads") });

/** Runs a worker until every delivery has had an attempt. */
async function attemptAll(): Promise<void> {
  const worker = new DeliveryWorker({ orm: db.orm, webhooks: webhooks.client, logger: quietLogger, retrySchedule: [600], allowPrivateUrls: true, disableAfterFailingSeconds: 3600, timeoutMs: 1_000, pollIntervalMs: 20 });
  worker.start();
  try {
    await eventually(async () => (await db.deliveries()).every((d) => d.attempts > 0), 10_000, "an attempt of every delivery");
  } finally {
    await worker.stop();
  }
}

describe("delivery partitions", () => {
  it("are made ahead of time, each span once, named by its start", async () => {
    const now = new Date("2026-11-27T22:00:30Z");
    const made = await ensurePartitions(db.orm, { spanSeconds: 60, now });
    assert.deepEqual(made, ["20261127t220000", "20261127t220100", "20261127t220200", "20261127t220300"]);
    assert.deepEqual(await ensurePartitions(db.orm, { spanSeconds: 60, now }), [], "nothing twice");
    assert.deepEqual(await ensurePartitions(db.orm, { spanSeconds: 60, now: new Date(+now + minute) }), ["20261127t220400"], "one more as time goes on");
    const partitions = await listPartitions(db.orm);
    assert.deepEqual(partitions.map((p) => p.suffix), [...made, "20261127t220400", "default"]);
    assert.equal(partitions[0].from?.toISOString(), "2026-11-27T22:00:00.000Z");
    assert.equal(partitions[0].to?.toISOString(), "2026-11-27T22:01:00.000Z");
    for (const table of ["attempts", "payloads"]) {
      const [row] = await db.orm.em.getConnection().execute(`select count(*)::int as "n" from pg_inherits where inhparent = '"delivery"."${table}"'::regclass`);
      assert.equal(row.n, 6, `${table} is split alike`);
    }
  });

  it("drop behind once finished and past the retention; pending deliveries stay; prune --dry-run counts what prune removes", async () => {
    const ok = await startReceiver(() => ({ status: 200 }));
    const failing = await startReceiver(() => ({ status: 503 }));
    receivers.push(ok, failing);
    const now = Date.now();
    const span = 60;
    const old = new Date(Math.floor((now - 10 * minute) / minute) * minute);
    // Spans from ten minutes ago on, then the current ones.
    await ensurePartitions(db.orm, { spanSeconds: span, now: old });
    await ensurePartitions(db.orm, { spanSeconds: span });
    const accept = createAcceptEvent({ orm: db.orm, webhooks: webhooks.client, fileLinks: testFileLinks, logger: quietLogger });

    // Span 1 (old): one form's event, to a receiver that answers 200: all finished.
    webhooks.add({ id: "wh_ok", url: ok.url, formId: "form_done" });
    await accept(sampleEvent({ formId: "form_done", submittedAt: new Date(+old + 10_000) }));
    // Span 2 (old): an event to both receivers; the failing one keeps it retrying (unfinished).
    webhooks.add({ id: "wh_ok2", url: ok.url, formId: "form_mixed" });
    webhooks.add({ id: "wh_failing", url: failing.url, formId: "form_mixed" });
    await accept(sampleEvent({ formId: "form_mixed", submittedAt: new Date(+old + minute + 10_000) }));
    // Now: a new event, finished, well inside the retention.
    await accept(sampleEvent({ formId: "form_done", submittedAt: new Date(now) }));
    await attemptAll();
    assert.deepEqual(await counts(), { deliveries: 4, attempts: 4, payloads: 3 }, "a payload per event, not per delivery");

    const oldSuffix = (at: Date) => at.toISOString().slice(0, 19).replace(/[-:]/g, "").replace("T", "t");
    const span1 = oldSuffix(old);
    const span2 = oldSuffix(new Date(+old + minute));
    const olderThan = new Date(now - 5 * minute);
    const before = await counts();
    const dryRun = await prune([deliveryRetention(db.orm, { retentionMs: 5 * minute, spanSeconds: span })], olderThan, true);
    assert.deepEqual(await counts(), before, "a dry run changes nothing");
    assert.ok((await listPartitions(db.orm)).some((p) => p.suffix === span1));

    const removed = await prune([deliveryRetention(db.orm, { retentionMs: 5 * minute, spanSeconds: span })], olderThan, false);
    assert.deepEqual(removed, dryRun, "prune removes what the dry run counted");
    // Span 1: the delivery, its attempt and its payload (the partition dropped). Span 2: the finished delivery and
    // its attempt, row by row; its payload stays for the retrying one.
    assert.deepEqual(removed, { "delivery.deliveries": 2, "delivery.attempts": 2, "delivery.payloads": 1 });
    const suffixes = (await listPartitions(db.orm)).map((p) => p.suffix);
    assert.ok(!suffixes.includes(span1), `span ${span1} dropped`);
    assert.ok(suffixes.includes(span2), `span ${span2} kept: a delivery in it still retries`);
    const kept = await db.deliveries();
    assert.deepEqual(kept.map((d) => [d.webhookId, d.status]).sort(), [["wh_failing", "retrying"], ["wh_ok", "succeeded"]]);
    assert.ok(kept.every((d) => d.payload.length > 0), "every kept delivery still has its body");
    assert.deepEqual(await counts(), { deliveries: 2, attempts: 2, payloads: 2 });

    // What the API lists is what is kept.
    const client = createClient(
      DeliveryService,
      createRouterTransport((router) =>
        routes(router, createDeliveryHandlers({ orm: db.orm, webhooks: webhooks.client, forms: fakeForms("user-ada"), submissions: fakeSubmissions().client, fileLinks: testFileLinks, logger: quietLogger, retrySchedule: [600], allowPrivateUrls: true, disableAfterFailingSeconds: 3600 })),
      ),
    );
    const ada = asCaller("user-ada");
    assert.equal((await client.listDeliveries({ webhookId: "wh_ok2" }, ada)).deliveries.length, 0);
    assert.equal((await client.listDeliveries({ webhookId: "wh_failing" }, ada)).deliveries.length, 1);
    assert.equal((await client.listDeliveries({ webhookId: "wh_ok" }, ada)).deliveries.length, 1);

    // Once the retrying one has finished, the periodic pass drops its span too, whole.
    await db.orm.em.getConnection().execute(`update "delivery"."deliveries" set "status" = 'failed', "next_attempt_at" = null where "webhook_id" = 'wh_failing'`);
    const pass = await retentionPass([deliveryRetention(db.orm, { retentionMs: 5 * minute, spanSeconds: span })], quietLogger);
    assert.deepEqual(pass, { "delivery.deliveries": 1, "delivery.attempts": 1, "delivery.payloads": 1 });
    assert.ok(!(await listPartitions(db.orm)).some((p) => p.suffix === span2), `span ${span2} dropped`);
    assert.deepEqual(await counts(), { deliveries: 1, attempts: 1, payloads: 1 }, "the delivery inside the retention stays");
  });

  it("an event handed again is stored once, in the partition of its own time", async () => {
    await ensurePartitions(db.orm, { spanSeconds: 60 });
    webhooks.add({ id: "wh_1", url: "https://a.example/hook" });
    const accept = createAcceptEvent({ orm: db.orm, webhooks: webhooks.client, fileLinks: testFileLinks, logger: quietLogger });
    const event = sampleEvent({ submittedAt: new Date() });
    await accept(event);
    await accept(event);
    assert.deepEqual(await counts(), { deliveries: 1, attempts: 0, payloads: 1 });
    const [row] = await db.orm.em.getConnection().execute(`select tableoid::regclass::text as "partition" from "delivery"."deliveries"`);
    assert.match(row.partition, /deliveries_\d{8}t\d{6}/);
  });
});

describe("the migration to partitioned tables", () => {
  it("keeps every delivery, attempt and body of a populated database", async () => {
    const database = await createTestDatabase("delivery_partition_migration_test");
    const options = { databaseUrl: database.databaseUrl, schema: "delivery", entities };
    const before = migrations.findIndex((m) => m.name === "Migration20261127000000_partitioned_deliveries");
    const old = await openDatabase({ ...options, migrations: migrations.slice(0, before) });
    const sql = (text: string, params: unknown[] = []) => old.em.getConnection().execute(text, params, "all");
    // Two events, one to two webhooks; three deliveries with two attempts each, over two days.
    for (const [id, webhook, event, at] of [
      ["d1", "wh_a", "evt_1", "2026-11-20T10:00:00.123456Z"],
      ["d2", "wh_b", "evt_1", "2026-11-20T10:00:00.123456Z"],
      ["d3", "wh_a", "evt_2", "2026-11-26T09:30:00Z"],
    ]) {
      await sql(
        `insert into "delivery"."deliveries" ("id", "webhook_id", "event_id", "event_type", "form_id", "submission_id", "origin", "payload", "status", "attempts", "created_at", "updated_at")
         values (?, ?, ?, 'FORM_RESPONSE', 'form_1', 'resp', 'https://a.example', ?, 'succeeded', 2, ?, ?)`,
        [id, webhook, event, `{"eventId":"${event}"}`, at, at],
      );
      for (const number of [1, 2]) {
        await sql(`insert into "delivery"."attempts" ("id", "delivery_id", "number", "status_code", "duration_ms", "created_at") values (?, ?, ?, 200, 5, ?)`, [`${id}_${number}`, id, number, at]);
      }
    }
    await old.close(true);
    const migrated = await openDatabase({ ...options, migrations });
    try {
      const query = (text: string) => migrated.em.getConnection().execute(text, [], "all");
      const deliveries = await query(`select d."id", d."webhook_id", p."body" from "delivery"."deliveries" d join "delivery"."payloads" p using ("event_id", "event_at") order by d."id"`);
      assert.deepEqual(
        deliveries.map((d) => [d.id, d.webhook_id, d.body]),
        [["d1", "wh_a", `{"eventId":"evt_1"}`], ["d2", "wh_b", `{"eventId":"evt_1"}`], ["d3", "wh_a", `{"eventId":"evt_2"}`]],
      );
      assert.equal((await query(`select count(*)::int as "n" from "delivery"."payloads"`))[0].n, 2, "one body per event");
      assert.equal((await query(`select count(*)::int as "n" from "delivery"."attempts" a join "delivery"."deliveries" d on d."id" = a."delivery_id" and d."event_at" = a."event_at"`))[0].n, 6);
      const partitions = (await listPartitions(migrated)).map((p) => p.suffix);
      assert.ok(partitions.includes("20261120t000000") && partitions.includes("20261126t000000"), `daily partitions for the rows copied: ${partitions}`);
      assert.equal((await query(`select count(*)::int as "n" from "delivery"."deliveries_default"`))[0].n, 0, "none left in the default partition");
    } finally {
      await migrated.close(true);
      await database.drop();
    }
  });
});
