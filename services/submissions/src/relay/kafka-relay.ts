// The outbox relay (KAFKA_BROKERS set): publishes every committed outbox row to `formsvc.responses`,
// keyed by form id (one form's events stay on one partition), the stored protobuf bytes as the value,
// `x-request-id`, `event-id` and (while tracing) `traceparent` as headers. At least once: a batch is claimed (`for update skip locked`,
// so replicas never publish the same rows at the same time), sent, and marked published in the same
// transaction, only after the broker acknowledged it (acks all, idempotent producer). A crash between
// the acknowledgement and the commit publishes the batch again later; consumers dedupe by event id.
// While Kafka (or Postgres) fails, rows stay unpublished and the relay retries with a growing pause.
// Submissions never wait for it: a completion only sets a flag that wakes the relay.
import { LockMode } from "@mikro-orm/core";
import { Kafka, logLevel, Partitioners, type IHeaders, type Message, type Producer } from "kafkajs";
import { eventTypeHeader } from "@formsvc/platform/events.ts";
import { requestIdHeader } from "@formsvc/platform/caller.ts";
import type { MikroORM } from "@formsvc/platform/database.ts";
import { kafkaLogCreator, responsesTopic } from "@formsvc/platform/kafka.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { contextOf, injectTraceContext, markFailed, SpanKind, startSpan, type Context, type Span } from "@formsvc/platform/tracing.ts";
import type { CompletionNotifier } from "../completion-notifier.ts";
import { outboxPauses } from "../outbox-pauses.ts";
import { OutboxEntity, type Outbox } from "../entities/index.ts";

export { responsesTopic };
/** How `responsesTopic` is created when missing. */
const responsesTopicPartitions = 3;
const responsesTopicReplication = 1;
/** The header with the event's id (also inside the payload), for consumers that dedupe before decoding. */
const eventIdHeader = "event-id";

export interface KafkaRelayOptions {
  orm: MikroORM;
  brokers: string[];
  logger: Logger;
  /** Completions of this process: each one wakes the relay at once. Without it, only polling finds rows. */
  completions?: CompletionNotifier;
  topic?: string;
  /** Rows claimed and sent per transaction. 100 when absent. */
  batchSize?: number;
  /** How often an idle relay looks for rows of other replicas (ms). 500 when absent. */
  pollMs?: number;
  /** The pause after a failure, doubling per failure in a row up to the maximum (ms). 100 and 5,000. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /**
   * How long stop() lets an in-flight batch finish before disconnecting under it (its rows then stay
   * unpublished). 10,000 ms when absent.
   */
  stopTimeoutMs?: number;
  clientId?: string;
}

export interface KafkaRelay {
  /** Rows this relay has published (acknowledged and marked) so far. */
  readonly published: number;
  /** Stops looking for rows, lets the in-flight batch finish, disconnects. */
  stop(): Promise<void>;
}

/** Rows not yet published: the relay's backlog, for metrics. It keeps growing on the embedded bus. */
export async function outboxBacklog(orm: MikroORM): Promise<number> {
  return orm.em.fork().count(OutboxEntity, { publishedAt: null });
}

/**
 * The Kafka message of an outbox row; never logged (the payload holds the answers). `traceHeaders`
 * (the publishing span's `traceparent`) continue the row's trace.
 */
function outboxMessage(row: Pick<Outbox, "eventId" | "formId" | "eventType" | "payload" | "requestId">, traceHeaders: Record<string, string> = {}): Message {
  const headers: IHeaders = { ...traceHeaders };
  if (row.requestId) headers[requestIdHeader] = row.requestId;
  headers[eventIdHeader] = row.eventId;
  // Its type, which also says the value is an envelope (a row older than it holds a bare ResponseCompleted).
  if (row.eventType) headers[eventTypeHeader] = row.eventType;
  const payload = row.payload;
  return {
    key: row.formId,
    value: Buffer.isBuffer(payload) ? payload : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength),
    headers,
  };
}

/** The PRODUCER span of publishing one row, under the trace of the request that wrote it (none while off). */
function publishSpan(topic: string, row: Outbox): { span: Span; context: Context } | undefined {
  if (!row.traceParent) return undefined;
  return startSpan(`send ${topic}`, {
    kind: SpanKind.PRODUCER,
    parent: contextOf(row.traceParent),
    attributes: { "messaging.system": "kafka", "messaging.destination.name": topic, "messaging.operation.type": "send", "messaging.message.id": row.eventId },
  });
}

/** Creates `topic` (3 partitions, replication 1) unless it exists; true when this call created it. */
async function ensureTopic(kafka: Kafka, topic: string): Promise<boolean> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await admin.createTopics({
      topics: [{ topic, numPartitions: responsesTopicPartitions, replicationFactor: responsesTopicReplication }],
      waitForLeaders: true,
    });
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/**
 * Starts relaying in the background and returns at once: a broker that is down delays events, never
 * the service. Stop it before closing `orm`.
 */
