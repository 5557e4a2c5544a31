import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { metrics } from "@formsvc/platform/metrics.ts";
import { newId } from "@formsvc/platform/ids.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { entities, OutboxEntity } from "../entities/index.ts";
import { migrations } from "../migrations/index.ts";
import { registerOutboxBacklog } from "./outbox-metrics.ts";

let database: TestDatabase;
let orm: MikroORM;
before(async () => {
  database = await createTestDatabase("formsvc_outbox_metrics");
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "submissions", entities, migrations });
});
after(async () => {
  await orm?.close();
  await database?.drop();
});

describe("outbox_backlog", () => {
  it("counts the unpublished outbox rows on each scrape", async () => {
    registerOutboxBacklog(orm);
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
});
