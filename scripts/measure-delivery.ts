// Deliveries per second to a fast local receiver: N completed responses sent at 32 connections,
// then the time from the first to the last POST the receiver got.
// Usage: node scripts/measure-delivery.ts [responses=2000] [embedded|kafka]
import { join } from "node:path";
import { repoRoot } from "@formsvc/launcher/system.ts";
import { startKafka } from "../deploy/kafka/kafka-runner.ts";
import { eventually, startReceiver } from "../tests/support/receiver.ts";
import { createUserWithKey, startTestSystem } from "../tests/support/system.ts";

const total = Number(process.argv[2] ?? 2000);
const bus = process.argv[3] ?? "embedded";
const kafka = bus === "kafka" ? await startKafka({ dataDir: join(repoRoot, "test-output", `kafka-measure-${process.pid}`) }) : undefined;
const sys = await startTestSystem("measure_delivery", { WEBHOOK_ALLOW_PRIVATE_URLS: "true", KAFKA_BROKERS: kafka?.brokers ?? "" });
const receiver = await startReceiver();
try {
  const ada = await createUserWithKey(sys, "bench@example.com");
  const form = await ada.api("POST", "/forms", {
    workspaceId: ada.workspace.id,
    name: "Delivery",
    document: { blocks: [{ id: "n", key: "n", type: "NUMBER", question: "Number" }] },
  });
  await sys.cli("form:publish", "--id", form.body.id);
  await ada.api("POST", "/webhooks", { formId: form.body.id, url: receiver.url });
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < total) {
        const n = next++;
        const res = await fetch(`${sys.url}/f/${form.body.id}/responses`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ answers: { n }, completed: true }),
        });
        await res.arrayBuffer();
      }
    }),
  );
  await eventually(async () => receiver.received.length, (n) => n >= total, 600_000, 250);
  const times = receiver.received.map((r) => r.at).sort((a, b) => a - b);
  const lags = receiver.received.map((r) => r.at - Date.parse(r.body.data.submittedAt)).sort((a, b) => a - b);
  const seconds = (times.at(-1)! - times[0]) / 1000;
  console.log(
    JSON.stringify({
      bus,
      deliveries: receiver.received.length,
      deliveriesPerSecond: Math.round(receiver.received.length / seconds),
      p50LagMs: lags[Math.floor(lags.length * 0.5)],
      p99LagMs: lags[Math.floor(lags.length * 0.99)],
    }),
  );
} finally {
  await receiver.close();
  await sys.stop();
  await kafka?.stop();
}
