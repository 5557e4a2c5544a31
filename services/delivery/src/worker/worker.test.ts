import assert from "node:assert/strict";
import { createHmac, randomBytes } from "node:crypto";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { EventSchema } from "@formsvc/proto/events/v1/events_pb.js";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { assertMigrationsApplyOnce } from "@formsvc/platform/testing/database.ts";
import { envelopeOf } from "@formsvc/platform/events.ts";
import { serializePayload } from "../sender/payload.ts";
import { openTestDatabase, type DeliveryTestDatabase } from "../testing/database.ts";
import { discordMessage, slackMessage } from "../testing/chat-shapes.ts";
import { closedPort, createAcceptEvent, eventually, quietLogger, sampleEvent, startReceiver, type AcceptEvent, type Receiver, testFileLinks } from "../testing/fixtures.ts";
import { FakeWebhooks } from "../../../webhooks/src/testing/fake-webhooks.ts";
import { defaultWebhookRetrySchedule } from "@formsvc/platform/config.ts";
import { claimDue } from "./claim.ts";
import { recordAttempt, successRecorder } from "../attempt/record.ts";
import { DeliveryWorker, type WorkerOptions } from "./worker.ts";

let db: DeliveryTestDatabase;
const webhooks = new FakeWebhooks();
let acceptEvent: AcceptEvent;
const workers: DeliveryWorker[] = [];
const receivers: Receiver[] = [];

function startWorker(options: Partial<WorkerOptions> = {}): DeliveryWorker {
  const worker = new DeliveryWorker({
    orm: db.orm,
    webhooks: webhooks.client,
    logger: quietLogger,
    retrySchedule: [0.1, 0.1],
    allowPrivateUrls: true,
    disableAfterFailingSeconds: 3600,
    timeoutMs: 300,
    pollIntervalMs: 20,
    ...options,
  });
  workers.push(worker);
  worker.start();
  return worker;
}

async function receiver(answer?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}

/** The webhook's only delivery, once `done` says it is there. */
async function deliveryOf(webhookId: string, done: (status: string) => boolean = (s) => s === "succeeded" || s === "failed", timeoutMs = 10_000) {
  return eventually(async () => {
    const [d] = await db.deliveries(webhookId);
    return d && done(d.status) ? d : undefined;
  }, timeoutMs, `a delivery of ${webhookId}`);
}

before(async () => {
  db = await openTestDatabase("delivery_worker_test");
  acceptEvent = createAcceptEvent({ orm: db.orm, webhooks: webhooks.client, fileLinks: testFileLinks, logger: quietLogger });
});

