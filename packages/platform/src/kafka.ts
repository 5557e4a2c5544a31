// What the services that meet on Kafka share: the topic's name and how kafkajs's own log lines reach pino.
import type { Logger } from "./logger.ts";

/** Completed responses, keyed by form id: submissions' relay publishes, delivery consumes. */
export const responsesTopic = "formsvc.responses";

/** The services that use Kafka when KAFKA_BROKERS is set (submissions' relay, delivery's consumer). */
export const kafkaServices: readonly string[] = ["submissions", "delivery"];

/** kafkajs's LogEntry and levels (typed here so that platform does not depend on kafkajs). */
interface KafkaLogEntry {
  level: number;
  label: string;
  log: { message: string } & Record<string, unknown>;
}
const kafkaLevels = { error: 1, warn: 2 } as const;

/**
 * A kafkajs logCreator writing through pino: errors and warnings at their level, the rest at debug. With
 * `allDebug` every line is debug (a producer retrying against an absent broker logs several lines a
 * second, and its failures reach the caller anyway).
 */
export function kafkaLogCreator(logger: Logger, options: { allDebug?: boolean } = {}) {
  return () =>
    ({ level, label, log }: KafkaLogEntry) => {
      const { message, ...rest } = log;
      const line = { kafka: rest, kafkaLevel: label };
      if (!options.allDebug && level === kafkaLevels.error) logger.error(line, message);
      else if (!options.allDebug && level === kafkaLevels.warn) logger.warn(line, message);
      else logger.debug(line, message);
    };
}