export function startKafkaRelay(options: KafkaRelayOptions): KafkaRelay {
  const { orm, logger } = options;
  const topic = options.topic ?? responsesTopic;
  const batchSize = options.batchSize ?? 100;
  const pollMs = options.pollMs ?? 500;
  const minBackoff = options.minBackoffMs ?? 100;
  const maxBackoff = options.maxBackoffMs ?? 5_000;
  const stopTimeoutMs = options.stopTimeoutMs ?? 10_000;

  const kafka = new Kafka({
    clientId: options.clientId ?? "formsvc-submissions",
    brokers: options.brokers,
    connectionTimeout: 3_000,
    requestTimeout: 10_000,
    // Fail a send within seconds while the broker is away: the relay's own backoff takes over, and the
    // rows stay unpublished meanwhile (kafkajs's default for an idempotent producer retries forever).
    retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1_000 },
    logLevel: logLevel.WARN,
    // Every kafkajs line at debug: each failure reaches the relay, which logs it once per attempt.
    logCreator: kafkaLogCreator(logger, { allDebug: true }),
  });

  let published = 0;
  let producer: Producer | undefined;
  let topicReady = false;
  const pauses = outboxPauses(options.completions);

  async function connectedProducer(): Promise<Producer> {
    if (!topicReady) {
      if (await ensureTopic(kafka, topic)) {
        logger.info({ topic, partitions: responsesTopicPartitions, replication: responsesTopicReplication }, "Kafka topic created");
      }
      topicReady = true;
    }
    if (producer) return producer;
    const fresh = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1_000 },
      createPartitioner: Partitioners.DefaultPartitioner,
      allowAutoTopicCreation: false,
    });
    try {
      await fresh.connect();
    } catch (err) {
      await fresh.disconnect().catch(() => undefined);
      throw err;
    }
    producer = fresh;
    return fresh;
  }

  /** After a failure: a new producer (new producer id, fresh sequences) for the next attempt. */
  async function dropProducer(): Promise<void> {
    const old = producer;
    producer = undefined;
    await old?.disconnect().catch(() => undefined);
  }

  /** Claims, sends and marks one batch; the number of rows published. */
  async function relayBatch(): Promise<number> {
    const sender = await connectedProducer();
    const began = performance.now();
    const result = await orm.em.fork().transactional(async (em) => {
      const rows = await em.find(
        OutboxEntity,
        { publishedAt: null },
        { orderBy: { id: "asc" }, limit: batchSize, lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE },
      );
      if (rows.length === 0) return { count: 0 };
      const spans = rows.map((row) => publishSpan(topic, row));
      try {
        await sender.send({ topic, acks: -1, messages: rows.map((row, i) => outboxMessage(row, spans[i] ? injectTraceContext({}, spans[i].context) : {})) });
      } catch (err) {
        for (const s of spans) if (s) markFailed(s.span, err instanceof Error ? err.message : String(err));
        throw err;
      } finally {
        for (const s of spans) s?.span.end();
      }
      const ids = rows.map((row) => row.id);
      await em.nativeUpdate(OutboxEntity, { id: { $in: ids } }, { publishedAt: new Date() });
      return { count: rows.length, firstId: ids[0], lastId: ids.at(-1) };
    });
    if (result.count > 0) {
      published += result.count;
      logger.debug({ ...result, ms: Math.round(performance.now() - began) }, "outbox rows published");
    }
    return result.count;
  }

  const summaryEveryMs = 60_000;
  let summaryAt = performance.now();
  let summaryFrom = 0;

  const loop = (async () => {
    let failures = 0;
    let failingSince = 0;
    while (pauses.running) {
      try {
        pauses.beginPass();
        const count = await relayBatch();
        if (failures > 0) {
          logger.info({ failures, downForMs: Math.round(performance.now() - failingSince) }, "outbox relay recovered");
          failures = 0;
        }
        if (performance.now() - summaryAt >= summaryEveryMs) {
          if (published > summaryFrom) logger.info({ published: published - summaryFrom, total: published }, "outbox rows published to Kafka");
          summaryAt = performance.now();
          summaryFrom = published;
        }
        if (count < batchSize) await pauses.sleep(pollMs, true);
      } catch (err) {
        await dropProducer();
        if (!pauses.running) break;
        if (failures === 0) failingSince = performance.now();
        failures++;
        const retryInMs = Math.min(minBackoff * 2 ** Math.min(failures - 1, 30), maxBackoff);
        logger.warn({ err, failures, retryInMs }, "publishing outbox rows failed: they stay unpublished, trying again");
        await pauses.sleep(retryInMs, false);
      }
    }
  })();

  logger.info({ topic, brokers: options.brokers, batchSize, pollMs }, "outbox relay started");

  let stopped: Promise<void> | undefined;
  return {
    get published() {
      return published;
    },
    stop() {
      stopped ??= (async () => {
        pauses.stop();
        let timer: NodeJS.Timeout | undefined;
        const timedOut = new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(true), stopTimeoutMs);
        });
        if (await Promise.race([loop.then(() => false), timedOut])) {
          logger.warn({ stopTimeoutMs }, "the in-flight outbox batch did not finish in time: disconnecting under it");
          await dropProducer();
          await loop;
        }
        clearTimeout(timer);
        await dropProducer();
        logger.info({ published }, "outbox relay stopped");
      })();
      return stopped;
    },
  };
}
