import { webhookSuite } from "./support/webhook-suite.ts";

// Without KAFKA_BROKERS, delivery reads the submissions outbox through a gRPC stream.
webhookSuite("embedded", async () => ({ env: { KAFKA_BROKERS: "" }, stop: async () => {} }));
