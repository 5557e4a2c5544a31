import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { repoRoot } from "@formsvc/launcher/system.ts";
import { startKafka, type KafkaBroker } from "../deploy/kafka/kafka-runner.ts";
import { startS3Mock, type S3Mock } from "../deploy/s3/s3mock-runner.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { startReceiver } from "./support/receiver.ts";
import { apiClient, createUserWithKey, startTestSystem, testRedisUrl, type TestSystem } from "./support/system.ts";

// Two gateways, two submissions, two delivery and one of each other service, over real Postgres,
// Kafka, Redis and S3 (S3Mock), while one delivery replica is SIGKILLed and one gateway restarted under load;
// respondents resend after a failure with their submit's Idempotency-Key, so nothing is stored twice.

const responses = Number(process.env.MULTI_REPLICA_RESPONSES ?? 600);
const ratePerSecond = Number(process.env.MULTI_REPLICA_RATE ?? 60);
const keyLimit = 200;
const forms = 6;

let kafka: KafkaBroker;
let s3: S3Mock;
let sys: TestSystem;
before(async () => {
  kafka = await startKafka({ dataDir: join(repoRoot, "test-output", `kafka-multi-${process.pid}`) });
  s3 = await startS3Mock({ log: join(repoRoot, "test-output", `s3mock-multi-${process.pid}.log`) });
  sys = await startTestSystem(
    "multi_replica",
    {
      KAFKA_BROKERS: kafka.brokers,
      REDIS_URL: testRedisUrl,
      RATE_LIMIT_PER_KEY: String(keyLimit),
      RATE_LIMIT_PER_IP: "1000000",
      WEBHOOK_ALLOW_PRIVATE_URLS: "true",
      WEBHOOK_RETRY_SCHEDULE: "0.2,0.4,0.8,1,1,1,1,1,1,1,1,1",
      ...s3.env,
    },
    { replicas: { gateway: 2, submissions: 2, delivery: 2 } },
  );
});
after(async () => {
  await sys?.stop();
  await kafka?.stop();
  await s3?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("two replicas of the gateway, submissions and delivery", () => {
  it("serves and deletes through one replica the files uploaded through the other (S3)", async () => {
    const [first, second] = sys.system.gatewayUrls;
    const owner = await createUserWithKey(sys, `multi-files-${randomBytes(3).toString("hex")}@example.com`);
    const form = await owner.api("POST", "/forms", {
      workspaceId: owner.workspace.id,
      name: "Files across replicas",
      document: { blocks: [{ id: "f", key: "f", type: "FILE", question: "Files" }] },
    });
    assert.equal(form.status, 201, JSON.stringify(form.body));
    await sys.cli("form:publish", "--id", form.body.id);

    // Uploaded and submitted through gateway 1 (and so submissions 1).
    const contents = [randomBytes(3 * 1024 * 1024), randomBytes(1234), randomBytes(9 * 1024 * 1024)];
    const uploadIds: string[] = [];
    for (const [i, content] of contents.entries()) {
      const body = new FormData();
      body.set("file", new Blob([content], { type: "application/octet-stream" }), `part-${i}.bin`);
      const res = await fetch(`${first}/f/${form.body.id}/uploads`, { method: "POST", body });
      assert.equal(res.status, 200, await res.clone().text());
      uploadIds.push(((await res.json()) as { uploadId: string }).uploadId);
    }
    const saved = await fetch(`${first}/f/${form.body.id}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ answers: { f: uploadIds }, completed: true }),
    });
    assert.equal(saved.status, 200);
    const { responseId } = (await saved.json()) as { responseId: string };

    // Read, every byte, and deleted through gateway 2 (and so submissions 2).
    const viaSecond = apiClient(second, owner.key);
    const sub = await viaSecond("GET", `/forms/${form.body.id}/submissions/${responseId}`);
    assert.equal(sub.status, 200);
    const links = (sub.body.answers.f.files as { url: string }[]).map((f) => {
      const url = new URL(f.url);
      return `${second}${url.pathname}${url.search}`;
    });
    const presigned: string[] = [];
    for (const [i, link] of links.entries()) {
      const res = await fetch(link);
      assert.equal(res.status, 200);
      assert.equal(new URL(res.url).origin, s3.endpoint, "served by the object store");
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(contents[i]), `file ${i} arrives byte for byte`);
      presigned.push(res.url);
    }
    assert.equal((await viaSecond("DELETE", `/forms/${form.body.id}/submissions/${responseId}`)).status, 204);
    for (const link of links) {
      assert.equal((await fetch(link)).status, 404);
      assert.equal((await fetch(link.replace(second, first))).status, 404);
    }
    for (const url of presigned) assert.equal((await fetch(url)).status, 404, "the object is gone from the bucket");
  });

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
      let doubleSubmits = 0;
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
            // One key per submit, sent again with every resend, as the hosted page does.
            const idempotencyKey = randomUUID();
            const post = (gateway: string) =>
              fetch(`${gateway}/f/${formIds[i % forms]}/responses`, {
                method: "POST",
                headers: { "content-type": "application/json", "idempotency-key": idempotencyKey },
                body: JSON.stringify({ answers: { n: i }, completed: true }),
              });
            // Every tenth respondent submits twice at once through the other gateway too (a double click).
            const twin =
              i % 10 === 0
                ? post(gateways[(i + 1) % 2]).then(
                    async (res) => (res.status === 200 ? ((await res.json()) as { responseId: string }).responseId : undefined),
                    () => undefined,
                  )
                : undefined;
            for (let attempt = 0; ; attempt++) {
              const gateway = gateways[(i + attempt) % 2];
              try {
                const res = await post(gateway);
                const answer = (await res.json()) as { responseId?: string };
                if (res.status === 200) {
                  stored.push(answer.responseId!);
                  const twinId = await twin;
                  if (twinId) {
                    assert.equal(twinId, answer.responseId, `response ${i}: both submits answer one response`);
                    doubleSubmits++;
                  }
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
      let storedRows = -1;
      try {
        const outboxBacklog = async () =>
          Number((await db.query("select count(*) as n from submissions.outbox where published_at is null")).rows[0].n);
        await eventuallyPasses(async () => missing(), (n) => n === 0, 180_000, 250);
        backlog = await eventuallyPasses(outboxBacklog, (n) => n === 0, 60_000, 250);
        storedRows = Number((await db.query("select count(*) as n from submissions.responses where form_id = any($1)", [formIds])).rows[0].n);
      } finally {
        await db.end();
      }
      const drainMs = Date.now() - started - sentMs;

      const unique = new Set(delivered().map((r) => r.body?.eventId)).size;
      const figures = {
        responses: stored.length,
        storedResponses: storedRows,
        duplicateResponses: storedRows - responses,
        respondentRetries,
        doubleSubmits,
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

      assert.equal(stored.length, responses);
      assert.equal(new Set(stored).size, responses, "every submit answered with its own response");
      assert.equal(storedRows, responses, "as many stored responses as distinct submits: a resend with its key stores nothing twice");
      assert.equal(missing(), 0);
      assert.ok(
        Math.abs(limits.admitted - keyLimit) <= Math.ceil(keyLimit * 0.02),
        `admitted ${limits.admitted} against a limit of ${keyLimit}`,
      );
      assert.equal(receiver.maxInFlightPerEvent, 1, "no event was being sent by two replicas at once");
      assert.equal(backlog, 0);

      // Each form's responseCount, pushed to forms by both submissions replicas off the respondents' path,
      // settles on exactly its stored responses (double submits and resends counted once).
      const perForm = formIds.map((_, f) => Array.from({ length: responses }, (_, i) => i % forms).filter((k) => k === f).length);
      const counts = await eventuallyPasses(
        () => Promise.all(formIds.map(async (id) => (await owner.api("GET", `/forms/${id}`)).body.responseCount as number)),
        (got) => got.every((n, f) => n === perForm[f]),
        15_000,
        100,
      ).catch((err: Error) => err.message);
      assert.deepEqual(counts, perForm);
    } finally {
      await receiver.close();
    }
  });
});
