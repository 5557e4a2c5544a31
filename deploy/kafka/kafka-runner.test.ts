import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { Kafka, logLevel, type Consumer } from "kafkajs";
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

/** Consumes with `groupId` until one message arrives, commits it, and returns its key and value. */
async function consumeOne(client: Kafka, groupId: string): Promise<{ key: string; value: string }> {
  const consumer: Consumer = client.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 1_000 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no message for group ${groupId} within 60 s`)), 60_000);
      consumer
        .run({
          autoCommit: false,
          eachMessage: async ({ partition, message }) => {
            await consumer.commitOffsets([{ topic, partition, offset: (BigInt(message.offset) + 1n).toString() }]);
            clearTimeout(timer);
            resolve({ key: message.key?.toString() ?? "", value: message.value?.toString() ?? "" });
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
}

async function produceOne(client: Kafka, key: string, value: string): Promise<void> {
  const producer = client.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    const [result] = await producer.send({ topic, acks: -1, messages: [{ key, value }] });
    assert.equal(result.errorCode, 0);
  } finally {
    await producer.disconnect();
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

test("a broker that kafkajs can produce to and consume from, across restart() and kill()", { timeout: 240_000 }, async () => {
  kafka = await startKafka({ dataDir, partitions: 3 });
  const { port, brokers } = kafka;
  assert.equal(brokers, `127.0.0.1:${port}`);
  assert.match(readFileSync(join(dataDir, "server.properties"), "utf8"), /^process\.roles=broker,controller$/m);

  const client = new Kafka({ clientId: "kafka-runner-test", brokers: [brokers], logLevel: logLevel.NOTHING, retry: { retries: 10 } });
  const admin = client.admin();
  await admin.connect();
  try {
    assert.equal(await admin.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true }), true);
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    assert.equal(metadata.topics[0].partitions.length, 3);
  } finally {
    await admin.disconnect();
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
