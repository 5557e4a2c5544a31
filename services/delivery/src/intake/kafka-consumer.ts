// Kafka (KAFKA_BROKERS set): consumer group `formsvc-delivery` on `formsvc.responses` (keyed by form id,
// so one form's events stay in order on one partition). Offsets are committed by hand, once per batch,
// only after the deliveries of every event before them are stored: a delivery process killed at any
// point loses nothing, and sees again at most the events whose commit it did not reach (which then
// create nothing twice).
import type { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { Consumer, MessagesStreamFallbackModes, MessagesStreamModes, stringDeserializer, type Message, type MessagesStream } from "@platformatic/kafka";
import { kafkaErrorMessage, logKafkaEvents, responsesTopic } from "@formsvc/platform/kafka.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { requestIdHeader } from "@formsvc/platform/caller.ts";
import { extractTraceContext } from "@formsvc/platform/tracing.ts";
import { decodeEvent, eventFacts, eventTypeHeader } from "@formsvc/platform/events.ts";
import type { AcceptEvents, IncomingEvent } from "./accept-event.ts";
import { withConsumerSpans, type TracedEvent } from "./consumer-spans.ts";

export { responsesTopic };
export const consumerGroupId = "formsvc-delivery";

/** A message as the intake reads it: the key and headers as strings, the value as bytes. */
type StreamMessage = Message<string, Buffer, string, string>;
/** What the batch handler reads of a message. */
export type EventMessage = Pick<StreamMessage, "offset" | "value" | "headers" | "commit">;

/** One partition's messages of one fetch, in offset order. */
export interface PartitionBatch {
  topic: string;
  partition: number;
  messages: EventMessage[];
  /** True once the partition belongs to another consumer of the group (after a rebalance). */
  isStale: () => boolean;
}

export interface MessageHandlerOptions {
  acceptEvents: AcceptEvents;
  logger: Logger;
  /** False once the consumer is stopping: an event that keeps failing is then left uncommitted. */
  isRunning: () => boolean;
  /** Ends the pause between accept retries early (the consumer is stopping). */
  signal?: AbortSignal;
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

/**
 * The consumer's batch handler: the batch's events decoded and accepted together (again and again, with
 * a growing pause, while webhooks or the database do not answer: a partition's order is kept), then one
 * commit of the next offset (its last message's commit): a broker round trip and one insert per batch,
 * not per event. A message that is not an event (an Event, or a bare ResponseCompleted from before the
 * envelope, told apart by the `event-type` header) can never be delivered: it is logged and passed over.
 * A consumer stopping while the batch still fails leaves it uncommitted for whoever consumes the
 * partition next (an event seen twice creates nothing twice). Messages below an offset this handler has
 * already committed (a rebalance has the partition fetched again from its committed offset, while the
 * messages fetched before it are still on their way) are passed over: they are stored already.
 */
export function kafkaBatchHandler(options: MessageHandlerOptions): (batch: PartitionBatch) => Promise<void> {
  const { logger } = options;
  const minBackoff = options.minBackoffMs ?? 200;
  const maxBackoff = options.maxBackoffMs ?? 30_000;
  /** Per partition, the offset after the last message handled. */
  const handledUpTo = new Map<string, bigint>();

  return async ({ topic, partition, messages, isStale }) => {
    const partitionKey = `${topic}:${partition}`;
    const fresh: EventMessage[] = [];
    let next = handledUpTo.get(partitionKey) ?? 0n;
    for (const message of messages) {
      if (message.offset < next) continue;
      fresh.push(message);
      next = message.offset + 1n;
    }
    const last = fresh.at(-1);
    if (!last || !options.isRunning() || isStale()) return;
    const incoming: (IncomingEvent & TracedEvent)[] = [];
    for (const message of fresh) {
      const header = (name: string) => message.headers.get(name) || undefined;
      try {
        if (!message.value || message.value.length === 0) throw new Error("empty message");
        const event = decodeEvent(message.value, header(eventTypeHeader));
        incoming.push({ event, eventId: eventFacts(event).eventId, requestId: header(requestIdHeader), parent: extractTraceContext(header) });
      } catch (err) {
        logger.error({ err, topic, partition, offset: message.offset.toString() }, "undecodable event passed over");
      }
    }
    if (incoming.length > 0) {
      await withConsumerSpans(`process ${topic}`, "kafka", incoming, async (traces) => {
        const events = incoming.map(({ event, requestId }, i) => ({ event, requestId, trace: traces[i] }));
        for (let backoff = minBackoff; ; backoff = Math.min(backoff * 2, maxBackoff)) {
          try {
            await options.acceptEvents(events);
            return;
          } catch (err) {
            if (!options.isRunning()) throw err;
            logger.warn(
              { error: err instanceof Error ? err.message : String(err), events: events.length, partition, firstOffset: fresh[0].offset.toString(), retryInMs: backoff },
              "accepting events failed: trying again",
            );
            await sleep(backoff, undefined, { signal: options.signal }).catch(() => undefined);
          }
        }
      });
    }
    handledUpTo.set(partitionKey, next);
    // A partition taken over meanwhile is committed by its new consumer (from its committed offset).
    if (!isStale()) await last.commit();
  };
}

/** A batch smaller than this waits `lingerMs` for more before it is handled. */
const fullBatch = 100;
/**
 * How long a small batch waits for more (as a producer's linger.ms): under load, fetches bring a few events each,
 * and each batch costs a statement, a webhooks lookup per form and an offset commit. 5 ms against a lag goal of 250.
 */
const lingerMs = 5;

/**
 * The messages `stream` holds, as soon as it holds any: everything one fetch brought, what came meanwhile, and
 * what came during a short linger when that was little. None once the stream has ended; rejects with the error
 * that ended it.
 */
async function nextMessages(stream: Readable, arrived: () => Promise<void>): Promise<StreamMessage[]> {
  for (;;) {
    const messages: StreamMessage[] = [];
    const readAll = () => {
      for (let message = stream.read(); message !== null; message = stream.read()) messages.push(message);
    };
    readAll();
    if (messages.length > 0 && messages.length < fullBatch) {
      await sleep(lingerMs);
      readAll();
    }
    if (messages.length > 0) return messages;
    if (stream.errored) throw stream.errored;
    if (stream.readableEnded || stream.destroyed) return [];
    await arrived();
  }
}

export interface KafkaIntakeOptions {
  brokers: string[];
  acceptEvents: AcceptEvents;
  logger: Logger;
  topic?: string;
  groupId?: string;
  /** Pauses of the accept retries. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

export interface KafkaIntake {
  stop(): Promise<void>;
}

/**
 * Joins the group and consumes until stopped. A new group starts at the earliest offset, so events
 * published before delivery first ran are delivered too. Each fetch's messages are handled as one
 * batch per partition, the partitions at once; the next fetch's after them. Joining, and consuming
 * again after a failure (the broker away), are retried until they succeed.
 */
export function startKafkaIntake(options: KafkaIntakeOptions): KafkaIntake {
  const { logger } = options;
  const topic = options.topic ?? responsesTopic;
  const groupId = options.groupId ?? consumerGroupId;
  // A replica killed without leaving the group holds its partitions until its session times out:
  // 10 s (not the client's 60 s) bounds how long its share of events waits. Heartbeats go on their own
  // timer, however long a batch takes.
  const consumer = new Consumer<string, Buffer, string, string>({
    clientId: "formsvc-delivery",
    bootstrapBrokers: options.brokers,
    groupId,
    sessionTimeout: 10_000,
    heartbeatInterval: 1_000,
    rebalanceTimeout: 20_000,
    autocommit: false,
    deserializers: { key: stringDeserializer, headerKey: stringDeserializer, headerValue: stringDeserializer },
  });
  logKafkaEvents(consumer, logger);
  const stopping = new AbortController();
  let stream: MessagesStream<string, Buffer, string, string> | undefined;

  const handleBatch = kafkaBatchHandler({
    acceptEvents: options.acceptEvents,
    logger,
    isRunning: () => !stopping.signal.aborted,
    signal: stopping.signal,
    minBackoffMs: options.minBackoffMs,
    maxBackoffMs: options.maxBackoffMs,
  });
  const assigned = (partition: number) => consumer.assignments?.some((a) => a.topic === topic && a.partitions.includes(partition)) ?? false;

  /** Handles the stream's messages until it ends (stop) or fails. */
  async function consumeStream(current: MessagesStream<string, Buffer, string, string>): Promise<void> {
    let wake: (() => void) | undefined;
    const arrived = () => new Promise<void>((resolve) => (wake = resolve));
    const notify = () => wake?.();
    current.on("readable", notify).on("end", notify).on("close", notify).on("error", notify);
    for (;;) {
      const messages = await nextMessages(current, arrived);
      if (messages.length === 0) return;
      const byPartition = new Map<number, StreamMessage[]>();
      for (const message of messages) byPartition.set(message.partition, [...(byPartition.get(message.partition) ?? []), message]);
      // Every batch finishes (or gives up) before the stream is given up on.
      const results = await Promise.allSettled(
        [...byPartition].map(([partition, batch]) => handleBatch({ topic, partition, messages: batch, isStale: () => !assigned(partition) })),
      );
      for (const result of results) if (result.status === "rejected") throw result.reason;
    }
  }

  const consuming = (async () => {
    for (let failures = 0; !stopping.signal.aborted; ) {
      try {
        stream = await consumer.consume({ topics: [topic], mode: MessagesStreamModes.COMMITTED, fallbackMode: MessagesStreamFallbackModes.EARLIEST });
        if (stopping.signal.aborted) return;
        logger.info({ topic, groupId }, "consuming response events from Kafka");
        failures = 0;
        await consumeStream(stream);
        if (!stopping.signal.aborted) throw new Error("the stream ended");
      } catch (err) {
        if (stopping.signal.aborted) return;
        const retryInMs = Math.min(500 * 2 ** failures++, 30_000);
        logger.warn({ error: kafkaErrorMessage(err), retryInMs }, "consuming from Kafka failed: joining the group again");
        await stream?.close().catch(() => undefined);
        await sleep(retryInMs, undefined, { signal: stopping.signal }).catch(() => undefined);
      }
    }
  })();

  return {
    async stop() {
      stopping.abort();
      await stream?.close().catch(() => undefined);
      await consuming;
      await consumer.close(true).catch((err: unknown) => logger.warn({ error: kafkaErrorMessage(err) }, "leaving the Kafka consumer group failed"));
    },
  };
}
