import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { envelopeOf } from "@formsvc/platform/events.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import type { ResponseCompleted } from "@formsvc/proto/events/v1/events_pb.js";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { openTestDatabase, type DeliveryTestDatabase } from "../testing/database.ts";
import { eventually, quietLogger, sampleEvent, testFileLinks } from "../testing/fixtures.ts";
import { FakeWebhooks } from "../../../webhooks/src/testing/fake-webhooks.ts";
import { createAcceptEvents } from "./accept-event.ts";
import { outboxCursorName, readCursor, startEmbeddedStream, type EmbeddedStream } from "./embedded-stream.ts";
import { FakeForms } from "../../../forms/src/testing/fake-forms.ts";
import { entities as submissionsEntities } from "../../../submissions/src/entities/index.ts";
import { createLocalFileStore } from "../../../submissions/src/files/local-file-store.ts";
import { createSubmissionsHandlers, routes as submissionsRoutes } from "../../../submissions/src/handlers/submissions-handlers.ts";
import { migrations as submissionsMigrations } from "../../../submissions/src/migrations/index.ts";
import { outboxBacklog } from "../../../submissions/src/outbox/outbox-metrics.ts";
import { outboxTarget } from "../../../submissions/src/outbox/outbox-retention.ts";
import { outboxColumns, outboxParams, outboxRow } from "../../../submissions/src/outbox/outbox-rows.ts";

let db: DeliveryTestDatabase;
const webhooks = new FakeWebhooks();
let streams: EmbeddedStream[] = [];

/** A fake submissions outbox: its rows, the cursors asked for, and a way to break the stream. */
class FakeOutbox {
  rows: { cursor: bigint; event?: ResponseCompleted }[] = [];
  asked: bigint[] = [];
  /** The cursors acknowledged (AcknowledgeCompletions), in order. */
  acknowledged: { follower: string; cursor: bigint }[] = [];
  /** While set, AcknowledgeCompletions fails with it. */
  acknowledgeFailsWith: Code | undefined;
  /** Acknowledgments refused (while `acknowledgeFailsWith` is set), with their cursors. */
  refused: bigint[] = [];
  /** Stream calls still open. */
  open = 0;
  /** Fail the stream once after this many messages of one call. */
  failAfter: number | undefined;
  private waiters: (() => void)[] = [];

  add(event?: ResponseCompleted): void {
    this.rows.push({ cursor: BigInt(this.rows.length + 1) * 10n, event });
    for (const w of this.waiters.splice(0)) w();
  }

  readonly client = createClient(
    SubmissionsService,
    createRouterTransport((router) =>
      router.service(SubmissionsService, {
        acknowledgeCompletions: (req) => {
          if (outbox.acknowledgeFailsWith !== undefined) {
            outbox.refused.push(req.cursor);
            throw new ConnectError("acknowledgment refused", outbox.acknowledgeFailsWith);
          }
          outbox.acknowledged.push({ follower: req.follower, cursor: req.cursor });
          return {};
        },
        streamCompletions: async function* (this: void, req, ctx) {
          outbox.asked.push(req.afterCursor);
          outbox.open += 1;
          ctx.signal.addEventListener("abort", () => (outbox.open -= 1), { once: true });
          let cursor = req.afterCursor;
          let sent = 0;
          while (!ctx.signal.aborted) {
            const next = outbox.rows.find((r) => r.cursor > cursor);
            if (!next) {
              await new Promise<void>((resolve) => {
                outbox.waiters.push(resolve);
                ctx.signal.addEventListener("abort", () => resolve(), { once: true });
              });
              continue;
            }
            if (outbox.failAfter !== undefined && sent === outbox.failAfter) {
              outbox.failAfter = undefined;
              throw new ConnectError("submissions restarting", Code.Unavailable);
            }
            cursor = next.cursor;
            sent += 1;
            yield { cursor: next.cursor, event: next.event, requestId: `req-${next.cursor}` };
          }
        },
      }),
    ),
  );
}
let outbox: FakeOutbox;

function start(options: { submissions?: FakeOutbox["client"]; acknowledgeEveryMs?: number } = {}): EmbeddedStream {
  const acceptEvents = createAcceptEvents({ orm: db.orm, webhooks: webhooks.client, fileLinks: testFileLinks, logger: quietLogger });
  const stream = startEmbeddedStream({
    orm: db.orm,
    submissions: options.submissions ?? outbox.client,
    acceptEvents,
    logger: quietLogger,
    minBackoffMs: 20,
    maxBackoffMs: 100,
    acknowledgeEveryMs: options.acknowledgeEveryMs,
  });
  streams.push(stream);
  return stream;
}