beforeEach(async () => {
  webhooks.clear();
  await db.reset();
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

after(async () => {
  await db?.close();
});

describe("migrations", () => {
  it("apply once: a second replica opening the same database finds nothing to do", async () => {
    await assertMigrationsApplyOnce(db.options, [
      "Migration20261125000000_initial",
      "Migration20261204000000_delivery_trace_parent",
      "Migration20261215000000_failing_webhooks",
      "Migration20261215000100_delivery_trigger",
      "Migration20270201000000_deliveries_form_index",
      "Migration20261127000000_partitioned_deliveries",
    ]);
  });
});

describe("accepting events", () => {
  it("gives each event only to the webhooks subscribed to its type", async () => {
    webhooks.add({ id: "wh_responses", url: "https://a.example/hook" });
    webhooks.add({ id: "wh_forms", url: "https://b.example/hook", eventTypes: ["FORM_PUBLISHED", "FORM_DELETED"] });
    const published = create(EventSchema, { event: { case: "formPublished", value: { eventId: "evt_pub", formId: "form_1", formName: "F", status: "published", version: 2 } } });
    await acceptEvent(published);
    await acceptEvent(sampleEvent());
    assert.deepEqual((await db.deliveries("wh_forms")).map((d) => [d.eventId, d.eventType, d.submissionId]), [["evt_pub", "FORM_PUBLISHED", ""]]);
    assert.deepEqual((await db.deliveries("wh_responses")).map((d) => d.eventType), ["FORM_RESPONSE"]);
    assert.equal(JSON.parse((await db.deliveries("wh_forms"))[0].payload).data.status, "published");
  });

  it("stores one pending delivery per enabled webhook, due now, with the body serialised once", async () => {
    webhooks.add({ id: "wh_a", url: "https://a.example/hook" });
    webhooks.add({ id: "wh_b", url: "https://b.example:8443/in" });
    webhooks.add({ id: "wh_off", url: "https://c.example/hook", enabled: false });
    webhooks.add({ id: "wh_other", formId: "form_2", url: "https://d.example/hook" });
    const event = sampleEvent();
    const before = Date.now();
    assert.deepEqual(await acceptEvent(event), { created: 2 });
    const rows = await db.deliveries();
    assert.deepEqual(rows.map((d) => d.webhookId).sort(), ["wh_a", "wh_b"]);
    for (const d of rows) {
      assert.equal(d.status, "pending");
      assert.equal(d.attempts, 0);
      assert.equal(d.eventId, event.eventId);
      assert.equal(d.eventType, "FORM_RESPONSE");
      assert.equal(d.submissionId, event.responseId);
      assert.equal(d.formId, "form_1");
      assert.equal(d.payload, serializePayload(envelopeOf(event), testFileLinks));
      assert.ok(Math.abs(d.nextAttemptAt!.getTime() - before) < 5_000);
    }
    assert.deepEqual(rows.map((d) => d.origin).sort(), ["https://a.example", "https://b.example:8443"]);
    assert.deepEqual(webhooks.calls.map((c) => [c.method, c.caller]), [["listEnabledWebhooks", null]]);
  });

  it("creates nothing twice for an event seen again, and nothing for a form without webhooks", async () => {
    webhooks.add({ id: "wh_a", url: "https://a.example/hook" });
    const event = sampleEvent();
    assert.deepEqual(await acceptEvent(event), { created: 1 });
    assert.deepEqual(await acceptEvent(event), { created: 0 });
    assert.deepEqual(await acceptEvent(sampleEvent({ formId: "form_none" })), { created: 0 });
    assert.equal((await db.deliveries()).length, 1);
    // A webhook added since gets its delivery when the event comes again; the first stays one.
    webhooks.add({ id: "wh_b", url: "https://b.example/hook" });
    assert.deepEqual(await acceptEvent(event), { created: 1 });
    assert.equal((await db.deliveries()).length, 2);
  });

  it("fails (so the bus hands the event again) when webhooks does not answer", async () => {
    webhooks.failWith = Code.Unavailable;
    await assert.rejects(acceptEvent(sampleEvent()), /webhooks down/);
    assert.equal((await db.deliveries()).length, 0);
  });
});

describe("the worker", () => {
  it("delivers a 2xx: exact bytes, both signatures, the webhook's headers; succeeded after one attempt", async () => {
    const r = await receiver(() => ({ status: 202, body: "thanks" }));
    const secret = `whsec_${randomBytes(24).toString("base64")}`;
    webhooks.add({ id: "wh_ok", url: r.url, secret, headers: { "X-Tenant": "acme", "X-Other": "1" } });
    const event = sampleEvent();
    await acceptEvent(event);
    startWorker();
    const d = await deliveryOf("wh_ok");
    assert.equal(d.status, "succeeded");
    assert.equal(d.attempts, 1);
    assert.equal(d.lastStatusCode, 202);
    assert.equal(d.lastError, "");
    assert.equal(d.lockedUntil, null);

    assert.equal(r.received.length, 1);
    const [got] = r.received;
    assert.equal(got.raw.toString("utf8"), serializePayload(envelopeOf(event), testFileLinks));
    assert.equal(got.headers["content-type"], "application/json");
    assert.equal(got.headers["user-agent"], "formsvc-webhooks/1");
    assert.equal(got.headers["x-tenant"], "acme");
    assert.equal(got.headers["x-other"], "1");
    assert.equal(got.headers["x-service-signature"], createHmac("sha256", secret).update(got.raw).digest("base64"));
    assert.doesNotThrow(() => new StandardWebhook(secret).verify(got.raw.toString("utf8"), got.headers as Record<string, string>));
    assert.doesNotThrow(() => new StandardWebhook(secret.slice("whsec_".length)).verify(got.raw, got.headers as Record<string, string>));
    assert.equal(got.headers["webhook-id"], event.eventId);
    assert.equal(got.body.eventId, event.eventId);
    assert.equal(got.body.data.responseId, event.responseId);

    const [attempt] = await db.attempts(d.id);
    assert.deepEqual([attempt.number, attempt.statusCode, attempt.error, attempt.responseBody, attempt.manual], [1, 202, "", "thanks", false]);
    assert.ok(attempt.durationMs >= 0);
  });

  it("sends no signature header without a secret", async () => {
    const r = await receiver();
    webhooks.add({ id: "wh_plain", url: r.url });
    await acceptEvent(sampleEvent());
    startWorker();
    await deliveryOf("wh_plain");
    assert.equal(r.received[0].headers["x-service-signature"], undefined);
    assert.equal(r.received[0].headers["webhook-signature"], undefined);
  });

  it("fails a 4xx after one attempt, without retrying", async () => {
    const r = await receiver(() => ({ status: 404, body: "no such hook" }));
    webhooks.add({ id: "wh_404", url: r.url });
    await acceptEvent(sampleEvent());
    startWorker();
    const d = await deliveryOf("wh_404");
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.deepEqual([d.status, d.attempts, d.lastStatusCode, d.lastError, d.nextAttemptAt], ["failed", 1, 404, "the receiver answered 404", null]);
    assert.equal(r.received.length, 1);
    assert.equal((await db.attempts(d.id))[0].responseBody, "no such hook");
    assert.equal(webhooks.hooks.get("wh_404")!.webhook.enabled, true, "a 404 disables nothing");
  });

  it("fails a 410 at once and disables its webhook: its other deliveries stop without an attempt", async () => {
    const r = await receiver(() => ({ status: 410, body: "gone" }));
    webhooks.add({ id: "wh_410", url: r.url });
    await acceptEvent(sampleEvent());
    await acceptEvent(sampleEvent());
    startWorker({ perOriginConcurrency: 1 });
    const deliveries = await eventually(async () => {
      const all = await db.deliveries("wh_410");
      return all.every((d) => d.status === "failed") ? all : undefined;
    });
    assert.equal(r.received.length, 1, "one attempt; the other delivery found the webhook disabled");
    assert.deepEqual(deliveries.map((d) => d.lastError).sort(), ["the receiver answered 410", "webhook disabled"]);
    const hook = webhooks.hooks.get("wh_410")!.webhook;
    assert.deepEqual([hook.enabled, hook.disabledReason], [false, "the receiver answered 410 Gone"]);
  });

  it("reports a 410 of a subscriber's webhook as gone, and webhooks deletes it", async () => {
    const r = await receiver(() => ({ status: 410 }));
    webhooks.add({ id: "wh_410_n8n", url: r.url, subscriber: "n8n" });
    await acceptEvent(sampleEvent());
    startWorker();
    const d = await deliveryOf("wh_410_n8n");
    assert.deepEqual([d.status, d.lastError], ["failed", "the receiver answered 410"]);
    await eventually(async () => !webhooks.hooks.has("wh_410_n8n"), 5_000, "the webhook deleted");
    assert.deepEqual(webhooks.calls.filter((c) => c.method === "webhookGone" || c.method === "disableWebhook").map((c) => c.method), ["webhookGone"]);
  });

  it("disables a webhook on a 410 when webhooks predates WebhookGone (a rolling upgrade)", async () => {
    const r = await receiver(() => ({ status: 410 }));
    webhooks.add({ id: "wh_410_old", url: r.url, subscriber: "n8n" });
    await acceptEvent(sampleEvent());
    const older: WorkerOptions["webhooks"] = {
      getWebhookForDelivery: webhooks.client.getWebhookForDelivery,
      disableWebhook: webhooks.client.disableWebhook,
      webhookGone: async () => {
        throw new ConnectError("webhooks.v1.WebhooksService/WebhookGone is not implemented", Code.Unimplemented);
      },
    };
    startWorker({ webhooks: older });
    await eventually(async () => webhooks.hooks.get("wh_410_old")?.webhook.enabled === false, 5_000, "the webhook disabled");
    assert.equal(webhooks.hooks.get("wh_410_old")!.webhook.disabledReason, "the receiver answered 410 Gone");
  });

  it("sends a slack or discord webhook a chat message its documented shape takes, the same bytes on every attempt", async () => {
    let calls = 0;
    const slack = await receiver(() => ({ status: ++calls === 1 ? 500 : 200 }));
    const discord = await receiver(() => ({ status: 204 }));
    webhooks.add({ id: "wh_slack", url: slack.url, format: "slack" });
    webhooks.add({ id: "wh_discord", url: discord.url, format: "discord" });
    await acceptEvent(sampleEvent());
    startWorker({ retrySchedule: [0.1], publicUrl: "https://forms.example.com" });
    assert.equal((await deliveryOf("wh_slack")).status, "succeeded");
    assert.equal((await deliveryOf("wh_discord")).status, "succeeded");
    assert.equal(slack.received.length, 2);
    assert.deepEqual(slack.received[0].raw, slack.received[1].raw, "a retry sends the same bytes");
    const message = slackMessage.parse(JSON.parse(slack.received[0].raw.toString("utf8")));
    assert.equal(message.text, 'New response to "Event sign-up"');
    const embed = discordMessage.parse(JSON.parse(discord.received[0].raw.toString("utf8"))).embeds[0];
    assert.match(embed.url ?? "", /^https:\/\/forms\.example\.com\/app\/forms\/form_1\/responses\//);
  });

  it("retries a 429 no sooner than its Retry-After (capped at the schedule's longest step)", async () => {
    let calls = 0;
    const r = await receiver(() => (++calls === 1 ? { status: 429, headers: { "retry-after": "1" } } : { status: 200 }));
    webhooks.add({ id: "wh_429", url: r.url });
    await acceptEvent(sampleEvent());
    startWorker({ retrySchedule: [0.1, 1.5] });
    const d = await deliveryOf("wh_429");
    assert.deepEqual([d.status, d.attempts], ["succeeded", 2]);
    const [first, second] = await db.attempts(d.id);
    assert.equal(first.statusCode, 429);
    assert.ok(second.createdAt.getTime() - first.createdAt.getTime() >= 1_000, "waited for Retry-After, not the 0.1 s step");

    // A Retry-After past the longest step waits the longest step.
    calls = 0;
    r.answer = () => (++calls === 1 ? { status: 408, headers: { "retry-after": "3600" } } : { status: 200 });
    webhooks.add({ id: "wh_408", formId: "form_408", url: `${r.url}/408` });
    await acceptEvent(sampleEvent({ formId: "form_408" }));
    const capped = await deliveryOf("wh_408", (s) => s === "retrying");
    const wait = capped.nextAttemptAt!.getTime() - capped.updatedAt.getTime();
    assert.ok(wait >= 1_400 && wait <= 1_600, `waits the longest step (1.5 s), not an hour: ${wait} ms`);
  });

  it("disables a webhook whose attempts have all failed for WEBHOOK_DISABLE_AFTER_FAILING_SECONDS; a success starts the period again", async () => {
    let healthy = true;
    const r = await receiver(() => ({ status: healthy ? 200 : 500 }));
    webhooks.add({ id: "wh_failing", url: r.url });
    healthy = false;
    await acceptEvent(sampleEvent());
    startWorker({ retrySchedule: [0.4, 0.4, 0.4, 0.4, 0.4, 0.4], disableAfterFailingSeconds: 1 });
    const [stopped] = await eventually(async () => {
      const all = await db.deliveries("wh_failing");
      return all[0]?.status === "failed" ? all : undefined;
    });
    const hook = webhooks.hooks.get("wh_failing")!.webhook;
    assert.deepEqual([hook.enabled, hook.disabledReason], [false, "every delivery attempt failed for 1 second"]);
    const attempts = await db.attempts(stopped.id);
    assert.ok(attempts.length >= 3 && attempts.length <= 5, `failing attempts over about a second, then stopped: ${attempts.length}`);
    assert.equal(stopped.lastError, "webhook disabled");

    // Enabled again, with a receiver that fails once then recovers: not disabled, and no period left over.
    hook.enabled = true;
    let calls = 0;
    r.answer = () => ({ status: ++calls === 1 ? 500 : 200 });
    await acceptEvent(sampleEvent());
    await eventually(async () => (await db.deliveries("wh_failing"))[1]?.status === "succeeded");
    assert.equal(hook.enabled, true);
    const left = await db.orm.em.getConnection().execute(`select * from "delivery"."failing_webhooks"`);
    assert.deepEqual(left, []);
  });

  it("signs with both secrets while a rotation's previous secret is valid", async () => {
    const r = await receiver();
    const [secret, previousSecret] = [0, 1].map(() => `whsec_${randomBytes(24).toString("base64")}`);
    webhooks.add({ id: "wh_rotated", url: r.url, secret, previousSecret });
    await acceptEvent(sampleEvent());
    startWorker();
    await deliveryOf("wh_rotated");
    const [got] = r.received;
    const headers = got.headers as Record<string, string>;
    for (const key of [secret, previousSecret]) assert.doesNotThrow(() => new StandardWebhook(key).verify(got.raw.toString("utf8"), headers));
    assert.equal(headers["x-service-signature"], createHmac("sha256", secret).update(got.raw).digest("base64"));
  });

  it("retries a 5xx on the schedule, with the same eventId and bytes, then fails", async () => {
    const r = await receiver(() => ({ status: 503 }));
    webhooks.add({ id: "wh_503", url: r.url });
    const event = sampleEvent();
    await acceptEvent(event);
    startWorker();
    const retrying = await deliveryOf("wh_503", (s) => s === "retrying");
    assert.equal(retrying.attempts, 1);
    assert.equal(retrying.scheduleStep, 1);
    assert.ok(retrying.nextAttemptAt);
    const d = await deliveryOf("wh_503");
    assert.deepEqual([d.status, d.attempts, d.lastStatusCode, d.scheduleStep, d.nextAttemptAt], ["failed", 3, 503, 2, null]);
    assert.equal(r.received.length, 3, "the first attempt and the two of the schedule");
    assert.deepEqual(new Set(r.received.map((g) => g.headers["webhook-id"])), new Set([event.eventId]));
    assert.deepEqual(new Set(r.received.map((g) => g.raw.toString("utf8"))), new Set([serializePayload(envelopeOf(event), testFileLinks)]));
    const attempts = await db.attempts(d.id);
    assert.deepEqual(attempts.map((a) => [a.number, a.statusCode]), [[1, 503], [2, 503], [3, 503]]);
    // Roughly 100 ms (+-20 %) apart.
    for (let i = 1; i < attempts.length; i++) {
      assert.ok(attempts[i].createdAt.getTime() - attempts[i - 1].createdAt.getTime() >= 70, "waits for the schedule");
    }
  });

  it("walks the default schedule step by step (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), then fails", async () => {
    webhooks.add({ id: "wh_walk", url: "http://receiver.test/hook" });
    await acceptEvent(sampleEvent());
    const answer = { statusCode: 503, durationMs: 4, responseBody: "busy" };
    const waits: number[] = [];
    for (let step = 0; step <= defaultWebhookRetrySchedule.length; step++) {
      const [claimed] = (await claimDue(db.orm, { limit: 1 })).deliveries;
      assert.ok(claimed, `due at step ${step}`);
      const d = await recordAttempt(db.orm, { deliveryId: claimed.id, eventAt: claimed.eventAt, leaseId: claimed.leaseId, result: answer, manual: false, retrySchedule: defaultWebhookRetrySchedule, random: () => 0.5 });
      if (d!.status === "failed") break;
      waits.push(Math.round((d!.nextAttemptAt!.getTime() - Date.now()) / 1000));
      // Due again at once, as if the wait had passed.
      await db.orm.em.getConnection().execute(`update "delivery"."deliveries" set "next_attempt_at" = now()`);
    }
    assert.deepEqual(waits, [5, 300, 1800, 7200, 18000, 36000, 36000]);
    const [d] = await db.deliveries("wh_walk");
    assert.deepEqual([d.status, d.attempts, d.scheduleStep, d.nextAttemptAt, d.lockedUntil], ["failed", 8, 7, null, null]);
  });

  it("retries a time-out", async () => {
    const r = await receiver(() => ({ status: 200, delayMs: 1_000 }));
    webhooks.add({ id: "wh_slow", url: r.url });
    await acceptEvent(sampleEvent());
    startWorker({ timeoutMs: 300 });
    const retrying = await deliveryOf("wh_slow", (s) => s === "retrying");
    assert.equal(retrying.lastError, "no complete answer within 0.3 s");
    assert.equal(retrying.lastStatusCode, 0);
    const d = await deliveryOf("wh_slow");
    assert.deepEqual([d.status, d.attempts], ["failed", 3]);
    const attempts = await db.attempts(d.id);
    assert.ok(attempts.every((a) => a.statusCode === 0 && a.error === "no complete answer within 0.3 s" && a.durationMs >= 250 && a.durationMs < 1_000));
  });

  it("retries a refused connection", async () => {
    webhooks.add({ id: "wh_refused", url: `http://127.0.0.1:${await closedPort()}/hook` });
    await acceptEvent(sampleEvent());
    startWorker();
    const d = await deliveryOf("wh_refused");
    assert.deepEqual([d.status, d.attempts, d.lastError], ["failed", 3, "connection refused"]);
  });

  it("recovers: a 5xx, then a 2xx on the retry", async () => {
    let calls = 0;
    const r = await receiver(() => ({ status: ++calls === 1 ? 500 : 200 }));
    webhooks.add({ id: "wh_flaky", url: r.url });
    await acceptEvent(sampleEvent());
    startWorker();
    const d = await deliveryOf("wh_flaky");
    assert.deepEqual([d.status, d.attempts, d.lastStatusCode, d.lastError], ["succeeded", 2, 200, "the receiver answered 500"]);
  });

  it("stops a deleted webhook's delivery and a disabled one's, without an attempt", async () => {
    let healthy = false;
    const r = await receiver(() => ({ status: healthy ? 200 : 500 }));
    webhooks.add({ id: "wh_doomed", url: r.url });
    webhooks.add({ id: "wh_paused", url: `${r.url}/paused` });
    await acceptEvent(sampleEvent());
    startWorker({ retrySchedule: [0.5] });
    await eventually(() => r.received.length === 2);
    webhooks.remove("wh_doomed");
    webhooks.hooks.get("wh_paused")!.webhook.enabled = false;
    healthy = true;
    const deleted = await deliveryOf("wh_doomed");
    const disabled = await deliveryOf("wh_paused");
    assert.deepEqual([deleted.status, deleted.attempts, deleted.lastError], ["failed", 1, "webhook deleted"]);
    assert.deepEqual([disabled.status, disabled.attempts, disabled.lastError], ["failed", 1, "webhook disabled"]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(r.received.length, 2, "no attempt after deletion or disabling");
  });

  it("puts a delivery off without an attempt while webhooks does not answer", async () => {
    const r = await receiver();
    webhooks.add({ id: "wh_wait", url: r.url });
    await acceptEvent(sampleEvent());
    webhooks.failWith = Code.Unavailable;
    startWorker({ webhooksUnavailableDelayMs: 200 });
    await eventually(() => webhooks.calls.filter((c) => c.method === "getWebhookForDelivery").length >= 2);
    const [waiting] = await db.deliveries("wh_wait");
    assert.deepEqual([waiting.status, waiting.attempts], ["pending", 0]);
    webhooks.failWith = undefined;
    const d = await deliveryOf("wh_wait");
    assert.deepEqual([d.status, d.attempts], ["succeeded", 1]);
  });

  it("refuses private targets when they are not allowed, with a clear error", async () => {
    const r = await receiver();
    webhooks.add({ id: "wh_loop", url: r.url });
    webhooks.add({ id: "wh_localhost", url: `http://localhost:${r.port}/hook` });
    await acceptEvent(sampleEvent());
    startWorker({ allowPrivateUrls: false });
    const literal = await deliveryOf("wh_loop");
    const named = await deliveryOf("wh_localhost");
    assert.deepEqual([literal.status, literal.attempts, literal.lastStatusCode], ["failed", 1, 0]);
    assert.equal(literal.lastError, "refused: not a public address");
    assert.equal(named.status, "failed");
    assert.equal(named.lastError, "refused: not a public address", "neither the name's address nor its range is shown");
    assert.equal(r.received.length, 0);
  });

  it("looks at once for deliveries stored due, without waiting for its poll", async () => {
    const r = await receiver();
    webhooks.add({ id: "wh_wake", url: r.url });
    const worker = startWorker({ pollIntervalMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Stored by another replica's intake (not leased to this worker), which then told it.
    await acceptEvent(sampleEvent());
    const started = Date.now();
    worker.dueStored();
    await deliveryOf("wh_wake");
    assert.ok(Date.now() - started < 5_000);
  });
});

describe("new deliveries handed over by the intake", () => {
  /** The worker's claims from now on. */
  function countClaims() {
    const connection = db.orm.em.getConnection();
    const execute = connection.execute;
    const claims: string[] = [];
    connection.execute = ((sql: string, ...rest: unknown[]) => {
      if (typeof sql === "string" && sql.includes("for update skip locked")) claims.push(sql);
      return (execute as (...a: unknown[]) => unknown).call(connection, sql, ...rest);
    }) as typeof connection.execute;
    return { claims, restore: () => (connection.execute = execute) };
  }

  it("attempts a new delivery it has a slot for at once, stored leased to it, without a claim", async () => {
    const r = await receiver();
    webhooks.add({ id: "wh_handed", url: r.url });
    const worker = startWorker({ pollIntervalMs: 60_000 });
    const accept = createAcceptEvent({ orm: db.orm, webhooks: webhooks.client, fileLinks: testFileLinks, logger: quietLogger, worker });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const spy = countClaims();
    try {
      await accept(sampleEvent());
      const d = await deliveryOf("wh_handed");
      assert.deepEqual([d.status, d.attempts, d.leaseId], ["succeeded", 1, null], "delivered, and its lease released");
      assert.equal(r.received.length, 1);
      assert.deepEqual(spy.claims, [], "no claim was needed");
    } finally {
      spy.restore();
    }
  });

  it("stores the deliveries of a receiver with no slot free due, and claims them as its slots free", async () => {
    const r = await receiver(() => ({ status: 200, delayMs: 50 }));
    for (let i = 0; i < 5; i++) webhooks.add({ id: `wh_one_${i}`, url: r.url });
    const worker = startWorker({ pollIntervalMs: 60_000, perOriginConcurrency: 2, maxPerOriginConcurrency: 2 });
    const accept = createAcceptEvent({ orm: db.orm, webhooks: webhooks.client, fileLinks: testFileLinks, logger: quietLogger, worker });
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(await accept(sampleEvent()), { created: 5 });
    const leased = (await db.deliveries()).filter((d) => d.leaseId !== null && d.status === "pending");
    assert.ok(leased.length <= 2, `only as many leased as the receiver has slots (${leased.length})`);
    await eventually(async () => (await db.deliveries()).every((d) => d.status === "succeeded"), 5_000, "every delivery, long before the poll");
    assert.equal(r.received.length, 5);
    assert.equal(r.maxConcurrent, 2);
  });

  /** Statements from now on; those `held` picks wait at a gate until it opens (`reached` resolves as the first arrives). */
  function gateStatements(held: (sql: string) => boolean) {
    const connection = db.orm.em.getConnection();
    const execute = connection.execute;
    const statements: string[] = [];
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let arrive!: () => void;
    const reached = new Promise<void>((resolve) => (arrive = resolve));
    connection.execute = (async (sql: string, ...rest: unknown[]) => {
      statements.push(sql);
      if (held(sql)) {
        arrive();
        await gate;
      }
      return (execute as (...a: unknown[]) => unknown).call(connection, sql, ...rest);
    }) as typeof connection.execute;
    const givenBack = () => statements.filter((sql) => sql.includes(`"locked_until" = null, "lease_id" = null where`));
    return { reached, open, givenBack, restore: () => (connection.execute = execute) };
  }

  it("keeps claimed deliveries whose slots the intake took meanwhile until a slot frees, rather than giving them back", async () => {
    const r = await receiver(() => ({ status: 200, delayMs: 100 }));
    webhooks.add({ id: "wh_race_1", url: r.url });
    webhooks.add({ id: "wh_race_2", url: r.url });
    const worker = startWorker({ pollIntervalMs: 60_000, perOriginConcurrency: 2, maxPerOriginConcurrency: 2 });
    const accept = createAcceptEvent({ orm: db.orm, webhooks: webhooks.client, fileLinks: testFileLinks, logger: quietLogger, worker });
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Two deliveries due (stored by another replica), then a claim of them held up in flight...
    await acceptEvent(sampleEvent());
    const claim = gateStatements((sql) => sql.includes(`with "due"`));
    try {
      worker.dueStored();
      await claim.reached;
      // ...while the intake hands over two new ones, taking both slots the claim counted on.
      await accept(sampleEvent());
      claim.open();
      await eventually(async () => (await db.deliveries()).every((d) => d.status === "succeeded"), 5_000, "all four, long before the poll");
      assert.equal(r.received.length, 4);
      assert.equal(r.maxConcurrent, 2, "never past the origin's slots");
      assert.deepEqual(claim.givenBack(), [], "nothing given back to the table");
    } finally {
      claim.restore();
    }
  });

  it("starts claimed deliveries waiting for slots a reservation held as soon as it turns out unused", async () => {
    const r = await receiver();
    webhooks.add({ id: "wh_unused_1", url: r.url });
    webhooks.add({ id: "wh_unused_2", url: r.url });
    const worker = startWorker({ pollIntervalMs: 60_000, perOriginConcurrency: 2, maxPerOriginConcurrency: 2 });
    const accept = createAcceptEvent({ orm: db.orm, webhooks: webhooks.client, fileLinks: testFileLinks, logger: quietLogger, worker });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const seen = sampleEvent();
    await acceptEvent(seen);
    await acceptEvent(sampleEvent());
    // The first event's deliveries are already delivered elsewhere; the second's are due.
    await db.orm.em.getConnection().execute(`update "delivery"."deliveries" set "status" = 'succeeded', "next_attempt_at" = null where "event_id" = ?`, [seen.eventId]);
    // A claim counts the origin's two slots free, and is held up...
    const claim = gateStatements((sql) => sql.includes(`with "due"`));
    const store = gateStatements((sql) => sql.includes(`insert into "delivery"."deliveries"`));
    try {
      worker.dueStored();
      await claim.reached;
      // ...while the intake takes both slots for the first event seen again, its statement held up too...
      const again = accept(seen);
      await store.reached;
      // ...so the two due ones the claim brings wait for those slots...
      claim.open();
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(r.received.length, 0, "no slot free yet");
      // ...until the statement returns having stored nothing: the slots come back and the waiting ones go.
      store.open();
      assert.deepEqual(await again, { created: 0 });
      await eventually(() => r.received.length === 2, 5_000, "both, long before a wait of a third of the lease");
      assert.deepEqual(store.givenBack(), []);
    } finally {
      store.restore();
      claim.restore();
    }
  });

  it("gives back the slot of a delivery that was not stored (its event seen before)", async () => {
    const r = await receiver();
    webhooks.add({ id: "wh_again", url: r.url });
    const worker = startWorker({ pollIntervalMs: 60_000, maxInFlight: 1 });
    const accept = createAcceptEvent({ orm: db.orm, webhooks: webhooks.client, fileLinks: testFileLinks, logger: quietLogger, worker });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const event = sampleEvent();
    await accept(event);
    await eventually(() => r.received.length === 1, 5_000, "the first delivery");
    assert.deepEqual(await accept(event), { created: 0 });
    // With the one slot leaked, the next would wait for the minute's poll.
    await accept(sampleEvent());
    await eventually(() => r.received.length === 2, 5_000, "the next event's delivery");
  });
});

describe("spreading work", () => {
  it("caps attempts per origin so a slow receiver holds back no other", async () => {
    const slow = await receiver(() => ({ status: 200, delayMs: 400 }));
    const fast = await receiver();
    for (let i = 0; i < 6; i++) {
      webhooks.add({ id: `wh_slow_${i}`, formId: "form_busy", url: slow.url });
      webhooks.add({ id: `wh_fast_${i}`, formId: "form_busy", url: fast.url });
    }
    await acceptEvent(sampleEvent({ formId: "form_busy" }));
    await acceptEvent(sampleEvent({ formId: "form_busy" }));
    const started = Date.now();
    startWorker({ perOriginConcurrency: 4, timeoutMs: 5_000 });
    await eventually(() => fast.received.length === 12, 5_000, "the fast receiver's deliveries");
    const fastDone = Date.now() - started;
    assert.ok(slow.received.length <= 8, "the fast receiver was served while the slow one still had work waiting");
    await eventually(async () => (await db.deliveries()).every((d) => d.status === "succeeded"), 10_000);
    const slowDone = Date.now() - started;
    assert.equal(slow.received.length, 12);
    assert.equal(slow.maxConcurrent, 4, "never more than 4 at once to one origin");
    assert.ok(slowDone >= 1_150, "12 answers of 400 ms, 4 at a time");
    assert.ok(fastDone < slowDone - 400, `the fast receiver was not held up (${fastDone} ms vs ${slowDone} ms)`);
  });

  it("widens a quick receiver's slots past 4, up to the ceiling, while a slow one keeps 4", async () => {
    const quick = await receiver(() => ({ status: 200, delayMs: 40 }));
    for (let i = 0; i < 60; i++) webhooks.add({ id: `wh_quick_${i}`, formId: "form_quick", url: quick.url });
    await acceptEvent(sampleEvent({ formId: "form_quick" }));
    startWorker({ perOriginConcurrency: 4, maxPerOriginConcurrency: 12, timeoutMs: 5_000 });
    await eventually(() => quick.received.length === 60, 10_000, "the quick receiver's deliveries");
    assert.ok(quick.maxConcurrent > 4, `more than 4 at once (${quick.maxConcurrent})`);
    assert.ok(quick.maxConcurrent <= 12, `never past the ceiling (${quick.maxConcurrent})`);
  });

  it("two workers on one database never attempt the same delivery at once", async () => {
    const r = await receiver(() => ({ status: 200, delayMs: 30 }));
    webhooks.add({ id: "wh_pair", formId: "form_pair", url: r.url });
    for (let i = 0; i < 40; i++) await acceptEvent(sampleEvent({ formId: "form_pair" }));
    // A generous time limit: a slow machine must not turn this into a test of retries.
    const lookups = [0, 0];
    for (const n of [0, 1]) {
      const counting: WorkerOptions["webhooks"] = {
        getWebhookForDelivery: (req, options) => {
          lookups[n] += 1;
          return webhooks.client.getWebhookForDelivery(req, options);
        },
        disableWebhook: webhooks.client.disableWebhook,
        webhookGone: webhooks.client.webhookGone,
      };
      startWorker({ webhooks: counting, perOriginConcurrency: 8, timeoutMs: 10_000 });
    }
    await eventually(async () => (await db.deliveries()).every((d) => d.status === "succeeded"), 20_000, "all delivered");
    assert.equal(r.maxConcurrentPerEvent, 1, "never two requests of one event at once");
    assert.equal(r.received.length, 40, "each delivery sent exactly once");
    assert.equal(new Set(r.received.map((g) => g.headers["webhook-id"])).size, 40);
    assert.ok((await db.deliveries()).every((d) => d.attempts === 1));
    assert.equal(lookups[0] + lookups[1], 40, "one attempt per delivery in all");
    assert.ok(lookups[0] > 0 && lookups[1] > 0, `both workers took part (${lookups.join(" + ")})`);
  });

  it("a killed worker's claimed deliveries come back once its lease runs out", async () => {
    const r = await receiver();
    webhooks.add({ id: "wh_lease", url: r.url });
    await acceptEvent(sampleEvent());
    // A worker claims the delivery and dies before attempting it.
    const [claimed] = (await claimDue(db.orm, { limit: 10, leaseMs: 600 })).deliveries;
    assert.equal(claimed.webhookId, "wh_lease");
    const claimedAt = Date.now();
    assert.deepEqual((await claimDue(db.orm, { limit: 10 })).deliveries, [], "a leased delivery is nobody else's");
    startWorker();
    const d = await deliveryOf("wh_lease");
    assert.equal(d.status, "succeeded");
    assert.ok(Date.now() - claimedAt >= 550, "taken again only after the lease ran out");
    assert.equal(r.received.length, 1);
  });

  it("claims no more of an origin than its room, and leaves the rest due for later", async () => {
    for (let i = 0; i < 5; i++) webhooks.add({ id: `wh_a_${i}`, url: `https://a.example/hook/${i}` });
    for (let i = 0; i < 3; i++) webhooks.add({ id: `wh_b_${i}`, url: `https://b.example/hook/${i}` });
    webhooks.add({ id: "wh_c", url: "https://c.example/hook" });
    await acceptEvent(sampleEvent());
    const rooms = { of: new Map([["https://a.example", 2], ["https://c.example", 0]]), otherwise: 1 };
    const first = await claimDue(db.orm, { limit: 10, rooms });
    assert.deepEqual(first.deliveries.map((d) => d.origin).sort(), ["https://a.example", "https://a.example", "https://b.example"], "a's room of 2, b's of 1, none of full c");
    assert.equal(first.passedOver, true);
    const due = (await db.deliveries()).filter((d) => d.leaseId === null);
    assert.equal(due.length, 6, "the rest untouched, due");
    const rest = await claimDue(db.orm, { limit: 10 });
    assert.equal(rest.deliveries.length, 6, "without rooms, every due one");
    assert.equal(rest.passedOver, false);
  });
});

describe("recording successes together", () => {
  it("writes successes that finish together in one statement each batch, with what one at a time would", async () => {
    for (let i = 0; i < 6; i++) webhooks.add({ id: `wh_${i}`, url: `https://r${i}.example/hook` });
    await acceptEvent(sampleEvent());
    const claimed = (await claimDue(db.orm, { limit: 10 })).deliveries;
    assert.equal(claimed.length, 6);
    // A failing period that a success ends.
    await db.orm.em.getConnection().execute(`insert into "delivery"."failing_webhooks" ("webhook_id", "failing_since") values (?, now())`, [claimed[0].webhookId]);
    const statements: string[] = [];
    const connection = db.orm.em.getConnection();
    const execute = connection.execute.bind(connection);
    connection.execute = ((sql: string, ...rest: unknown[]) => (statements.push(sql), (execute as (...a: unknown[]) => unknown)(sql, ...rest))) as typeof connection.execute;
    try {
      const recorder = successRecorder(db.orm, 4);
      const result = { statusCode: 200, durationMs: 12.4, responseBody: "ok" };
      // The last lost its lease meanwhile (completed by hand, say): counted, and nothing else changes.
      const lost = claimed[5];
      const recorded = await Promise.all(
        claimed.map((d) => recorder.add({ deliveryId: d.id, eventAt: d.eventAt, leaseId: d === lost ? "lease_gone" : d.leaseId, result, origin: d.origin })),
      );
      assert.equal(statements.length, 3, "the first alone, then the 5 that waited: 4 and 1");
      for (const [i, d] of recorded.entries()) {
        assert.equal(d?.attempts, 1);
        assert.equal(d?.status, i === 5 ? "pending" : "succeeded");
        assert.equal(d?.failingSince, null);
      }
    } finally {
      connection.execute = execute;
    }
    for (const d of claimed) {
      const [stored] = await db.deliveries(d.webhookId);
      const attempts = await db.attempts(d.id);
      assert.deepEqual(attempts.map((a) => [a.number, a.statusCode, a.durationMs, a.responseBody, a.manual]), [[1, 200, 12, "ok", false]]);
      if (d === claimed[5]) assert.equal(stored.leaseId, d.leaseId, "a lost lease is not released by the attempt");
      else assert.deepEqual([stored.status, stored.lastStatusCode, stored.nextAttemptAt, stored.leaseId], ["succeeded", 200, null, null]);
    }
    const left = await db.orm.em.getConnection().execute(`select * from "delivery"."failing_webhooks"`);
    assert.deepEqual(left, []);
  });
});

describe("the receiver's breaker", () => {
  it("opens after 10 calls failing, and puts the origin's deliveries off without counting attempts", async () => {
    const r = await receiver(() => ({ status: 500 }));
    const other = await receiver();
    for (let i = 0; i < 15; i++) webhooks.add({ id: `wh_br_${String(i).padStart(2, "0")}`, formId: "form_br", url: r.url });
    webhooks.add({ id: "wh_br_other", formId: "form_br", url: other.url });
    await acceptEvent(sampleEvent({ formId: "form_br" }));
    startWorker({ perOriginConcurrency: 1, retrySchedule: [600], breakers: { resetTimeoutMs: 60_000 } });
    await eventually(async () => (await db.deliveries()).filter((d) => d.status === "pending").length === 5 && (await db.deliveries()).every((d) => d.lockedUntil === null), 10_000, "the breaker to open");
    await new Promise((resolve) => setTimeout(resolve, 300));
    const rows = await db.deliveries();
    const failing = rows.filter((d) => d.webhookId !== "wh_br_other");
    assert.equal(r.received.length, 10, "10 calls, then nothing");
    assert.equal(failing.filter((d) => d.status === "retrying" && d.attempts === 1).length, 10);
    const deferred = failing.filter((d) => d.status === "pending");
    assert.equal(deferred.length, 5);
    for (const d of deferred) {
      assert.equal(d.attempts, 0, "no attempt counted");
      const wait = d.nextAttemptAt!.getTime() - Date.now();
      assert.ok(wait > 50_000 && wait <= 60_000, `put off until the breaker half-opens (${wait} ms)`);
    }
    assert.equal(rows.find((d) => d.webhookId === "wh_br_other")!.status, "succeeded", "another origin is unaffected");
  });

  it("half-opens, lets one call through, and closes when it succeeds", async () => {
    let healthy = false;
    const r = await receiver(() => ({ status: healthy ? 200 : 503 }));
    for (let i = 0; i < 14; i++) webhooks.add({ id: `wh_ho_${i}`, formId: "form_ho", url: r.url });
    await acceptEvent(sampleEvent({ formId: "form_ho" }));
    startWorker({ perOriginConcurrency: 1, retrySchedule: [600], breakers: { resetTimeoutMs: 400 } });
    await eventually(() => r.received.length === 10, 10_000);
    healthy = true;
    await eventually(async () => (await db.deliveries()).filter((d) => d.status === "succeeded").length === 4, 10_000, "the rest delivered");
    const rows = await db.deliveries();
    assert.equal(rows.filter((d) => d.status === "retrying").length, 10, "the failed ones wait for their own schedule");
    assert.equal(r.received.length, 14);
  });
});
