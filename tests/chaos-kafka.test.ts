import { join } from "node:path";
import { repoRoot } from "@formsvc/launcher/system.ts";
import { startKafka } from "../deploy/kafka/kafka-runner.ts";
import { chaosSuite } from "./support/delivery-chaos.ts";

// A real broker, restarted once while responses are flowing.
chaosSuite("kafka", async () => {
  const kafka = await startKafka({ dataDir: join(repoRoot, "test-output", `kafka-chaos-${process.pid}`) });
  return {
    env: { KAFKA_BROKERS: kafka.brokers },
    stop: () => kafka.stop(),
    faults: [{ fraction: 0.5, inject: () => kafka.restart() }],
  };
});
