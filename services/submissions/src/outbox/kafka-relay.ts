// The outbox relay (KAFKA_BROKERS set): publishes every committed outbox row to `formsvc.responses`,
// keyed by form id (one form's events stay on one partition), the stored protobuf bytes as the value,
// `x-request-id`, `event-id` and (while tracing) `traceparent` as headers. At least once: a batch is claimed (`for update skip locked`,
// so replicas never publish the same rows at the same time), sent, and marked published in the same
// transaction, only after the broker acknowledged it (acks all, idempotent producer). A crash between
// the acknowledgement and the commit publishes the batch again later; consumers dedupe by event id.
// While Kafka (or Postgres) fails, rows stay unpublished and the relay retries with a growing pause.
// Submissions never wait for it: a completion only sets a flag that wakes the relay.
import { Admin, compatibilityPartitioner, findErrorBy, ProduceAcks, Producer, stringSerializer, type BaseOptions, type MessageToProduce } from "@platformatic/kafka";
import { eventTypeHeader } from "@formsvc/platform/events.ts";
import { requestIdHeader } from "@formsvc/platform/caller.ts";
import { qualifiedTable, type MikroORM } from "@formsvc/platform/database.ts";
import { logKafkaEvents, responsesTopic } from "@formsvc/platform/kafka.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { contextOf, injectTraceContext, markFailed, SpanKind, startSpan, type Context, type Span } from "@formsvc/platform/tracing.ts";
import type { CompletionNotifier } from "./completion-notifier.ts";
import { followOutbox, outboxPauses } from "./outbox-pauses.ts";
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

/** An outbox row as the relay reads it. */
type RelayedRow = Pick<Outbox, "id" | "eventId" | "formId" | "eventType" | "payload" | "requestId" | "traceParent">;

/** A message as the relay sends it: the key and headers as strings, the value as bytes. */
type OutboxMessage = MessageToProduce<string, Buffer, string, string>;

/**
 * The Kafka message of an outbox row; never logged (the payload holds the answers). `traceHeaders`
 * (the publishing span's `traceparent`) continue the row's trace.
 */
function outboxMessage(topic: string, row: RelayedRow, traceHeaders: Record<string, string> = {}): OutboxMessage {
  const headers: Record<string, string> = { ...traceHeaders };
  if (row.requestId) headers[requestIdHeader] = row.requestId;
  headers[eventIdHeader] = row.eventId;
  // Its type, which also says the value is an envelope (a row older than it holds a bare ResponseCompleted).
  if (row.eventType) headers[eventTypeHeader] = row.eventType;
  const payload = row.payload;
  return {
    topic,
    key: row.formId,
    value: Buffer.isBuffer(payload) ? payload : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength),
    headers,
  };
}

/** The PRODUCER span of publishing one row, under the trace of the request that wrote it (none while off). */
function publishSpan(topic: string, row: RelayedRow): { span: Span; context: Context } | undefined {
  if (!row.traceParent) return undefined;
  return startSpan(`send ${topic}`, {
    kind: SpanKind.PRODUCER,
    parent: contextOf(row.traceParent),
    attributes: { "messaging.system": "kafka", "messaging.destination.name": topic, "messaging.operation.type": "send", "messaging.message.id": row.eventId },
  });
}

/**
 * Creates `topic` (3 partitions, replication 1) unless it exists, and waits until every partition has a
 * leader (the first send would fail otherwise); true when this call created it.
 */
