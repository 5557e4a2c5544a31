import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { EventSchema, ResponseCompletedSchema, type ResponseCompleted } from "@formsvc/proto/events/v1/events_pb.js";
import { encodeEvent, eventFacts, eventTypeHeader } from "@formsvc/platform/events.ts";
import { quietLogger, sampleEvent } from "../testing/fixtures.ts";
import type { AcceptEvents, IncomingEvent } from "./accept-event.ts";
import { consumerGroupId, kafkaBatchHandler, responsesTopic, type EventMessage } from "./kafka-consumer.ts";

type Fetched = Omit<EventMessage, "commit">;

function message(offset: bigint, value: Buffer | null, headers: Record<string, string> = {}): Fetched {
  return { value: value as Buffer, offset, headers: new Map(Object.entries(headers)) };
}

function harness(accept: AcceptEvents) {
  const log: string[] = [];
  const commits: { topic: string; partition: number; offset: bigint }[] = [];
  let running = true;
  let stale = false;
  const handler = kafkaBatchHandler({
    acceptEvents: async (events, options) => {
      log.push(`accept ${events.map((e) => eventFacts(e.event).eventId).join(" ")}`);
      return accept(events, options);
    },
    logger: quietLogger,
    isRunning: () => running,
    minBackoffMs: 5,
    maxBackoffMs: 20,
  });
  // Each message commits the offset after it, as the client's messages do.
  const handle = (...messages: Fetched[]) =>
    handler({
      topic: responsesTopic,
      partition: 2,
      messages: messages.map((m) => ({
        ...m,
        commit: async () => {
          log.push(`commit ${m.offset + 1n}`);
          commits.push({ topic: responsesTopic, partition: 2, offset: m.offset + 1n });
        },
      })),
      isStale: () => stale,
    });
  return { log, commits, handle, stop: () => (running = false), goStale: () => (stale = true) };
}

const encoded = (event: ResponseCompleted) => Buffer.from(toBinary(ResponseCompletedSchema, event));

describe("kafka consumer", () => {
  it("is group formsvc-delivery on formsvc.responses", () => {
    assert.equal(consumerGroupId, "formsvc-delivery");
    assert.equal(responsesTopic, "formsvc.responses");
  });

  it("reads a message with an event-type header as the envelope, of any type", async () => {
    const seen: IncomingEvent[] = [];
    const h = harness(async (events) => {
      seen.push(...events);
      return { created: events.length };
    });
    const published = create(EventSchema, { event: { case: "formPublished", value: { eventId: "evt_pub", formId: "form_1", formName: "F", status: "published", version: 3 } } });
    await h.handle(message(7n, Buffer.from(encodeEvent(published)), { [eventTypeHeader]: "FORM_PUBLISHED" }));
    assert.deepEqual([seen[0].event.event.case, eventFacts(seen[0].event).eventId], ["formPublished", "evt_pub"]);
  });

  it("decodes the batch's events, accepts them together with their request ids, then commits the next offset once", async () => {
    const [a, b] = [sampleEvent(), sampleEvent()];
    const seen: IncomingEvent[] = [];
    const h = harness(async (events) => {
      seen.push(...events);
      return { created: events.length };
    });
    await h.handle(message(41n, encoded(a), { "x-request-id": "req-7" }), message(42n, encoded(b)));
    assert.deepEqual(h.log, [`accept ${a.eventId} ${b.eventId}`, "commit 43"]);
    assert.deepEqual(h.commits, [{ topic: responsesTopic, partition: 2, offset: 43n }]);
    const first = seen[0].event.event;
    assert.equal(first.case, "formResponse", "a message without event-type is a FORM_RESPONSE written before the envelope");
    assert.equal(first.value.formName, "Event sign-up");
    assert.equal(first.value.fields.length, 5);
    assert.deepEqual(seen.map((e) => e.requestId), ["req-7", undefined]);
  });

  it("keeps trying a batch that cannot be accepted yet, and commits only once it is", async () => {
    let failures = 3;
    const h = harness(async () => {
      if (failures-- > 0) throw new Error("webhooks down");
      return { created: 1 };
    });
    const event = sampleEvent();
    await h.handle(message(7n, encoded(event)));
    assert.deepEqual(h.log, [...Array(4).fill(`accept ${event.eventId}`), "commit 8"]);
  });

  it("leaves a failing batch uncommitted when stopping, and handles nothing once stopped", async () => {
    const h = harness(async () => {
      h.stop();
      throw new Error("database down");
    });
    await assert.rejects(h.handle(message(9n, encoded(sampleEvent())), message(10n, encoded(sampleEvent()))), /database down/);
    assert.deepEqual(h.commits, []);
    await h.handle(message(9n, encoded(sampleEvent())));
    assert.equal(h.log.filter((line) => line.startsWith("accept")).length, 1);
  });

  it("leaves a batch whose partition went to another consumer to that consumer", async () => {
    const h = harness(async () => ({ created: 1 }));
    h.goStale();
    await h.handle(message(30n, encoded(sampleEvent())));
    assert.deepEqual(h.log, []);
  });

  it("passes over (commits) messages that are not events, accepting the others", async () => {
    const event = sampleEvent();
    const h = harness(async () => ({ created: 1 }));
    await h.handle(message(3n, null), message(4n, Buffer.from([0xff, 0xff, 0xff])), message(5n, encoded(event)));
    await h.handle(message(6n, null));
    assert.deepEqual(h.log, [`accept ${event.eventId}`, "commit 6", "commit 7"]);
  });

  it("passes over messages it has handled already (a rebalance fetches a partition again from its committed offset)", async () => {
    const [a, b, c] = [sampleEvent(), sampleEvent(), sampleEvent()];
    const h = harness(async () => ({ created: 1 }));
    await h.handle(message(41n, encoded(a)), message(42n, encoded(b)));
    await h.handle(message(41n, encoded(a)), message(42n, encoded(b)), message(43n, encoded(c)), message(41n, encoded(a)));
    await h.handle(message(42n, encoded(b)));
    assert.deepEqual(h.log, [`accept ${a.eventId} ${b.eventId}`, "commit 43", `accept ${c.eventId}`, "commit 44"]);
  });
});
