// What the services that meet on Kafka share: the topic's name and how the Kafka client's
// (@platformatic/kafka) own events and errors reach pino.
import type { EventEmitter } from "node:events";
import type { Logger } from "./logger.ts";

/** Completed responses, keyed by form id: submissions' relay publishes, delivery consumes. */
export const responsesTopic = "formsvc.responses";

/** The services that use Kafka when KAFKA_BROKERS is set (submissions' relay, delivery's consumer). */
export const kafkaServices: readonly string[] = ["submissions", "delivery"];

/**
 * An error of the Kafka client on one line: its message, then those of the errors it wraps (a
 * MultipleErrors' `errors`, a `cause`), e.g. "Producing messages failed. (Connection to 127.0.0.1:9092
 * failed.)". Its own properties (requests, responses) are left out: they can hold messages.
 */
export function kafkaErrorMessage(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const wrapped = [...(err instanceof AggregateError ? err.errors : []), ...(err.cause === undefined ? [] : [err.cause])];
  const inner = [...new Set(wrapped.map(kafkaErrorMessage))];
  return inner.length > 0 ? `${err.message} (${inner.join("; ")})` : err.message;
}

interface BrokerPayload {
  broker: { host: string; port: number };
}
interface GroupPayload {
  groupId?: string;
  memberId?: string | null;
  generationId?: number;
}

const broker = ({ broker: { host, port } }: BrokerPayload) => ({ broker: `${host}:${port}` });
const group = ({ groupId, memberId, generationId }: GroupPayload) => ({ groupId, memberId, generationId });

/**
 * The client's events that are logged, each with its level and line. The client writes nothing itself
 * (only to the `debug` module, DEBUG=plt:kafka:*); what goes wrong also reaches the caller as an error.
 * `error` is a consumer that could not rejoin its group after a failed heartbeat (unhandled, it would end
 * the process).
 */
const loggedEvents: Record<string, { level: "warn" | "debug"; message: string; fields: (payload: never) => Record<string, unknown> }> = {
  error: { level: "warn", message: "Kafka consumer left without a group", fields: (err: unknown) => ({ error: kafkaErrorMessage(err) }) },
  "client:broker:failed": { level: "warn", message: "Kafka broker connection failed", fields: broker },
  "consumer:heartbeat:stalled": {
    level: "warn",
    message: "Kafka consumer heartbeats failing",
    fields: ({ stalledFor, lastError }: { stalledFor: number; lastError?: Error }) => ({ stalledForMs: stalledFor, error: lastError && kafkaErrorMessage(lastError) }),
  },
  "client:broker:connect": { level: "debug", message: "Kafka broker connected", fields: broker },
  "client:broker:disconnect": { level: "debug", message: "Kafka broker disconnected", fields: broker },
  "consumer:group:join": {
    level: "debug",
    message: "Kafka consumer group joined",
    fields: (p: GroupPayload & { assignments?: { topic: string; partitions: number[] }[] }) => ({ ...group(p), assignments: p.assignments }),
  },
  "consumer:group:leave": { level: "debug", message: "Kafka consumer group left", fields: group },
  "consumer:group:rebalance": { level: "debug", message: "Kafka consumer group rebalancing", fields: group },
  "consumer:heartbeat:error": {
    level: "debug",
    message: "Kafka consumer heartbeat failed",
    fields: (p: GroupPayload & { error: Error }) => ({ ...group(p), error: kafkaErrorMessage(p.error) }),
  },
};

/**
 * Writes a Kafka client's (Producer, Consumer, Admin) events through pino: failures as warnings, the
 * rest at debug. With `allDebug` every line is debug (a producer retrying against an absent broker fails
 * several times a second, and its failures reach the caller anyway).
 */
export function logKafkaEvents(client: Pick<EventEmitter, "on">, logger: Logger, options: { allDebug?: boolean } = {}): void {
  for (const [event, { level, message, fields }] of Object.entries(loggedEvents)) {
    client.on(event, (payload) => {
      const line = { kafkaEvent: event, ...fields(payload as never) };
      if (level === "warn" && !options.allDebug) logger.warn(line, message);
      else logger.debug(line, message);
    });
  }
}
