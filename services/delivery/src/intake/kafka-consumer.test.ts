import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toBinary } from "@bufbuild/protobuf";
import type { KafkaMessage, TopicPartitionOffsetAndMetadata } from "kafkajs";
import { currentRequestId } from "@formsvc/platform/request-context.ts";
import { ResponseCompletedSchema, type ResponseCompleted } from "@formsvc/proto/events/v1/events_pb.js";
import { quietLogger, sampleEvent } from "../testing/fixtures.ts";
import type { AcceptEvent } from "./accept-event.ts";
import { consumerGroupId, kafkaMessageHandler, responsesTopic } from "./kafka-consumer.ts";

function message(offset: string, value: Buffer | null, headers: KafkaMessage["headers"] = {}): KafkaMessage {
  return { key: Buffer.from("form_1"), value, timestamp: "0", attributes: 0, offset, headers };
}

function harness(accept: AcceptEvent) {
  const log: string[] = [];
  const commits: TopicPartitionOffsetAndMetadata[][] = [];
  let running = true;
  let heartbeats = 0;
  const handler = kafkaMessageHandler({
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
  const handle = (m: KafkaMessage) =>
    handler({
      topic: responsesTopic,
      partition: 2,
      message: m,
      heartbeat: async () => {
        heartbeats += 1;
      },
      pause: () => () => undefined,
    });
  return { log, commits, handle, stop: () => (running = false), heartbeats: () => heartbeats };
}

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
    await h.handle(message("41", Buffer.from(toBinary(ResponseCompletedSchema, event)), { "x-request-id": Buffer.from("req-7") }));
    assert.deepEqual(h.log, [`accept ${event.eventId}`, "commit 42"]);
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
    await h.handle(message("7", Buffer.from(toBinary(ResponseCompletedSchema, event))));
    assert.deepEqual(h.log, [...Array(4).fill(`accept ${event.eventId}`), "commit 8"]);
    assert.equal(h.heartbeats(), 3);
  });

  it("leaves a failing event uncommitted when stopping", async () => {
    const h = harness(async () => {
      throw new Error("database down");
    });
    h.stop();
    await assert.rejects(h.handle(message("9", Buffer.from(toBinary(ResponseCompletedSchema, sampleEvent())))), /database down/);
    assert.deepEqual(h.commits, []);
  });

  it("passes over (commits) a message that is not an event", async () => {
    const h = harness(async () => ({ created: 0 }));
    await h.handle(message("3", null));
    await h.handle(message("4", Buffer.from([0xff, 0xff, 0xff])));
    assert.deepEqual(h.log, ["commit 4", "commit 5"]);
  });
});
