import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { defineEntity, p } from "@mikro-orm/core";
import { MaintenanceService } from "@formsvc/proto/maintenance/v1/maintenance_pb.js";
import { openDatabase, type MikroORM } from "./database.ts";
import { createLogger } from "./logger.ts";
import { metrics } from "./metrics.ts";
import { maintenanceRoutes, prune, registerTableSizes, retentionPass, startChurnVacuum, type PruneTarget } from "./retention.ts";
import { createTestDatabase, type TestDatabase } from "./testing/database.ts";
import { eventually } from "./testing/eventually.ts";

const logger = createLogger("retention-test", process.env.DEBUG_TEST ? "debug" : "silent");

/** A target over an array of timestamps: what is older goes. */
function arrayTarget(what: string, times: Date[], ownBound?: (now: Date) => Date): PruneTarget {
  const older = (bound: Date) => times.filter((t) => t < bound);
  return {
    what,
    olderThanAt: (now) => ownBound?.(now),
    count: async (bound) => older(bound).length,
    remove: async (bound) => {
      const gone = older(bound).length;
      times.splice(0, times.length, ...times.filter((t) => t >= bound));
      return gone;
    },
  };
}

const metricValue = async (name: string, labels: string) => {
  const line = (await metrics.metrics()).split("\n").find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line === undefined ? undefined : Number(line.split(" ").at(-1));
};

describe("retention", () => {
  it("prune counts on a dry run and removes otherwise, by what; the pruned-rows counter follows", async () => {
    const times = [new Date("2026-01-01"), new Date("2026-02-01"), new Date("2026-03-01")];
    const target = arrayTarget("test.rows", times);
    assert.deepEqual(await prune([target], new Date("2026-02-15"), true), { "test.rows": 2 });
    assert.equal(times.length, 3);
    const before = (await metricValue("retention_rows_pruned_total", `what="test.rows"`)) ?? 0;
    assert.deepEqual(await prune([target], new Date("2026-02-15"), false), { "test.rows": 2 });
    assert.equal(times.length, 1);
    assert.equal(await metricValue("retention_rows_pruned_total", `what="test.rows"`), before + 2);
  });

  it("a periodic pass applies each target's own bound, and passes over one without", async () => {
    const now = new Date("2026-06-01");
    const dated = [new Date("2026-05-01"), new Date("2026-05-31")];
    const unbounded = [new Date("2000-01-01")];
    const removed = await retentionPass([arrayTarget("a.dated", dated, (at) => new Date(+at - 7 * 86_400_000)), arrayTarget("a.unbounded", unbounded)], logger, now);
    assert.deepEqual(removed, { "a.dated": 1 });
    assert.deepEqual([dated.length, unbounded.length], [1, 1]);
  });

  it("MaintenanceService.Prune serves the targets to the operator's CLI", async () => {
    const times = [new Date("2026-01-01"), new Date("2026-03-01")];
    const client = createClient(MaintenanceService, createRouterTransport((router) => maintenanceRoutes(router, [arrayTarget("svc.rows", times)], logger)));
    const dry = await client.prune({ olderThanMs: BigInt(Date.parse("2026-02-01")), dryRun: true });
    assert.deepEqual(dry.removed, { "svc.rows": 1n });
    assert.equal(times.length, 2);
    const done = await client.prune({ olderThanMs: BigInt(Date.parse("2026-02-01")), dryRun: false });
    assert.deepEqual(done.removed, { "svc.rows": 1n });
    assert.equal(times.length, 1);
  });
});

describe("table sizes on /metrics", () => {
  let database: TestDatabase;
  let orm: MikroORM;
  before(async () => {
    database = await createTestDatabase("retention_sizes_test");
    // MikroORM wants an entity; the tables are made by hand below.
    const PlainEntity = defineEntity({ name: "Plain", tableName: "plain", properties: { id: p.integer().primary(), body: p.text() } });
    orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "sizes", entities: [PlainEntity], migrations: [] });
    const sql = (text: string) => orm.em.getConnection().execute(text);
    await sql(`create table "sizes"."plain" ("id" int primary key, "body" text)`);
    await sql(`create table "sizes"."split" ("at" timestamptz not null, "body" text) partition by range ("at")`);
    await sql(`create table "sizes"."split_a" partition of "sizes"."split" for values from ('2026-01-01') to ('2026-02-01')`);
    await sql(`create table "sizes"."split_b" partition of "sizes"."split" for values from ('2026-02-01') to ('2026-03-01')`);
    await sql(`insert into "sizes"."plain" select g, repeat('x', 200) from generate_series(1, 1000) g`);
    await sql(`insert into "sizes"."split" select '2026-01-15'::timestamptz + (g % 30) * interval '1 day', repeat('y', 200) from generate_series(1, 2000) g`);
    await sql(`analyze "sizes"."plain"`);
    await sql(`analyze "sizes"."split"`);
  });
  after(async () => {
    await orm?.close(true);
    await database?.drop();
  });

  it("gives each table's rows and bytes, a partitioned table as the sum of its partitions", async () => {
    const unregister = registerTableSizes(orm, "sizes", logger);
    try {
      assert.equal(await metricValue("table_rows", `table="sizes.plain"`), 1000);
      assert.equal(await metricValue("table_rows", `table="sizes.split"`), 2000);
      const plainBytes = (await metricValue("table_bytes", `table="sizes.plain"`))!;
      const splitBytes = (await metricValue("table_bytes", `table="sizes.split"`))!;
      assert.ok(plainBytes > 200 * 1000, `plain: ${plainBytes} bytes`);
      assert.ok(splitBytes > 200 * 2000, `split: ${splitBytes} bytes`);
      assert.equal(await metricValue("table_rows", `table="sizes.split_a"`), undefined, "partitions are not reported apart");
    } finally {
      unregister();
    }
  });

  it("vacuums a churned table each interval: the pages of the rows its consumer deleted are given back", async () => {
    const sql = (text: string) => orm.em.getConnection().execute(text);
    await sql(`create table "sizes"."queue" ("id" int primary key, "body" text)`);
    await sql(`insert into "sizes"."queue" select g, repeat('q', 200) from generate_series(1, 2000) g`);
    await sql(`delete from "sizes"."queue"`);
    const pages = async () => Number((await sql(`select pg_relation_size('"sizes"."queue"') as "bytes"`))[0].bytes);
    assert.ok((await pages()) > 200 * 2000, "the deleted rows still hold their pages");
    const churn = startChurnVacuum(orm, [`"sizes"."queue"`], { logger, intervalMs: 20 });
    try {
      // Vacuum truncates a table whose trailing pages are all dead: the size comes down to nothing.
      await eventually(async () => (await pages()) === 0, 30_000, "the table vacuumed to no pages");
    } finally {
      await churn.stop();
    }
    assert.equal(await pages(), 0);
  });
});