async function ensureTopic(clientOptions: BaseOptions & { timeout: number }, topic: string): Promise<boolean> {
  const admin = new Admin(clientOptions);
  try {
    let created = false;
    if (!(await admin.listTopics()).includes(topic)) {
      try {
        await admin.createTopics({ topics: [topic], partitions: responsesTopicPartitions, replicas: responsesTopicReplication });
        created = true;
      } catch (err) {
        // Another replica created it first.
        if (!findErrorBy(err as Error, "apiId", "TOPIC_ALREADY_EXISTS")) throw err;
      }
    }
    for (let waited = 0; ; waited += 100) {
      const { partitions } = (await admin.metadata({ topics: [topic], forceUpdate: true })).topics.get(topic)!;
      if (partitions.every((p) => p.leader >= 0)) return created;
      if (waited >= clientOptions.timeout) throw new Error(`the partitions of ${topic} have no leader after ${waited} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await admin.close().catch(() => undefined);
  }
}

/**
 * Starts relaying in the background and returns at once: a broker that is down delays events, never
 * the service. Stop it before closing `orm`.
 */
export function startKafkaRelay(options: KafkaRelayOptions): KafkaRelay {
  const { orm, logger } = options;
  const outboxTable = qualifiedTable(orm, OutboxEntity);
  const topic = options.topic ?? responsesTopic;
  const batchSize = options.batchSize ?? 100;
  const pollMs = options.pollMs ?? 500;
  const minBackoff = options.minBackoffMs ?? 100;
  const maxBackoff = options.maxBackoffMs ?? 5_000;
  const stopTimeoutMs = options.stopTimeoutMs ?? 10_000;

  const clientOptions = {
    clientId: options.clientId ?? "formsvc-submissions",
    bootstrapBrokers: options.brokers,
    connectTimeout: 3_000,
    requestTimeout: 10_000,
    timeout: 10_000,
    // Fail a send within seconds while the broker is away: the relay's own backoff takes over, and the
    // rows stay unpublished meanwhile.
    retries: 3,
    retryDelay: 250,
  } satisfies BaseOptions;

  let published = 0;
  let producer: Producer<string, Buffer, string, string> | undefined;
  let topicReady = false;
  const pauses = outboxPauses(options.completions);

  function currentProducer(): Producer<string, Buffer, string, string> {
    if (producer) return producer;
    // Idempotent (acks all, one request in flight): a send retried after a lost answer is written once.
    // The Java client's partitioner (as kafkajs had): a form's events keep the partition they had.
    producer = new Producer<string, Buffer, string, string>({
      ...clientOptions,
      idempotent: true,
      acks: ProduceAcks.ALL,
      partitioner: compatibilityPartitioner,
      autocreateTopics: false,
      serializers: { key: stringSerializer, headerKey: stringSerializer, headerValue: stringSerializer },
    });
    // Every line of the client at debug: each failure reaches the relay, which logs it once per attempt.
    logKafkaEvents(producer, logger, { allDebug: true });
    return producer;
  }

  /** After a failure: a new producer (new producer id, fresh sequences) for the next attempt. */
  async function dropProducer(): Promise<void> {
    const old = producer;
    producer = undefined;
    await old?.close(true).catch(() => undefined);
  }

  /** Claims, sends and marks one batch; the number of rows published. */
  async function relayBatch(): Promise<number> {
    if (!topicReady) {
      if (await ensureTopic(clientOptions, topic)) {
        logger.info({ topic, partitions: responsesTopicPartitions, replication: responsesTopicReplication }, "Kafka topic created");
      }
      topicReady = true;
    }
    const sender = currentProducer();
    const began = performance.now();
    // Plain rows, not entities: the batch is only read, sent and marked, so nothing needs tracking.
    const result = await orm.em.fork().transactional(async (em) => {
      const connection = em.getConnection();
      const tx = em.getTransactionContext();
      const rows = await connection.execute<RelayedRow[]>(
        `select "id"::text as "id", "event_id" as "eventId", "form_id" as "formId", "event_type" as "eventType", "payload", "request_id" as "requestId",
                "trace_parent" as "traceParent"
           from ${outboxTable} where "published_at" is null order by "id" limit ? for update skip locked`,
        [batchSize],
        "all",
        tx,
      );
      if (rows.length === 0) return { count: 0 };
      const spans = rows.map((row) => publishSpan(topic, row));
      try {
        await sender.send({ messages: rows.map((row, i) => outboxMessage(topic, row, spans[i] ? injectTraceContext({}, spans[i].context) : {})) });
      } catch (err) {
        for (const s of spans) if (s) markFailed(s.span, err instanceof Error ? err.message : String(err));
        throw err;
      } finally {
        for (const s of spans) s?.span.end();
      }
      const ids = rows.map((row) => row.id);
      // An array literal: MikroORM would spread a JS array into a list of values.
      await connection.execute(`update ${outboxTable} set "published_at" = now() where "id" = any(?::bigint[])`, [`{${ids.join(",")}}`], "run", tx);
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

  let failingSince = 0;
  const loop = followOutbox(
    pauses,
    { minMs: minBackoff, maxMs: maxBackoff },
    async (failures) => {
      const count = await relayBatch();
      if (failures > 0) logger.info({ failures, downForMs: Math.round(performance.now() - failingSince) }, "outbox relay recovered");
      if (performance.now() - summaryAt >= summaryEveryMs) {
        if (published > summaryFrom) logger.info({ published: published - summaryFrom, total: published }, "outbox rows published to Kafka");
        summaryAt = performance.now();
        summaryFrom = published;
      }
      await pauses.afterPass(count < batchSize ? "caught up" : "more", pollMs);
      await pauses.linger(count, batchSize);
    },
    async (err, { failures, retryInMs }) => {
      await dropProducer();
      if (failures === 1) failingSince = performance.now();
      logger.warn({ err, failures, retryInMs }, "publishing outbox rows failed: they stay unpublished, trying again");
    },
  );

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