before(async () => {
  db = await openTestDatabase("delivery_stream_test");
});
beforeEach(async () => {
  webhooks.clear();
  await db.reset();
  outbox = new FakeOutbox();
  webhooks.add({ id: "wh_1", url: "https://a.example/hook" });
});
afterEach(async () => {
  await Promise.all(streams.splice(0).map((s) => s.stop()));
});
after(async () => {
  await db?.close();
});

describe("embedded stream", () => {
  it("stores each event's deliveries with the cursor, and follows new completions as they come", async () => {
    const events = [sampleEvent(), sampleEvent()];
    for (const e of events) outbox.add(e);
    start();
    await eventually(async () => (await readCursor(db.orm)) === 20n);
    assert.deepEqual((await db.deliveries()).map((d) => d.eventId), events.map((e) => e.eventId));
    assert.deepEqual(outbox.asked, [0n]);
    const later = sampleEvent();
    outbox.add(later);
    await eventually(async () => (await readCursor(db.orm, outboxCursorName)) === 30n);
    assert.equal((await db.deliveries()).at(-1)!.eventId, later.eventId);
  });

  it("resumes after a restart from the durable cursor", async () => {
    outbox.add(sampleEvent());
    outbox.add(sampleEvent());
    const first = start();
    await eventually(async () => (await readCursor(db.orm)) === 20n);
    await first.stop();
    streams = streams.filter((s) => s !== first);
    outbox.add(sampleEvent());
    start();
    await eventually(async () => (await readCursor(db.orm)) === 30n);
    assert.deepEqual(outbox.asked, [0n, 20n]);
    assert.equal((await db.deliveries()).length, 3);
  });

  it("reconnects with backoff when the stream fails, and when an event cannot be accepted yet, without skipping or doubling", async () => {
    for (let i = 0; i < 3; i++) outbox.add(sampleEvent());
    outbox.failAfter = 1;
    start();
    await eventually(async () => (await readCursor(db.orm)) === 30n);
    assert.deepEqual(outbox.asked, [0n, 10n], "reopened after the last event stored");
    assert.equal((await db.deliveries()).length, 3);

    // webhooks down: the event is not acknowledged, and is handled once webhooks answers.
    webhooks.failWith = Code.Unavailable;
    const blocked = sampleEvent();
    outbox.add(blocked);
    await eventually(() => outbox.asked.length >= 4, 5_000, "reconnects");
    assert.equal(await readCursor(db.orm), 30n, "the cursor did not pass the event");
    assert.ok(outbox.open <= 1, `each failed batch ends its stream call: ${outbox.open} open`);
    webhooks.failWith = undefined;
    await eventually(async () => (await readCursor(db.orm)) === 40n);
    const rows = await db.deliveries();
    assert.equal(rows.length, 4);
    assert.equal(rows.at(-1)!.eventId, blocked.eventId);
    assert.ok(outbox.asked.slice(2).every((c) => c === 30n));
  });

  it("moves past messages without an event, and past events of forms without webhooks", async () => {
    outbox.add(undefined);
    outbox.add(sampleEvent({ formId: "form_quiet" }));
    start();
    await eventually(async () => (await readCursor(db.orm)) === 20n);
    assert.equal((await db.deliveries()).length, 0);
  });

  it("acknowledges its durable cursor to submissions at most every interval, and once on stop, whatever a failure", async () => {
    for (let i = 0; i < 3; i++) outbox.add(sampleEvent());
    const stream = start({ acknowledgeEveryMs: 50 });
    await eventually(() => outbox.acknowledged.at(-1)?.cursor === 30n);
    assert.ok(outbox.acknowledged.every((a) => a.follower === outboxCursorName));
    const sent = outbox.acknowledged.map((a) => a.cursor);
    assert.deepEqual(sent, [...new Set(sent)].sort((a, b) => Number(a - b)), "each acknowledgment moves on: none sent again");

    // Refused: the stream goes on, and the next acknowledgment after the failure carries the cursor on.
    outbox.acknowledgeFailsWith = Code.Unavailable;
    outbox.add(sampleEvent());
    await eventually(async () => (await readCursor(db.orm)) === 40n);
    // Until the stream has tried to acknowledge the new cursor (and been refused).
    await eventually(() => outbox.refused.includes(40n));
    assert.equal(outbox.acknowledged.at(-1)!.cursor, 30n);
    outbox.acknowledgeFailsWith = undefined;
    await eventually(() => outbox.acknowledged.at(-1)?.cursor === 40n);

    // Not yet due: only stop sends it.
    await stream.stop();
    streams = streams.filter((s) => s !== stream);
    const slow = start({ acknowledgeEveryMs: 60_000 });
    outbox.add(sampleEvent());
    await eventually(async () => (await readCursor(db.orm)) === 50n);
    assert.equal(outbox.acknowledged.at(-1)!.cursor, 40n);
    await slow.stop();
    streams = streams.filter((s) => s !== slow);
    assert.equal(outbox.acknowledged.at(-1)!.cursor, 50n);
  });
});

