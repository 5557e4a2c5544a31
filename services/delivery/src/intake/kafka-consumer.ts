// Kafka (KAFKA_BROKERS set): consumer group `formsvc-delivery` on `formsvc.responses` (keyed by form id,
// so one form's events stay in order on one partition). Offsets are committed by hand, once per batch,
// only after the deliveries of every event before them are stored: a delivery process killed at any
// point loses nothing, and sees again at most the events whose commit it did not reach (which then
// create nothing twice).
import { Kafka, logLevel, type Consumer, type EachBatchHandler, type TopicPartitionOffsetAndMetadata } from "kafkajs";
import { kafkaLogCreator, responsesTopic } from "@formsvc/platform/kafka.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { requestIdHeader } from "@formsvc/platform/caller.ts";
import { extractTraceContext } from "@formsvc/platform/tracing.ts";
import { decodeEvent, eventFacts, eventTypeHeader } from "@formsvc/platform/events.ts";
import type { AcceptEvents, IncomingEvent } from "./accept-event.ts";
import { withConsumerSpans, type TracedEvent } from "./consumer-spans.ts";

export { responsesTopic };
export const consumerGroupId = "formsvc-delivery";

export interface MessageHandlerOptions {
  acceptEvents: AcceptEvents;
  logger: Logger;
  /** Commits offsets (the consumer's commitOffsets). */
  commit: (offsets: TopicPartitionOffsetAndMetadata[]) => Promise<void>;
  /** False once the consumer is stopping: an event that keeps failing is then left uncommitted. */
  isRunning: () => boolean;
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

/**
 * The consumer's eachBatch: the batch's events decoded and accepted together (again and again, with a
 * growing pause and heartbeats, while webhooks or the database do not answer: a partition's order is
 * kept), then one commit of the next offset: a broker round trip and one insert per batch, not per
 * event. A message that is not an event (an Event, or a bare ResponseCompleted from before the envelope,
 * told apart by the `event-type` header) can never be delivered: it is logged and passed over.
 * A consumer stopping while the batch still fails leaves it uncommitted for whoever consumes the
 * partition next (an event seen twice creates nothing twice).
 */
export function kafkaBatchHandler(options: MessageHandlerOptions): EachBatchHandler {
  const { logger } = options;
  const minBackoff = options.minBackoffMs ?? 200;
  const maxBackoff = options.maxBackoffMs ?? 30_000;

  return async ({ batch, heartbeat, resolveOffset, isStale }) => {
    const { topic, partition } = batch;
    const last = batch.messages.at(-1);
    if (!last || !options.isRunning() || isStale()) return;
    const incoming: (IncomingEvent & TracedEvent)[] = [];
    for (const message of batch.messages) {
      const header = (name: string) => {
        const raw = message.headers?.[name];
        return (Array.isArray(raw) ? raw[0] : raw)?.toString() || undefined;
      };
      try {
        if (!message.value || message.value.length === 0) throw new Error("empty message");
        const event = decodeEvent(message.value, header(eventTypeHeader));
        incoming.push({ event, eventId: eventFacts(event).eventId, requestId: header(requestIdHeader), parent: extractTraceContext(header) });
      } catch (err) {
        logger.error({ err, topic, partition, offset: message.offset }, "undecodable event passed over");
      }
    }
    if (incoming.length > 0) {
      await withConsumerSpans(`process ${topic}`, "kafka", incoming, async (traces) => {
        const events = incoming.map(({ event, requestId }, i) => ({ event, requestId, trace: traces[i] }));
        for (let backoff = minBackoff; ; backoff = Math.min(backoff * 2, maxBackoff)) {
          try {
            await options.acceptEvents(events, { between: heartbeat });
            return;
          } catch (err) {
            if (!options.isRunning()) throw err;
            logger.warn(
              { error: err instanceof Error ? err.message : String(err), events: events.length, partition, firstOffset: batch.messages[0].offset, retryInMs: backoff },
              "accepting events failed: trying again",
            );
            await new Promise((resolve) => setTimeout(resolve, backoff));
            await heartbeat();
          }
        }
      });
    }
    resolveOffset(last.offset);
    await options.commit([{ topic, partition, offset: (BigInt(last.offset) + 1n).toString() }]);
  };
}

export interface KafkaIntakeOptions {
  brokers: string[];
  acceptEvents: AcceptEvents;
  logger: Logger;
  topic?: string;
  groupId?: string;
  /** Partitions handled at once (each in order). */
  partitionsConsumedConcurrently?: number;
  /** Pauses of the accept retries. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

export interface KafkaIntake {
  consumer: Consumer;
  stop(): Promise<void>;
}

/**
 * Joins the group and consumes until stopped. A new group starts at the earliest offset, so events
 * published before delivery first ran are delivered too. Connecting is retried until it succeeds.
 */
export function startKafkaIntake(options: KafkaIntakeOptions): KafkaIntake {
  const { logger } = options;
  const topic = options.topic ?? responsesTopic;
  const kafka = new Kafka({
    clientId: "formsvc-delivery",
    brokers: options.brokers,
    logLevel: logLevel.WARN,
    logCreator: kafkaLogCreator(logger),
  });
  // A replica killed without leaving the group holds its partitions until its session times out:
  // 10 s (not kafkajs's 30 s) bounds how long its share of events waits.
  const consumer = kafka.consumer({
    groupId: options.groupId ?? consumerGroupId,
    sessionTimeout: 10_000,
    heartbeatInterval: 1_000,
    rebalanceTimeout: 20_000,
  });
  let running = true;
  let pause: { timer: NodeJS.Timeout; resolve: () => void } | undefined;

  const eachBatch = kafkaBatchHandler({
    acceptEvents: options.acceptEvents,
    logger,
    commit: (offsets) => consumer.commitOffsets(offsets),
    isRunning: () => running,
    minBackoffMs: options.minBackoffMs,
    maxBackoffMs: options.maxBackoffMs,
  });

  const started = (async () => {
    for (let backoff = 500; running; backoff = Math.min(backoff * 2, 30_000)) {
      try {
        await consumer.connect();
        await consumer.subscribe({ topics: [topic], fromBeginning: true });
        await consumer.run({
          autoCommit: false,
          eachBatchAutoResolve: false,
          partitionsConsumedConcurrently: options.partitionsConsumedConcurrently ?? 3,
          eachBatch,
        });
        logger.info({ topic, groupId: options.groupId ?? consumerGroupId }, "consuming response events from Kafka");
        return;
      } catch (err) {
        if (!running) return;
        logger.warn({ error: err instanceof Error ? err.message : String(err), retryInMs: backoff }, "joining the Kafka consumer group failed: trying again");
        await consumer.disconnect().catch(() => undefined);
        await new Promise<void>((resolve) => {
          pause = { timer: setTimeout(resolve, backoff), resolve };
        });
      }
    }
  })();

  return {
    consumer,
    async stop() {
      running = false;
      if (pause) {
        clearTimeout(pause.timer);
        pause.resolve();
      }
      await started;
      await consumer.disconnect();
    },
  };
}
