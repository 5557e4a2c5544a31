// The Kafka intake against a real single-node broker (deploy/kafka/kafka-runner.ts).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { toBinary } from "@bufbuild/protobuf";
import { Admin, compatibilityPartitioner, Producer, stringSerializer } from "@platformatic/kafka";
import type { ResponseCompleted } from "@formsvc/proto/events/v1/events_pb.js";
import { ResponseCompletedSchema } from "@formsvc/proto/events/v1/events_pb.js";
import { startKafka, type KafkaBroker } from "../../../../deploy/kafka/kafka-runner.ts";
import { openTestDatabase, type DeliveryTestDatabase } from "../testing/database.ts";
import { eventually, quietLogger, sampleEvent, testFileLinks } from "../testing/fixtures.ts";
import { FakeWebhooks } from "../../../webhooks/src/testing/fake-webhooks.ts";
import { createAcceptEvents } from "./accept-event.ts";
import { consumerGroupId, responsesTopic, startKafkaIntake, type KafkaIntake } from "./kafka-consumer.ts";

let kafka: KafkaBroker;
let db: DeliveryTestDatabase;
let admin: Admin;
let producer: Producer<string, Buffer, string, string>;
const webhooks = new FakeWebhooks();

async function publish(events: ResponseCompleted[]): Promise<void> {
  await producer.send({
    messages: events.map((e) => ({ topic: responsesTopic, key: e.formId, value: Buffer.from(toBinary(ResponseCompletedSchema, e)), headers: { "x-request-id": `req-${e.eventId}` } })),
  });
}

function startIntake(): KafkaIntake {
  const acceptEvents = createAcceptEvents({ orm: db.orm, webhooks: webhooks.client, fileLinks: testFileLinks, logger: quietLogger });
  return startKafkaIntake({ brokers: [kafka.brokers], acceptEvents, logger: quietLogger });
}

/** Offsets the group has committed on the topic, summed over partitions. */
async function committed(): Promise<number> {
  const [group] = await admin.listConsumerGroupOffsets({ groups: [{ groupId: consumerGroupId, topics: [{ name: responsesTopic, partitionIndexes: [0, 1, 2] }] }] });
  const topic = group.topics.find((t) => t.name === responsesTopic);
  return (topic?.partitions ?? []).reduce((sum, p) => sum + Math.max(0, Number(p.committedOffset)), 0);
}

before(async () => {
  [kafka, db] = await Promise.all([startKafka(), openTestDatabase("delivery_kafka_test")]);
  admin = new Admin({ clientId: "delivery-test", bootstrapBrokers: [kafka.brokers] });
  await admin.createTopics({ topics: [responsesTopic], partitions: 3 });
  producer = new Producer({
    clientId: "delivery-test",
    bootstrapBrokers: [kafka.brokers],
    partitioner: compatibilityPartitioner,
    serializers: { key: stringSerializer, headerKey: stringSerializer, headerValue: stringSerializer },
  });
  webhooks.add({ id: "wh_a", formId: "form_a", url: "https://a.example/hook" });
  webhooks.add({ id: "wh_b", formId: "form_b", url: "https://b.example/hook" });
});

after(async () => {
  await producer?.close();
  await admin?.close();
  await db?.close();
  await kafka?.stop();
});

describe("kafka intake", () => {
  it("stores deliveries from the topic, commits after storing, and a restarted consumer doubles nothing", async () => {
    const first = [sampleEvent({ formId: "form_a" }), sampleEvent({ formId: "form_b" }), sampleEvent({ formId: "form_a" }), sampleEvent({ formId: "form_b" })];
    // Published before the group ever ran: a new group starts from the beginning.
    await publish(first);
    const intake = startIntake();
    await eventually(async () => (await db.deliveries()).length === 4, 60_000, "4 deliveries");
    await eventually(async () => (await committed()) === 4, 20_000, "4 offsets committed");
    await intake.stop();

    const again = [sampleEvent({ formId: "form_a" }), first[1]];
    await publish(again);
    const restarted = startIntake();
    await eventually(async () => (await committed()) === 6, 60_000, "6 offsets committed");
    await restarted.stop();

    const rows = await db.deliveries();
    assert.equal(rows.length, 5, "the event published twice made one delivery");
    assert.deepEqual(new Set(rows.map((d) => d.eventId)), new Set([...first, again[0]].map((e) => e.eventId)));
    for (const d of rows) assert.equal(d.webhookId, d.formId === "form_a" ? "wh_a" : "wh_b");
  });
});
