import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { inspect } from "node:util";
import { after, afterEach, before, describe, it } from "node:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampNow, ValueSchema } from "@bufbuild/protobuf/wkt";
import { Admin, Consumer, ListOffsetTimestamps, MessagesStreamModes, stringDeserializer, type Message } from "@platformatic/kafka";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { newId } from "@formsvc/platform/ids.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { ResponseCompletedSchema } from "@formsvc/proto/events/v1/events_pb.js";
import { startKafka, type KafkaBroker } from "../../../../deploy/kafka/kafka-runner.ts";
import { createCompletionNotifier, type CompletionNotifier } from "./completion-notifier.ts";
import { entities, OutboxEntity } from "../entities/index.ts";
import { migrations } from "../migrations/index.ts";
import { outboxBacklog } from "./outbox-metrics.ts";
import { responsesTopic, startKafkaRelay, type KafkaRelay, type KafkaRelayOptions } from "./kafka-relay.ts";

// A marker inside every payload: it must never reach a log line.
const secretAnswer = `secret answer ${randomUUID()}`;

let database: TestDatabase;
let orm: MikroORM;
let broker: KafkaBroker;
let dataDir: string;
let admin: Admin;

// --- Logs, captured: counts and errors, never payloads. ---

const logged: { level: string; msg: string; line: string }[] = [];
function captureLogger(): Logger {
  const at = (level: string) => (obj: unknown, msg?: string) => {
    const text = typeof obj === "string" ? obj : (msg ?? "");
    logged.push({ level, msg: text, line: `${text} ${inspect(obj, { depth: 8 })}` });
  };
  const logger = { trace: at("trace"), debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error"), fatal: at("fatal") };
  return logger as unknown as Logger;
}

// --- Outbox rows, written as saveResponse writes them. ---

interface Written {
  id: string;
  eventId: string;
  formId: string;
  requestId: string | null;
  payload: Uint8Array;
}

/** Writes `count` outbox rows (forms f1..f3 in turn) in transactions of `perTransaction`, as completions do. */
async function writeRows(count: number, options: { perTransaction?: number; notify?: CompletionNotifier; db?: MikroORM } = {}): Promise<Written[]> {
  const written: Written[] = [];
  const perTransaction = options.perTransaction ?? 1;
  for (let done = 0; done < count; done += perTransaction) {
    const rows = await (options.db ?? orm).em.fork().transactional(async (em) => {
      await em.execute("select pg_advisory_xact_lock(hashtext('formsvc:submissions:outbox'))");
      const batch = [];
      for (let i = done; i < Math.min(done + perTransaction, count); i++) {
        const formId = `form-${(i % 3) + 1}`;
        const event = create(ResponseCompletedSchema, {
          eventId: newId(),
          responseId: newId(),
          formId,
          workspaceId: "ws-1",
          formVersion: 1,
          submittedAt: timestampNow(),
          formName: "Relay test",
          fields: [{ questionId: "q1", type: "SHORT_TEXT", label: "Your secret", value: create(ValueSchema, { kind: { case: "stringValue", value: secretAnswer } }) }],
        });
        batch.push(
          em.create(OutboxEntity, {
            eventId: event.eventId,
            formId,
            payload: toBinary(ResponseCompletedSchema, event),
            requestId: i % 4 === 3 ? null : `req-${i}`,
            createdAt: new Date(),
          }),
        );
      }
      return batch;
    });
    for (const row of rows) written.push({ id: row.id, eventId: row.eventId, formId: row.formId, requestId: row.requestId ?? null, payload: row.payload });
    options.notify?.notify();
  }
  return written;
}

async function publishedAtOf(ids: string[]): Promise<(Date | null)[]> {
  const rows = await orm.em.fork().find(OutboxEntity, { id: { $in: ids } }, { orderBy: { id: "asc" } });
  return rows.map((row) => row.publishedAt ?? null);
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<number> {
  const began = performance.now();
  while (!(await check())) {
    if (performance.now() - began > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await sleep(10);
  }
  return performance.now() - began;
}

// --- Reading a topic back. ---

type Received = Message<string, Buffer, string, string>;

/** Every message of `topic` from the beginning (a new consumer group), once `expected` event ids were all seen and a moment more. */
async function readTopic(topic: string, expected: Set<string>, timeoutMs = 60_000): Promise<Received[]> {
  const consumer = new Consumer<string, Buffer, string, string>({
    clientId: "relay-test",
    groupId: `relay-test-${randomUUID()}`,
    bootstrapBrokers: [broker.brokers],
    deserializers: { key: stringDeserializer, headerKey: stringDeserializer, headerValue: stringDeserializer },
  });
  const messages: Received[] = [];
  const seen = new Set<string>();
  let allSeen: () => void = () => {};
  const done = new Promise<void>((resolve) => (allSeen = resolve));
  const giveUp = new AbortController();
  try {
    const stream = await consumer.consume({ topics: [topic], mode: MessagesStreamModes.EARLIEST, autocommit: false });
    stream.on("data", (message) => {
      messages.push(message);
      seen.add(eventIdOf(message));
      if ([...expected].every((id) => seen.has(id))) allSeen();
    });
    await Promise.race([done, sleep(timeoutMs, undefined, { signal: giveUp.signal }).catch(() => undefined)]);
    await sleep(500); // anything published twice would show up now
  } finally {
    giveUp.abort();
    await consumer.close(true);
  }
  return messages;
}

/** Messages in `topic` by the brokers' offsets (every partition's high watermark less its start). */
async function messagesInTopic(topic: string): Promise<number> {
  const { partitionsCount } = (await admin.metadata({ topics: [topic], forceUpdate: true })).topics.get(topic)!;
  const offsets = async (timestamp: bigint) => {
    const partitions = Array.from({ length: partitionsCount }, (_, partitionIndex) => ({ partitionIndex, timestamp }));
    const [listed] = await admin.listOffsets({ topics: [{ name: topic, partitions }] });
    return listed.partitions.reduce((sum, p) => sum + Number(p.offset), 0);
  };
  return (await offsets(ListOffsetTimestamps.LATEST)) - (await offsets(ListOffsetTimestamps.EARLIEST));
}

function eventIdOf(message: Received): string {
  return message.headers.get("event-id") ?? "";
}

const relays: KafkaRelay[] = [];
function relay(options: Partial<KafkaRelayOptions> = {}): KafkaRelay {
  const started = startKafkaRelay({ orm, brokers: [broker.brokers], logger: captureLogger(), ...options });
  relays.push(started);
  return started;
}

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "formsvc-relay-kafka-"));
  const [db, kafkaBroker] = await Promise.all([createTestDatabase("submissions_relay_test"), startKafka({ dataDir })]);
  database = db;
  broker = kafkaBroker;
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "submissions", entities, migrations });
  admin = new Admin({ clientId: "relay-test", bootstrapBrokers: [broker.brokers] });
});