describe("embedded stream following a real submissions", () => {
  let submissionsDatabase: TestDatabase;
  let submissionsOrm: MikroORM;
  let filesDir: string;
  let submissions: FakeOutbox["client"];

  before(async () => {
    submissionsDatabase = await createTestDatabase("delivery_stream_submissions");
    submissionsOrm = await openDatabase({ databaseUrl: submissionsDatabase.databaseUrl, schema: "submissions", entities: submissionsEntities, migrations: submissionsMigrations });
    filesDir = mkdtempSync(join(tmpdir(), "delivery-stream-submissions-"));
    const handlers = createSubmissionsHandlers({ orm: submissionsOrm, forms: new FakeForms().client, files: createLocalFileStore(filesDir), logger: quietLogger, streamPollMs: 50 });
    submissions = createClient(SubmissionsService, createRouterTransport((router) => submissionsRoutes(router, handlers)));
  });
  after(async () => {
    await submissionsOrm?.close(true);
    await submissionsDatabase?.drop();
    if (filesDir) rmSync(filesDir, { recursive: true, force: true });
  });

  /** Completions written into submissions' outbox as a save writes them, a transaction each. */
  async function complete(n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const row = outboxRow(envelopeOf(sampleEvent()), new Date());
      await submissionsOrm.em.getConnection().execute(`insert into "submissions"."outbox" ${outboxColumns} values (?, ?, ?, ?, ?, ?, ?)`, outboxParams(row), "run");
    }
  }

  const followerPosition = async () => {
    const [row] = await submissionsOrm.em
      .getConnection()
      .execute<{ position: string }[]>(`select "position"::text as "position" from "submissions"."outbox_followers" where "name" = ?`, [outboxCursorName]);
    return row ? BigInt(row.position) : undefined;
  };

  it("acknowledges what it stored to submissions, whose backlog then reads 0 and whose retention removes what it passed", async () => {
    await complete(4);
    assert.equal(await outboxBacklog(submissionsOrm, "embedded"), 4, "nothing acknowledged yet: every row waits");
    const stream = start({ submissions, acknowledgeEveryMs: 50 });
    await eventually(async () => (await db.deliveries()).length === 4);
    const cursor = await readCursor(db.orm);
    await eventually(async () => (await followerPosition()) === cursor);
    assert.equal(await outboxBacklog(submissionsOrm, "embedded"), 0);

    // Retention (no notifier here): the operator's prune removes every row the stream acknowledged.
    const target = outboxTarget(submissionsOrm, { bus: "embedded", notifications: false, safetySeconds: 3600 });
    assert.equal(await target.count(target.olderThanAt(new Date())!), 0, "within the safety window");
    assert.equal(await target.remove(new Date(Date.now() + 1000)), 4);

    // A row the stream has not acknowledged stays; stop acknowledges what it stored last.
    await stream.stop();
    streams = streams.filter((s) => s !== stream);
    await complete(1);
    assert.equal(await outboxBacklog(submissionsOrm, "embedded"), 1);
    assert.equal(await target.remove(new Date(Date.now() + 1000)), 0);
    const slow = start({ submissions, acknowledgeEveryMs: 60_000 });
    await eventually(async () => (await db.deliveries()).length === 5);
    await slow.stop();
    streams = streams.filter((s) => s !== slow);
    assert.equal(await followerPosition(), await readCursor(db.orm), "stop acknowledged the last cursor");
    assert.equal(await outboxBacklog(submissionsOrm, "embedded"), 0);
    assert.equal(await target.remove(new Date(Date.now() + 1000)), 1);
  });
});
