import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toBinary } from "@bufbuild/protobuf";
import type { Batch, KafkaMessage, TopicPartitionOffsetAndMetadata } from "kafkajs";
import { currentRequestId } from "@formsvc/platform/request-context.ts";
import { ResponseCompletedSchema, type ResponseCompleted } from "@formsvc/proto/events/v1/events_pb.js";
import { quietLogger, sampleEvent } from "../testing/fixtures.ts";
import type { AcceptEvent } from "./accept-event.ts";
import { consumerGroupId, kafkaBatchHandler, responsesTopic } from "./kafka-consumer.ts";

function message(offset: string, value: Buffer | null, headers: KafkaMessage["headers"] = {}): KafkaMessage {
  return { key: Buffer.from("form_1"), value, timestamp: "0", attributes: 0, offset, headers };
}

function harness(accept: AcceptEvent) {
  const log: string[] = [];
  const commits: TopicPartitionOffsetAndMetadata[][] = [];
  let running = true;
  let stale = false;
  let heartbeats = 0;
  const handler = kafkaBatchHandler({
    acceptEvent: async (event, options) => {
      log.push(`accept ${event.eventId}`);
      return accept(event, options);
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

  it("decodes the event, accepts it with the request id, then commits the next offset", async () => {
    const event = sampleEvent();
    const seen: { event: ResponseCompleted; requestId: string | undefined }[] = [];
    const h = harness(async (e) => {
      seen.push({ event: e, requestId: currentRequestId() });
      return { created: 1 };
    });
    await h.handle(message("41", encoded(event), { "x-request-id": Buffer.from("req-7") }));
    assert.deepEqual(h.log, [`accept ${event.eventId}`, "resolve 41", "commit 42"]);
    assert.deepEqual(h.commits, [[{ topic: responsesTopic, partition: 2, offset: "42" }]]);
    assert.equal(seen[0].event.formName, "Event sign-up");
    assert.equal(seen[0].event.fields.length, 5);
    assert.equal(seen[0].requestId, "req-7");
  });

  it("keeps trying an event that cannot be accepted yet, heartbeating, and commits only once it is", async () => {
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

  it("leaves a failing event uncommitted when stopping, and handles nothing once stopped", async () => {
    const h = harness(async () => {
      h.stop();
      throw new Error("database down");
    });
    await assert.rejects(h.handle(message("9", encoded(sampleEvent()))), /database down/);
    assert.deepEqual(h.commits, []);
    await h.handle(message("9", encoded(sampleEvent())));
    assert.equal(h.log.filter((line) => line.startsWith("accept")).length, 1);
  });

  it("commits once per batch, after every event of it; stopping mid-batch commits what was handled", async () => {
    const [a, b, c] = [sampleEvent(), sampleEvent(), sampleEvent()];
    const h = harness(async () => ({ created: 1 }));
    await h.handle(message("10", encoded(a)), message("11", encoded(b)), message("12", encoded(c)));
    assert.deepEqual(h.log, [`accept ${a.eventId}`, "resolve 10", `accept ${b.eventId}`, "resolve 11", `accept ${c.eventId}`, "resolve 12", "commit 13"]);

    let calls = 0;
    const failing = harness(async () => {
      if (++calls === 2) {
        failing.stop();
        throw new Error("database down");
      }
      return { created: 1 };
    });
    await assert.rejects(failing.handle(message("20", encoded(a)), message("21", encoded(b)), message("22", encoded(c))), /database down/);
    assert.deepEqual(failing.commits, [[{ topic: responsesTopic, partition: 2, offset: "21" }]], "the first event's commit, not the failed one's");
  });

  it("stops handling a batch whose partition went to another consumer", async () => {
    const [a, b] = [sampleEvent(), sampleEvent()];
    const h = harness(async () => {
      h.goStale();
      return { created: 1 };
    });
    await h.handle(message("30", encoded(a)), message("31", encoded(b)));
    assert.deepEqual(h.log, [`accept ${a.eventId}`, "resolve 30", "commit 31"]);
  });

  it("passes over (commits) a message that is not an event", async () => {
    const h = harness(async () => ({ created: 0 }));
    await h.handle(message("3", null));
    await h.handle(message("4", Buffer.from([0xff, 0xff, 0xff])));
    assert.deepEqual(h.log, ["resolve 3", "commit 4", "resolve 4", "commit 5"]);
  });
});