afterEach(async () => {
  await Promise.all(relays.splice(0).map((r) => r.stop()));
  // Each test starts with an empty outbox: no relay of a later test publishes an earlier test's rows.
  await orm.em.fork().nativeDelete(OutboxEntity, {});
});

after(async () => {
  await admin?.close();
  await orm?.close(true);
  await database?.drop();
  await broker?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  const leaks = logged.filter((l) => l.line.includes(secretAnswer));
  assert.deepEqual(leaks, [], "no log line carries a payload");
});

describe("Kafka outbox relay", () => {
  it("creates formsvc.responses (3 partitions) and publishes each row once: key = form id, value = the stored bytes, x-request-id and event-id headers", async () => {
    assert.ok(!(await admin.listTopics()).includes(responsesTopic));
    const rows = await writeRows(8, { perTransaction: 3 });
    const r = relay();
    await until("the backlog is empty", async () => (await outboxBacklog(orm, "kafka")) === 0);

    const metadata = (await admin.metadata({ topics: [responsesTopic] })).topics.get(responsesTopic)!;
    assert.equal(metadata.partitions.length, 3);
    assert.equal(metadata.partitions[0].replicas.length, 1);

    const messages = await readTopic(responsesTopic, new Set(rows.map((row) => row.eventId)));
    assert.equal(messages.length, rows.length, "each row once");
    const byEvent = new Map(messages.map((m) => [eventIdOf(m), m]));
    const partitionOfForm = new Map<string, number>();
    for (const row of rows) {
      const message = byEvent.get(row.eventId);
      assert.ok(message, `event ${row.eventId} published`);
      assert.equal(message.key, row.formId);
      assert.deepEqual(new Uint8Array(message.value), new Uint8Array(row.payload));
      const event = fromBinary(ResponseCompletedSchema, message.value);
      assert.equal(event.eventId, row.eventId);
      assert.equal(event.formId, row.formId);
      assert.equal(message.headers.get("x-request-id"), row.requestId ?? undefined);
      assert.deepEqual([...message.headers.keys()].sort(), row.requestId ? ["event-id", "x-request-id"] : ["event-id"]);
      // One form's events on one partition, in the order of the outbox.
      partitionOfForm.set(row.formId, partitionOfForm.get(row.formId) ?? message.partition);
      assert.equal(message.partition, partitionOfForm.get(row.formId));
    }
    for (const formId of partitionOfForm.keys()) {
      const order = messages.filter((m) => m.key === formId).map(eventIdOf);
      assert.deepEqual(order, rows.filter((row) => row.formId === formId).map((row) => row.eventId));
    }
    assert.ok((await publishedAtOf(rows.map((row) => row.id))).every((at) => at instanceof Date));
    assert.equal(r.published, rows.length);
    assert.equal(await messagesInTopic(responsesTopic), rows.length);
    assert.ok(logged.some((l) => l.level === "info" && l.msg === "outbox relay started"));
    assert.ok(logged.some((l) => l.level === "info" && l.msg === "Kafka topic created"));

    // Restarted (as a new process would be): nothing is published again, and the topic stays as it is.
    await r.stop();
    relay();
    await sleep(1_500);
    assert.equal(await messagesInTopic(responsesTopic), rows.length);
  });

  it("wakes at once on a completion of this process, and finds other replicas' rows by polling", async () => {
    const completions = createCompletionNotifier();
    const topic = `relay-test-wake-${randomUUID()}`;
    relay({ topic, completions, pollMs: 60_000 });
    await until("the topic exists", async () => (await admin.listTopics()).includes(topic));
    await sleep(300); // the relay's first (empty) look is over: it now sleeps for a minute

    const [notified] = await writeRows(1, { notify: completions });
    const wokeInMs = await until("the notified row is published", async () => (await publishedAtOf([notified.id]))[0] !== null, 2_000);

    const [silent] = await writeRows(1);
    await sleep(1_000);
    assert.equal((await publishedAtOf([silent.id]))[0], null, "without a notification, the relay waits for its poll");
    // A completion publishes the rows of the other replicas found by then too.
    completions.notify();
    await until("the silent row is published", async () => (await publishedAtOf([silent.id]))[0] !== null, 2_000);

    // The default poll (500 ms) finds rows nobody told this process of.
    await Promise.all(relays.splice(0).map((r) => r.stop()));
    relay({ topic });
    await sleep(300);
    const [other] = await writeRows(1);
    const polledInMs = await until("the other replica's row is published", async () => (await publishedAtOf([other.id]))[0] !== null, 2_000);
    console.log(`# woken by a completion in ${wokeInMs.toFixed(0)} ms; a row found by polling in ${polledInMs.toFixed(0)} ms`);
  });

  it("keeps rows unpublished while the broker is down and publishes them once it is back; stop() returns while it is down", async () => {
    const completions = createCompletionNotifier();
    const topic = `relay-test-down-${randomUUID()}`;
    const first = relay({ topic, completions, maxBackoffMs: 1_000 });
    const before = await writeRows(3, { notify: completions });
    await until("the first rows are published", async () => (await outboxBacklog(orm, "kafka")) === 0);

    await broker.kill();
    const warnsBefore = logged.filter((l) => l.level === "warn").length;
    const during = await writeRows(5, { notify: completions });
    await sleep(2_000);
    assert.equal(await outboxBacklog(orm, "kafka"), 5, "nothing marked published without an acknowledgement");
    assert.ok(
      logged.slice(warnsBefore).some((l) => l.msg === "publishing outbox rows failed: they stay unpublished, trying again"),
      "the failures are logged",
    );

    // Stopping while the broker is away: prompt, nothing lost.
    const stopBegan = performance.now();
    await first.stop();
    const stopMs = performance.now() - stopBegan;
    assert.ok(stopMs < 12_000, `stop() took ${stopMs} ms`);
    assert.equal(await outboxBacklog(orm, "kafka"), 5);

    const second = relay({ topic, completions, maxBackoffMs: 1_000 });
    const more = await writeRows(2, { notify: completions });
    const restartBegan = performance.now();
    await broker.restart();
    const restartMs = performance.now() - restartBegan;
    const drainMs = await until("the backlog is published after the restart", async () => (await outboxBacklog(orm, "kafka")) === 0, 60_000);

    const all = [...before, ...during, ...more];
    const messages = await readTopic(topic, new Set(all.map((row) => row.eventId)));
    const ids = messages.map(eventIdOf);
    assert.deepEqual(new Set(ids), new Set(all.map((row) => row.eventId)), "every row published");
    assert.equal(ids.length - new Set(ids).size, 0, "no duplicates");
    assert.equal(second.published, 7);
    assert.ok(logged.some((l) => l.msg === "outbox relay recovered"));
    console.log(`# stop() with the broker down: ${stopMs.toFixed(0)} ms; broker restart ${restartMs.toFixed(0)} ms, backlog published ${drainMs.toFixed(0)} ms after it`);
  });

  it("stop() finishes the in-flight batch: every row marked published is on the topic, and only those", async () => {
    const topic = `relay-test-stop-${randomUUID()}`;
    await writeRows(1_000, { perTransaction: 100 });
    const r = relay({ topic, batchSize: 50 });
    await until("a first batch is published", async () => r.published > 0);
    await r.stop();
    const marked = 1_000 - (await outboxBacklog(orm, "kafka"));
    assert.equal(marked, r.published);
    assert.equal(await messagesInTopic(topic), marked);
  });

  it("two relays on one database publish every row once (2,000 rows, half of them written while they run)", async () => {
    const topic = `relay-test-two-${randomUUID()}`;
    const replica = await openDatabase({ databaseUrl: database.databaseUrl, schema: "submissions", entities, migrations });
    try {
      const [completionsA, completionsB] = [createCompletionNotifier(), createCompletionNotifier()];
      const early = await writeRows(1_000, { perTransaction: 100 });
      const began = performance.now();
      const a = relay({ topic, completions: completionsA });
      const b = relay({ topic, completions: completionsB, orm: replica });
      // Completions on both replicas while they relay.
      const late = (
        await Promise.all([
          writeRows(500, { perTransaction: 10, notify: completionsA }),
          writeRows(500, { perTransaction: 10, notify: completionsB, db: replica }),
        ])
      ).flat();
      await until("both relays have published everything", async () => (await outboxBacklog(orm, "kafka")) === 0, 60_000);
      const seconds = (performance.now() - began) / 1000;

      const all = [...early, ...late];
      const messages = await readTopic(topic, new Set(all.map((row) => row.eventId)));
      const ids = messages.map(eventIdOf);
      const unique = new Set(ids);
      assert.equal(unique.size, all.length, "every row published");
      assert.equal(ids.length - unique.size, 0, "no duplicates");
      assert.equal(a.published + b.published, all.length);
      console.log(
        `# two relays: ${all.length} rows in ${seconds.toFixed(2)} s (${Math.round(all.length / seconds)} rows/s), ` +
          `${unique.size} unique, ${ids.length - unique.size} duplicates, split ${a.published}/${b.published}`,
      );
    } finally {
      await Promise.all(relays.splice(0).map((r) => r.stop()));
      await replica.close(true);
    }
  });

  it("relays a backlog of 2,000 rows (one relay)", async () => {
    const topic = `relay-test-rate-${randomUUID()}`;
    const rows = await writeRows(2_000, { perTransaction: 100 });
    const began = performance.now();
    const r = relay({ topic });
    await until("a first batch is published", async () => r.published > 0, 30_000);
    const [firstBatchAt, firstBatch] = [performance.now(), r.published];
    await until("the backlog is published", async () => (await outboxBacklog(orm, "kafka")) === 0, 60_000);
    const seconds = (performance.now() - began) / 1000;
    const steady = (performance.now() - firstBatchAt) / 1000;
    assert.equal(r.published, rows.length);
    assert.equal(await messagesInTopic(topic), rows.length);
    console.log(
      `# one relay: ${rows.length} rows in ${seconds.toFixed(2)} s (${Math.round(rows.length / seconds)} rows/s with topic creation and connecting; ` +
        `${Math.round((rows.length - firstBatch) / steady)} rows/s after the first batch)`,
    );
  });
});
