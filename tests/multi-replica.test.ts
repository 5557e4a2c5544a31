import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { repoRoot } from "@formsvc/launcher/system.ts";
import { startKafka, type KafkaBroker } from "../deploy/kafka/kafka-runner.ts";
import { eventually, startReceiver } from "./support/receiver.ts";
import { apiClient, createUserWithKey, startTestSystem, testRedisUrl, type TestSystem } from "./support/system.ts";

// Two gateways, two submissions, two delivery and one of each other service, over real Postgres,
// Kafka and Redis, while one delivery replica is SIGKILLed and one gateway restarted under load.

const responses = Number(process.env.MULTI_REPLICA_RESPONSES ?? 600);
const ratePerSecond = Number(process.env.MULTI_REPLICA_RATE ?? 60);
const keyLimit = 200;
const forms = 6;

let kafka: KafkaBroker;
let sys: TestSystem;
before(async () => {
  kafka = await startKafka({ dataDir: join(repoRoot, "test-output", `kafka-multi-${process.pid}`) });
  sys = await startTestSystem(
    "multi_replica",
    {
      KAFKA_BROKERS: kafka.brokers,
      REDIS_URL: testRedisUrl,
      RATE_LIMIT_PER_KEY: String(keyLimit),
      RATE_LIMIT_PER_IP: "1000000",
      WEBHOOK_ALLOW_PRIVATE_URLS: "true",
      WEBHOOK_RETRY_SCHEDULE: "0.2,0.4,0.8,1,1,1,1,1,1,1,1,1",
    },
    { replicas: { gateway: 2, submissions: 2, delivery: 2 } },
  );
});
after(async () => {
  await sys?.stop();
  await kafka?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("two replicas of the gateway, submissions and delivery", () => {
  it("keeps the key limit, delivers everything once at a time and drains the outbox under faults", async () => {
    const gateways = sys.system.gatewayUrls;
    assert.equal(gateways.length, 2);
    const tag = randomBytes(3).toString("hex");
    const owner = await createUserWithKey(sys, `multi-owner-${tag}@example.com`);
    const limited = await createUserWithKey(sys, `multi-limited-${tag}@example.com`);

    // A receiver answering in 50 ms, so two attempts of one event at once would overlap and show.
    const receiver = await startReceiver(() => ({ status: 200, delayMs: 50 }));
    try {
      // Several forms, so the form-keyed events spread over the topic's partitions and both consumers.
      const formIds: string[] = [];
      for (let f = 0; f < forms; f++) {
        const form = await owner.api("POST", "/forms", {
          workspaceId: owner.workspace.id,
          name: `Replicas ${f}`,
          document: { blocks: [{ id: "n", key: "n", type: "NUMBER", question: "Number" }] },
        });
        assert.equal(form.status, 201, JSON.stringify(form.body));
        await sys.cli("form:publish", "--id", form.body.id);
        assert.equal((await owner.api("POST", "/webhooks", { formId: form.body.id, url: receiver.url })).status, 201);
        formIds.push(form.body.id);
      }

      // The key limit, hit through both gateways in turn while responses flow.
      const rateLimit = (async () => {
        const clients = gateways.map((url) => apiClient(url, limited.key));
        let admitted = 0;
        let refused = 0;
        for (let i = 0; i < 2 * keyLimit; i++) {
          for (let attempt = 0; ; attempt++) {
            try {
              const res = await clients[(i + attempt) % 2]("GET", "/users/me");
              if (res.status === 200) admitted++;
              else if (res.status === 429) refused++;
              else throw new Error(`status ${res.status}`);
              break;
            } catch (err) {
              // A gateway restarting: the request goes to the other one.
              assert.ok(attempt < 20, `rate-limit request ${i}: ${err}`);
              await sleep(50);
            }
          }
        }
        return { admitted, refused };
      })();

      const faults = [
        { fraction: 0.3, what: "SIGKILL delivery#2", run: () => sys.system.kill("delivery#2", "SIGKILL") },
        { fraction: 0.5, what: "restart gateway#2", run: () => sys.system.restart("gateway#2", "SIGTERM").then(() => {}) },
        { fraction: 0.8, what: "start delivery#2", run: () => sys.system.start("delivery#2").then(() => {}) },
      ];
      const injected: Promise<void>[] = [];
      const stored: string[] = [];
      let respondentRetries = 0;
      const failures: Record<string, number> = {};
      const failed = (why: string) => (failures[why] = (failures[why] ?? 0) + 1);
      const started = Date.now();
      const sends: Promise<void>[] = [];
      for (let i = 0; i < responses; i++) {
        while (faults.length && i >= faults[0].fraction * responses) injected.push(faults.shift()!.run());
        const due = started + (i * 1000) / ratePerSecond;
        if (due > Date.now()) await sleep(due - Date.now());
        sends.push(
          (async () => {
            for (let attempt = 0; ; attempt++) {
              const gateway = gateways[(i + attempt) % 2];
              try {
                const res = await fetch(`${gateway}/f/${formIds[i % forms]}/responses`, {
                  method: "POST",
                  headers: { "content-type": "application/json" },
                  body: JSON.stringify({ answers: { n: i }, completed: true }),
                });
                const answer = (await res.json()) as { responseId?: string };
                if (res.status === 200) {
                  stored.push(answer.responseId!);
                  return;
                }
                assert.ok(res.status >= 500, `response ${i}: status ${res.status}`);
                failed(`${res.status} via gateway#${((i + attempt) % 2) + 1}`);
              } catch (err) {
                if (err instanceof assert.AssertionError) throw err;
                const cause = (err as { cause?: { code?: string; message?: string } }).cause;
                const where = `gateway#${((i + attempt) % 2) + 1}`;
                failed(`${cause?.code ?? cause?.message ?? String(err)} via ${where}`);
              }
              // The respondent's browser sends again (through whichever gateway answers).
              assert.ok(attempt < 50, `response ${i} never stored`);
              respondentRetries++;
              await sleep(100);
            }
          })(),
        );
      }
      await Promise.all(sends);
      const sentMs = Date.now() - started;
      await Promise.all(injected);
      const limits = await rateLimit;

      // Every stored response reaches the receiver; the outbox empties.
      const delivered = () => receiver.received.filter((r) => r.status === 200);
      const missing = () => {
        const seen = new Set(delivered().map((r) => r.body?.data?.responseId));
        return stored.filter((id) => !seen.has(id)).length;
      };
      const db = new pg.Client({ connectionString: sys.databaseUrl });
      await db.connect();
      let backlog = -1;
      try {
        const outboxBacklog = async () =>
          Number((await db.query("select count(*) as n from submissions.outbox where published_at is null")).rows[0].n);
        await eventually(async () => missing(), (n) => n === 0, 180_000, 250);
        backlog = await eventually(outboxBacklog, (n) => n === 0, 60_000, 250);
      } finally {
        await db.end();
      }
      const drainMs = Date.now() - started - sentMs;

      const unique = new Set(delivered().map((r) => r.body?.eventId)).size;
      const figures = {
        responses: stored.length,
        respondentRetries,
        failures,
        sendSeconds: sentMs / 1000,
        deliveries: delivered().length,
        uniqueEvents: unique,
        duplicates: delivered().length - unique,
        requestsAtReceiver: receiver.received.length,
        keyLimit,
        admitted: limits.admitted,
        refused: limits.refused,
        maxConcurrencyPerEvent: receiver.maxInFlightPerEvent,
        outboxBacklog: backlog,
        drainSecondsAfterLastResponse: drainMs / 1000,
      };
      console.log(`multi-replica figures: ${JSON.stringify(figures)}`);

      assert.ok(stored.length >= responses);
      assert.equal(missing(), 0);
      assert.ok(
        Math.abs(limits.admitted - keyLimit) <= Math.ceil(keyLimit * 0.02),
        `admitted ${limits.admitted} against a limit of ${keyLimit}`,
      );
      assert.equal(receiver.maxInFlightPerEvent, 1, "no event was being sent by two replicas at once");
      assert.equal(backlog, 0);
    } finally {
      await receiver.close();
    }
  });
});
