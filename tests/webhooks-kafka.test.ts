import { join } from "node:path";
import { repoRoot } from "@formsvc/launcher/system.ts";
import { startKafka } from "../deploy/kafka/kafka-runner.ts";
import { webhookSuite } from "./support/webhook-suite.ts";

// The same suite with a real single-node Kafka broker between submissions and delivery.
webhookSuite("kafka", async () => {
  const kafka = await startKafka({ dataDir: join(repoRoot, "test-output", `kafka-${process.pid}`) });
  return { env: { KAFKA_BROKERS: kafka.brokers }, stop: () => kafka.stop() };
});
