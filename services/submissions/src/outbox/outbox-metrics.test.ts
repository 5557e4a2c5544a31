import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { metrics } from "@formsvc/platform/metrics.ts";
import { newId } from "@formsvc/platform/ids.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { entities, OutboxEntity } from "../entities/index.ts";
import { migrations } from "../migrations/index.ts";
import { registerOutboxBacklog } from "./outbox-metrics.ts";
import { acknowledgeWhenReadable, addOutboxRow } from "../testing/outbox-rows.ts";

let database: TestDatabase;
let orm: MikroORM;
before(async () => {
  database = await createTestDatabase("formsvc_outbox_metrics");
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "submissions", entities, migrations });
});
beforeEach(async () => {
  await orm.em.getConnection().execute(`truncate "submissions"."outbox", "submissions"."outbox_followers"`);
});
after(async () => {
  await orm?.close();
  await database?.drop();
});

/** Writes `n` outbox rows, one transaction each; the txid of the last. */
async function addRows(n: number): Promise<bigint> {
  let txid = 0n;
  for (let i = 0; i < n; i++) txid = (await addOutboxRow(orm)).txid;
  return txid;
}

const acknowledge = (txid: bigint) => acknowledgeWhenReadable(orm, "submissions-outbox", txid);

describe("outbox_backlog", () => {
  it("with Kafka, counts the unpublished outbox rows on each scrape", async () => {
    registerOutboxBacklog(orm, "kafka");
    assert.match(await metrics.metrics(), /\noutbox_backlog 0\n/);
    const em = orm.em.fork();
    for (let i = 0; i < 3; i++) {
      em.create(OutboxEntity, { eventId: newId(), formId: "f1", payload: new Uint8Array([i]), requestId: null, createdAt: new Date() });
    }
    await em.flush();
    assert.match(await metrics.metrics(), /\noutbox_backlog 3\n/);
    await orm.em.fork().nativeUpdate(OutboxEntity, {}, { publishedAt: new Date() });
    assert.match(await metrics.metrics(), /\noutbox_backlog 0\n/);
  });

  it("on the embedded bus, counts the rows after the follower's acknowledged position, and reads 0 once it acknowledged everything", async () => {
    registerOutboxBacklog(orm, "embedded");
    assert.match(await metrics.metrics(), /\noutbox_backlog 0\n/);
    const third = await addRows(3);
    assert.match(await metrics.metrics(), /\noutbox_backlog 3\n/, "no follower has acknowledged anything: every row waits");
    const fifth = await addRows(2);
    await acknowledge(third);
    assert.match(await metrics.metrics(), /\noutbox_backlog 2\n/);
    await acknowledge(fifth);
    assert.match(await metrics.metrics(), /\noutbox_backlog 0\n/);
    // Published or not makes no difference on this bus.
    assert.equal((await orm.em.fork().count(OutboxEntity, { publishedAt: null })), 5);
  });
});
