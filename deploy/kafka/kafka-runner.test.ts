import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { Admin, Consumer, MessagesStreamFallbackModes, MessagesStreamModes, ProduceAcks, Producer, stringDeserializers, stringSerializers, type BaseOptions } from "@platformatic/kafka";
import { DEFAULT_KAFKA_VERSION, ensureKafkaJars, requestMetadata, startKafka, type KafkaBroker } from "./kafka-runner.ts";

const topic = "runner-test";
let dataDir: string;
let kafka: KafkaBroker | undefined;

before(() => {
  dataDir = mkdtempSync(join(tmpdir(), "formsvc-kafka-test-"));
});

after(async () => {
  await kafka?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Consumes with `groupId` (from its committed offset, else the beginning) until one message arrives, commits it, and returns its key and value. */
async function consumeOne(client: BaseOptions, groupId: string): Promise<{ key: string; value: string }> {
  const consumer = new Consumer({ ...client, groupId, sessionTimeout: 10_000, heartbeatInterval: 1_000, deserializers: stringDeserializers });
  try {
    const stream = await consumer.consume({ topics: [topic], mode: MessagesStreamModes.COMMITTED, fallbackMode: MessagesStreamFallbackModes.EARLIEST, autocommit: false });
    const timer = setTimeout(() => stream.destroy(new Error(`no message for group ${groupId} within 60 s`)), 60_000);
    try {
      for await (const message of stream) {
        await message.commit();
        return { key: message.key ?? "", value: message.value ?? "" };
      }
      throw new Error(`the stream of group ${groupId} ended without a message`);
    } finally {
      clearTimeout(timer);
    }
  } finally {
    await consumer.close(true);
  }
}

async function produceOne(client: BaseOptions, key: string, value: string): Promise<void> {
  const producer = new Producer({ ...client, autocreateTopics: false, serializers: stringSerializers });
  try {
    const { offsets } = await producer.send({ acks: ProduceAcks.ALL, messages: [{ topic, key, value }] });
    assert.equal(offsets?.length, 1, "the broker acknowledged the message");
  } finally {
    await producer.close();
  }
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

test("ensureKafkaJars resolves the broker's classpath, then answers from its cache", async () => {
  const classpath = await ensureKafkaJars();
  const jars = classpath.split(":");
  assert.ok(jars.some((jar) => jar.endsWith(`/kafka_2.13-${DEFAULT_KAFKA_VERSION}.jar`)), "the broker jar is on the classpath");
  assert.ok(jars.some((jar) => /\/kafka-raft-/.test(jar)), "kafka-raft is on the classpath");
  assert.ok(jars.some((jar) => /\/slf4j-simple-/.test(jar)), "an SLF4J binding is on the classpath");
  const began = performance.now();
  assert.equal(await ensureKafkaJars(), classpath);
  assert.ok(performance.now() - began < 1_000, "a second call does not run Maven");
});

test("a broker that @platformatic/kafka can produce to and consume from, across restart() and kill()", { timeout: 240_000 }, async () => {
  kafka = await startKafka({ dataDir, partitions: 3 });
  const { port, brokers } = kafka;
  assert.equal(brokers, `127.0.0.1:${port}`);
  assert.match(readFileSync(join(dataDir, "server.properties"), "utf8"), /^process\.roles=broker,controller$/m);

  const client: BaseOptions = { clientId: "kafka-runner-test", bootstrapBrokers: [brokers], retries: 10 };
  const admin = new Admin(client);
  try {
    assert.deepEqual((await admin.createTopics({ topics: [topic], partitions: 3, replicas: 1 })).map((t) => t.name), [topic]);
    const metadata = await admin.metadata({ topics: [topic] });
    assert.equal(metadata.topics.get(topic)?.partitions.length, 3);
  } finally {
    await admin.close();
  }

  await produceOne(client, "k1", "before restart");
  assert.deepEqual(await consumeOne(client, "group-a"), { key: "k1", value: "before restart" });

  await kafka.restart();
  assert.equal(kafka.port, port, "restart() keeps the port");
  assert.ok((await requestMetadata(port)).brokers >= 1);
  await produceOne(client, "k2", "after restart");
  // The group's committed offset survived the restart: it gets the new message, not the first one again.
  assert.deepEqual(await consumeOne(client, "group-a"), { key: "k2", value: "after restart" });

  await kafka.kill();
  assert.equal(await portOpen(port), false, "kill() ends the broker");
  await kafka.restart();
  await produceOne(client, "k3", "after kill");
  assert.deepEqual(await consumeOne(client, "group-a"), { key: "k3", value: "after kill" });

  await kafka.stop();
  kafka = undefined;
  assert.equal(await portOpen(port), false, "stop() ends the broker");
  assert.ok(existsSync(join(dataDir, "logs", "meta.properties")), "a given dataDir is kept");
});
