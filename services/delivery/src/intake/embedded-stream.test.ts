import assert from "node:assert/strict";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import type { ResponseCompleted } from "@formsvc/proto/events/v1/events_pb.js";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { openTestDatabase, type DeliveryTestDatabase } from "../testing/database.ts";
import { eventually, quietLogger, sampleEvent, testFileLinks } from "../testing/fixtures.ts";
import { FakeWebhooks } from "../../../webhooks/src/testing/fake-webhooks.ts";
import { createAcceptEvents } from "./accept-event.ts";
import { outboxCursorName, readCursor, startEmbeddedStream, type EmbeddedStream } from "./embedded-stream.ts";

let db: DeliveryTestDatabase;
const webhooks = new FakeWebhooks();
let streams: EmbeddedStream[] = [];

/** A fake submissions outbox: its rows, the cursors asked for, and a way to break the stream. */
class FakeOutbox {
  rows: { cursor: bigint; event?: ResponseCompleted }[] = [];
  asked: bigint[] = [];
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

function start(): EmbeddedStream {
  const acceptEvents = createAcceptEvents({ orm: db.orm, webhooks: webhooks.client, fileLinks: testFileLinks, logger: quietLogger });
  const stream = startEmbeddedStream({ orm: db.orm, submissions: outbox.client, acceptEvents, logger: quietLogger, minBackoffMs: 20, maxBackoffMs: 100 });
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
});
