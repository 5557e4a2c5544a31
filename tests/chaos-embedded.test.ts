import { chaosSuite } from "./support/delivery-chaos.ts";

// The embedded bus: no broker to restart; delivery's stream from submissions is cut by each SIGKILL of
// delivery and must resume from its durable cursor without losing an event.
chaosSuite("embedded", async () => ({ env: { KAFKA_BROKERS: "" }, stop: async () => {}, faults: [] }));
