import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import type { Batch, KafkaMessage, TopicPartitionOffsetAndMetadata } from "kafkajs";
import { EventSchema, ResponseCompletedSchema, type ResponseCompleted } from "@formsvc/proto/events/v1/events_pb.js";
import { encodeEvent, eventFacts, eventTypeHeader } from "@formsvc/platform/events.ts";
import { quietLogger, sampleEvent } from "../testing/fixtures.ts";
import type { AcceptEvents, IncomingEvent } from "./accept-event.ts";
import { consumerGroupId, kafkaBatchHandler, responsesTopic } from "./kafka-consumer.ts";

function message(offset: string, value: Buffer | null, headers: KafkaMessage["headers"] = {}): KafkaMessage {
  return { key: Buffer.from("form_1"), value, timestamp: "0", attributes: 0, offset, headers };
}

function harness(accept: AcceptEvents) {
  const log: string[] = [];
  const commits: TopicPartitionOffsetAndMetadata[][] = [];
  let running = true;
  let stale = false;
  let heartbeats = 0;
  const handler = kafkaBatchHandler({
    acceptEvents: async (events, options) => {
      log.push(`accept ${events.map((e) => eventFacts(e.event).eventId).join(" ")}`);
      return accept(events, options);
    },
    logger: quietLogger,
    commit: async (offsets) => {
      log.push(`commit ${offsets[0].offset}`);
      commits.push(offsets);
    },
    isRunning: () => running,
    minBackoffMs: 5,
    maxBackoffMs: 20,
  });
  const handle = (...messages: KafkaMessage[]) =>
    handler({
      batch: { topic: responsesTopic, partition: 2, messages } as unknown as Batch,
      resolveOffset: (offset: string) => void log.push(`resolve ${offset}`),
      heartbeat: async () => {
        heartbeats += 1;
      },
      isStale: () => stale,
      isRunning: () => running,
      commitOffsetsIfNecessary: async () => undefined,
      uncommittedOffsets: () => ({ topics: [] }),
      pause: () => () => undefined,
    });
  return { log, commits, handle, stop: () => (running = false), goStale: () => (stale = true), heartbeats: () => heartbeats };
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
    await h.handle(message("7", Buffer.from(encodeEvent(published)), { [eventTypeHeader]: Buffer.from("FORM_PUBLISHED") }));
    assert.deepEqual([seen[0].event.event.case, eventFacts(seen[0].event).eventId], ["formPublished", "evt_pub"]);
  });

  it("decodes the batch's events, accepts them together with their request ids, then commits the next offset once", async () => {
    const [a, b] = [sampleEvent(), sampleEvent()];
    const seen: IncomingEvent[] = [];
    const h = harness(async (events, options) => {
      seen.push(...events);
      // Between the statements of a long batch, the consumer heartbeats.
      await options?.between?.();
      return { created: events.length };
    });
    await h.handle(message("41", encoded(a), { "x-request-id": Buffer.from("req-7") }), message("42", encoded(b)));
    assert.deepEqual(h.log, [`accept ${a.eventId} ${b.eventId}`, "resolve 42", "commit 43"]);
    assert.deepEqual(h.commits, [[{ topic: responsesTopic, partition: 2, offset: "43" }]]);
    const first = seen[0].event.event;
    assert.equal(first.case, "formResponse", "a message without event-type is a FORM_RESPONSE written before the envelope");
    assert.equal(first.value.formName, "Event sign-up");
    assert.equal(first.value.fields.length, 5);
    assert.deepEqual(seen.map((e) => e.requestId), ["req-7", undefined]);
    assert.equal(h.heartbeats(), 1);
  });

  it("keeps trying a batch that cannot be accepted yet, heartbeating, and commits only once it is", async () => {
    let failures = 3;
    const h = harness(async () => {
      if (failures-- > 0) throw new Error("webhooks down");
      return { created: 1 };
    });
    const event = sampleEvent();
    await h.handle(message("7", encoded(event)));
    assert.deepEqual(h.log, [...Array(4).fill(`accept ${event.eventId}`), "resolve 7", "commit 8"]);
    assert.equal(h.heartbeats(), 3);
  });

  it("leaves a failing batch uncommitted when stopping, and handles nothing once stopped", async () => {
    const h = harness(async () => {
      h.stop();
      throw new Error("database down");
    });
    await assert.rejects(h.handle(message("9", encoded(sampleEvent())), message("10", encoded(sampleEvent()))), /database down/);
    assert.deepEqual(h.commits, []);
    await h.handle(message("9", encoded(sampleEvent())));
    assert.equal(h.log.filter((line) => line.startsWith("accept")).length, 1);
  });

  it("leaves a batch whose partition went to another consumer to that consumer", async () => {
    const h = harness(async () => ({ created: 1 }));
    h.goStale();
    await h.handle(message("30", encoded(sampleEvent())));
    assert.deepEqual(h.log, []);
  });

  it("passes over (commits) messages that are not events, accepting the others", async () => {
    const event = sampleEvent();
    const h = harness(async () => ({ created: 1 }));
    await h.handle(message("3", null), message("4", Buffer.from([0xff, 0xff, 0xff])), message("5", encoded(event)));
    await h.handle(message("6", null));
    assert.deepEqual(h.log, [`accept ${event.eventId}`, "resolve 5", "commit 6", "resolve 6", "commit 7"]);
  });
});
