import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { describe, it } from "node:test";
import { kafkaErrorMessage, logKafkaEvents } from "./kafka.ts";
import type { Logger } from "./logger.ts";

function captureLogger() {
  const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) => void lines.push({ level, msg, fields });
  return { lines, logger: { warn: at("warn"), debug: at("debug") } as unknown as Logger };
}

const brokerPayload = { broker: { host: "127.0.0.1", port: 9092 }, connection: { secret: "not logged" } };

describe("kafka", () => {
  it("puts a wrapped error's messages on one line, each once", () => {
    const refused = new Error("Connection to 127.0.0.1:9092 failed.", { cause: new Error("connect ECONNREFUSED") });
    const error = new AggregateError([refused, refused], "Producing messages failed.");
    assert.equal(kafkaErrorMessage(error), "Producing messages failed. (Connection to 127.0.0.1:9092 failed. (connect ECONNREFUSED))");
    assert.equal(kafkaErrorMessage("plain"), "plain");
  });

  it("logs a client's failures as warnings and the rest at debug, without connections", () => {
    const client = new EventEmitter();
    const { lines, logger } = captureLogger();
    logKafkaEvents(client, logger);
    client.emit("client:broker:failed", brokerPayload);
    client.emit("client:broker:connect", brokerPayload);
    client.emit("consumer:group:join", { groupId: "g", memberId: "m", generationId: 3, assignments: [{ topic: "t", partitions: [0, 2] }] });
    client.emit("error", new Error("rejoin failed"));
    client.emit("consumer:heartbeat:end", {});
    assert.deepEqual(lines, [
      { level: "warn", msg: "Kafka broker connection failed", fields: { kafkaEvent: "client:broker:failed", broker: "127.0.0.1:9092" } },
      { level: "debug", msg: "Kafka broker connected", fields: { kafkaEvent: "client:broker:connect", broker: "127.0.0.1:9092" } },
      {
        level: "debug",
        msg: "Kafka consumer group joined",
        fields: { kafkaEvent: "consumer:group:join", groupId: "g", memberId: "m", generationId: 3, assignments: [{ topic: "t", partitions: [0, 2] }] },
      },
      { level: "warn", msg: "Kafka consumer left without a group", fields: { kafkaEvent: "error", error: "rejoin failed" } },
    ]);
  });

  it("logs everything at debug with allDebug", () => {
    const client = new EventEmitter();
    const { lines, logger } = captureLogger();
    logKafkaEvents(client, logger, { allDebug: true });
    client.emit("client:broker:failed", brokerPayload);
    assert.deepEqual(lines.map((l) => l.level), ["debug"]);
  });
});
