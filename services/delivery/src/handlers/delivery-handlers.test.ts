import assert from "node:assert/strict";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { asCaller } from "@formsvc/platform/caller.ts";
import { DeliveryService, DeliveryStatus } from "@formsvc/proto/delivery/v1/delivery_pb.js";
import { deliveryAttempts } from "../delivery-metrics.ts";
import { envelopeOf } from "@formsvc/platform/events.ts";
import { serializePayload } from "../sender/payload.ts";
import { serviceSignature } from "../sender/sign.ts";
import { openTestDatabase, type DeliveryTestDatabase } from "../testing/database.ts";
import {
  createAcceptEvent,
  eventually,
  quietLogger,
  sampleEvent,
  startReceiver,
  type AcceptEvent,
  type Receiver,
  fakeForms,
  fakeSubmissions,
  sampleForm,
  testFileLinks,
} from "../testing/fixtures.ts";
import { FakeWebhooks } from "../../../webhooks/src/testing/fake-webhooks.ts";
import { DeliveryWorker, type WorkerOptions } from "../worker/worker.ts";
import { createDeliveryHandlers, routes } from "./delivery-handlers.ts";
import { rejectsWith } from "@formsvc/platform/testing/rpc-assertions.ts";

let db: DeliveryTestDatabase;
const webhooks = new FakeWebhooks();
const submissions = fakeSubmissions();
let acceptEvent: AcceptEvent;
let client: Client<typeof DeliveryService>;
let guardedClient: Client<typeof DeliveryService>;
const receivers: Receiver[] = [];
const ada = asCaller("user-ada");
const mallory = asCaller("user-mallory");

async function receiver(answer?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}

/** Runs a worker until `done` holds for the deliveries, then stops it. */
async function runWorker(options: Partial<WorkerOptions>, done: () => Promise<boolean>): Promise<void> {
  const worker = new DeliveryWorker({
    orm: db.orm,
    webhooks: webhooks.client,
    logger: quietLogger,
    retrySchedule: [600],
    allowPrivateUrls: true,
    disableAfterFailingSeconds: 3600,
    timeoutMs: 1_000,
    pollIntervalMs: 20,
    ...options,
  });
  worker.start();
  try {
    await eventually(done, 10_000, "the worker's deliveries");
  } finally {
    await worker.stop();
  }
}

before(async () => {
  db = await openTestDatabase("delivery_handlers_test");
  acceptEvent = createAcceptEvent({ orm: db.orm, webhooks: webhooks.client, fileLinks: testFileLinks, logger: quietLogger });
  const deps = { orm: db.orm, webhooks: webhooks.client, forms: fakeForms("user-ada"), submissions: submissions.client, fileLinks: testFileLinks, logger: quietLogger, retrySchedule: [600], disableAfterFailingSeconds: 3600, timeoutMs: 1_000 };
  client = createClient(DeliveryService, createRouterTransport((router) => routes(router, createDeliveryHandlers({ ...deps, allowPrivateUrls: true }))));
  guardedClient = createClient(DeliveryService, createRouterTransport((router) => routes(router, createDeliveryHandlers({ ...deps, allowPrivateUrls: false }))));
});

beforeEach(async () => {
  webhooks.clear();
  await db.reset();
});

afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

after(async () => {
  await db?.close();
});

describe("ListDeliveries", () => {
  it("needs a caller, and answers NOT_FOUND for a webhook that is not theirs or does not exist", async () => {
    webhooks.add({ id: "wh_1", url: "https://a.example/hook" });
    await rejectsWith(client.listDeliveries({ webhookId: "wh_1" }), Code.Unauthenticated);
    await rejectsWith(client.listDeliveries({ webhookId: "wh_1" }, mallory), Code.NotFound, "webhook not found");
    await rejectsWith(client.listDeliveries({ webhookId: "wh_nope" }, ada), Code.NotFound, "webhook not found");
    await rejectsWith(client.listDeliveries({ webhookId: "" }, ada), Code.NotFound, "webhook not found");
    assert.deepEqual(
      webhooks.calls.filter((c) => c.method === "getWebhook").map((c) => [c.caller, c.id]),
      [["user-mallory", "wh_1"], ["user-ada", "wh_nope"]],
      "asked as the caller",
    );
    await rejectsWith(client.listDeliveries({ webhookId: "wh_1", limit: 501 }, ada), Code.InvalidArgument);
  });

  it("lists the webhook's receipts newest first, by page", async () => {
    webhooks.add({ id: "wh_1", url: "https://a.example/hook" });
    webhooks.add({ id: "wh_2", url: "https://b.example/hook" });
    const events = [sampleEvent(), sampleEvent(), sampleEvent()];
    for (const e of events) {
      await acceptEvent(e);
      await new Promise((r) => setTimeout(r, 5));
    }
    const all = await client.listDeliveries({ webhookId: "wh_1" }, ada);
    assert.equal(all.hasMore, false);
    assert.deepEqual(all.deliveries.map((d) => d.eventId), events.map((e) => e.eventId).reverse());
    const [newest] = all.deliveries;
    assert.equal(newest.webhookId, "wh_1");
    assert.equal(newest.status, DeliveryStatus.PENDING);
    assert.equal(newest.attempts, 0);
    assert.equal(newest.submissionId, events[2].responseId);
    assert.equal(newest.eventType, "FORM_RESPONSE");
    assert.ok(newest.nextAttemptAt && newest.createdAt && newest.updatedAt);

    const page1 = await client.listDeliveries({ webhookId: "wh_1", page: 1, limit: 2 }, ada);
    const page2 = await client.listDeliveries({ webhookId: "wh_1", page: 2, limit: 2 }, ada);
    assert.deepEqual([page1.deliveries.length, page1.hasMore, page2.deliveries.length, page2.hasMore], [2, true, 1, false]);
    assert.equal(page2.deliveries[0].eventId, events[0].eventId);
  });
});

describe("ListDeliveries by status and RecoverDeliveries", () => {
  it("filters by status", async () => {
    const r = await receiver(() => ({ status: 404 }));
    webhooks.add({ id: "wh_1", url: r.url });
    await acceptEvent(sampleEvent());
    await runWorker({}, async () => (await db.deliveries("wh_1"))[0].status === "failed");
    await acceptEvent(sampleEvent());
    const failed = await client.listDeliveries({ webhookId: "wh_1", status: DeliveryStatus.FAILED }, ada);
    const pending = await client.listDeliveries({ webhookId: "wh_1", status: DeliveryStatus.PENDING }, ada);
    const all = await client.listDeliveries({ webhookId: "wh_1" }, ada);
    assert.deepEqual([failed.deliveries.length, pending.deliveries.length, all.deliveries.length], [1, 1, 2]);
    assert.equal(failed.deliveries[0].status, DeliveryStatus.FAILED);
    assert.equal(failed.deliveries[0].trigger, "event");
  });

  it("makes exactly the failed event deliveries of the window due again, same eventId and bytes, schedule from its start", async () => {
    let healthy = false;
    const r = await receiver(() => ({ status: healthy ? 200 : 400 }));
    webhooks.add({ id: "wh_1", url: r.url });
    const tooEarly = sampleEvent();
    await acceptEvent(tooEarly);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const since = new Date();
    const inWindow = [sampleEvent(), sampleEvent()];
    for (const e of inWindow) await acceptEvent(e);
    await runWorker({}, async () => (await db.deliveries("wh_1")).every((d) => d.status === "failed"));
    const until = new Date();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const tooLate = sampleEvent();
    await acceptEvent(tooLate);
    await runWorker({}, async () => (await db.deliveries("wh_1")).every((d) => d.status === "failed"));
    const test = (await client.sendTestEvent({ webhookId: "wh_1" }, ada)).delivery!;
    assert.deepEqual([test.status, test.trigger], [DeliveryStatus.FAILED, "test"]);
    const sentBefore = r.received.length;

    healthy = true;
    const { recovered } = await client.recoverDeliveries({ webhookId: "wh_1", since: timestampFromDate(since), until: timestampFromDate(until) }, ada);
    assert.equal(recovered, 2);
    await runWorker({}, async () => (await db.deliveries("wh_1")).filter((d) => d.status === "succeeded").length === 2);
    const resent = r.received.slice(sentBefore);
    assert.deepEqual(resent.map((g) => g.headers["webhook-id"]).sort(), inWindow.map((e) => e.eventId).sort(), "the same eventIds, only the window's");
    const byEvent = new Map((await db.deliveries("wh_1")).map((d) => [d.eventId, d]));
    assert.deepEqual([byEvent.get(tooEarly.eventId)!.status, byEvent.get(tooLate.eventId)!.status], ["failed", "failed"]);
    assert.equal(byEvent.get(inWindow[0].eventId)!.attempts, 2, "the history stays");

    // Without until: up to now (the two left outside before, not the test delivery).
    assert.equal((await client.recoverDeliveries({ webhookId: "wh_1", since: timestampFromDate(new Date(0)) }, ada)).recovered, 2);
  });

  it("needs since (and until after it), the caller's webhook, and an enabled one", async () => {
    webhooks.add({ id: "wh_1", url: "https://a.example/hook" });
    webhooks.add({ id: "wh_off", url: "https://a.example/hook", enabled: false });
    const since = timestampFromDate(new Date());
    await rejectsWith(client.recoverDeliveries({ webhookId: "wh_1" }, ada), Code.InvalidArgument, "since is required");
    await rejectsWith(client.recoverDeliveries({ webhookId: "wh_1", since, until: since }, ada), Code.InvalidArgument, "until must be after since");
    await rejectsWith(client.recoverDeliveries({ webhookId: "wh_1", since }, mallory), Code.NotFound, "webhook not found");
    await rejectsWith(client.recoverDeliveries({ webhookId: "wh_off", since }, ada), Code.FailedPrecondition);
  });
});

describe("ListAttempts and RetryDelivery", () => {
  it("lists attempts oldest first; a delivery of another webhook is not found", async () => {
    const r = await receiver(() => ({ status: 503, body: "busy" }));
    webhooks.add({ id: "wh_1", url: r.url });
    webhooks.add({ id: "wh_2", url: "https://b.example/hook" });
    await acceptEvent(sampleEvent());
    await runWorker({ retrySchedule: [0.05] }, async () => (await db.deliveries("wh_1"))[0].status === "failed");
    const [d] = await db.deliveries("wh_1");
    const { attempts } = await client.listAttempts({ webhookId: "wh_1", deliveryId: d.id }, ada);
    assert.deepEqual(attempts.map((a) => [a.number, a.statusCode, a.responseBody, a.manual]), [
      [1, 503, "busy", false],
      [2, 503, "busy", false],
    ]);
    assert.ok(attempts.every((a) => a.id && a.createdAt && a.error === ""));
    await rejectsWith(client.listAttempts({ webhookId: "wh_2", deliveryId: d.id }, ada), Code.NotFound, "delivery not found");
    await rejectsWith(client.listAttempts({ webhookId: "wh_1", deliveryId: "nope" }, ada), Code.NotFound, "delivery not found");
    await rejectsWith(client.listAttempts({ webhookId: "wh_1", deliveryId: d.id }, mallory), Code.NotFound, "webhook not found");
    await rejectsWith(client.retryDelivery({ webhookId: "wh_1", deliveryId: d.id }, mallory), Code.NotFound, "webhook not found");
    await rejectsWith(client.retryDelivery({ webhookId: "wh_1", deliveryId: d.id }), Code.Unauthenticated);
    assert.equal(r.received.length, 2, "refused calls sent nothing");
  });

  it("a manual retry of a retrying delivery sends the same eventId and bytes and does not reset its schedule", async () => {
    let status = 500;
    const r = await receiver(() => ({ status }));
    webhooks.add({ id: "wh_1", url: r.url, secret: "s" });
    const event = sampleEvent();
    await acceptEvent(event);
    await runWorker({}, async () => (await db.deliveries("wh_1"))[0].status === "retrying");
    const [before] = await db.deliveries("wh_1");
    assert.deepEqual([before.attempts, before.scheduleStep], [1, 1]);

    const failed = await client.retryDelivery({ webhookId: "wh_1", deliveryId: before.id }, ada);
    assert.equal(failed.delivery!.status, DeliveryStatus.RETRYING);
    assert.equal(failed.delivery!.attempts, 2);
    assert.equal(failed.delivery!.lastStatusCode, 500);
    assert.equal(timestampDate(failed.delivery!.nextAttemptAt!).getTime(), before.nextAttemptAt!.getTime(), "next automatic attempt unchanged");
    const [afterFailure] = await db.deliveries("wh_1");
    assert.equal(afterFailure.scheduleStep, 1, "schedule step unchanged");
    assert.equal(afterFailure.status, "retrying");

    status = 200;
    const succeeded = await client.retryDelivery({ webhookId: "wh_1", deliveryId: before.id }, ada);
    assert.equal(succeeded.delivery!.status, DeliveryStatus.SUCCEEDED);
    assert.equal(succeeded.delivery!.attempts, 3);
    assert.equal(succeeded.delivery!.nextAttemptAt, undefined);
    assert.equal(succeeded.delivery!.eventId, event.eventId);

    assert.equal(r.received.length, 3);
    assert.deepEqual(new Set(r.received.map((g) => g.headers["webhook-id"])), new Set([event.eventId]));
    assert.deepEqual(new Set(r.received.map((g) => g.raw.toString("utf8"))), new Set([serializePayload(envelopeOf(event), testFileLinks)]));
    assert.deepEqual(new Set(r.received.map((g) => g.body.eventId)), new Set([event.eventId]));
    const { attempts } = await client.listAttempts({ webhookId: "wh_1", deliveryId: before.id }, ada);
    assert.deepEqual(attempts.map((a) => [a.number, a.statusCode, a.manual]), [
      [1, 500, false],
      [2, 500, true],
      [3, 200, true],
    ]);
  });

  it("a failed delivery stays failed when a manual retry fails, and succeeds when one does; both are counted", async () => {
    const manualAttempts = async (outcome: string) =>
      (await deliveryAttempts.get()).values.find((v) => v.labels.outcome === outcome && v.labels.trigger === "manual")?.value ?? 0;
    const [retriesBefore, successesBefore] = [await manualAttempts("retry"), await manualAttempts("succeeded")];
    let status = 503;
    const r = await receiver(() => ({ status }));
    webhooks.add({ id: "wh_1", url: r.url });
    await acceptEvent(sampleEvent());
    await runWorker({ retrySchedule: [0.05, 0.05] }, async () => (await db.deliveries("wh_1"))[0].status === "failed");
    const [d] = await db.deliveries("wh_1");
    assert.equal(d.attempts, 3);
    const again = await client.retryDelivery({ webhookId: "wh_1", deliveryId: d.id }, ada);
    assert.deepEqual([again.delivery!.status, again.delivery!.attempts, again.delivery!.lastStatusCode], [DeliveryStatus.FAILED, 4, 503]);
    status = 204;
    const ok = await client.retryDelivery({ webhookId: "wh_1", deliveryId: d.id }, ada);
    assert.deepEqual([ok.delivery!.status, ok.delivery!.attempts, ok.delivery!.lastStatusCode], [DeliveryStatus.SUCCEEDED, 5, 204]);
    assert.equal(await manualAttempts("retry"), retriesBefore + 1);
    assert.equal(await manualAttempts("succeeded"), successesBefore + 1);
  });

  it("sends at once even while the receiver's breaker is open", async () => {
    let healthy = false;
    const r = await receiver(() => ({ status: healthy ? 200 : 500 }));
    for (let i = 0; i < 12; i++) webhooks.add({ id: `wh_${String(i).padStart(2, "0")}`, url: r.url });
    await acceptEvent(sampleEvent());
    await runWorker(
      { perOriginConcurrency: 1, breakers: { resetTimeoutMs: 60_000 } },
      async () => {
        const rows = await db.deliveries();
        return rows.filter((d) => d.status === "pending").length === 2 && rows.every((d) => d.lockedUntil === null);
      },
    );
    const deferred = (await db.deliveries()).find((d) => d.status === "pending")!;
    healthy = true;
    const res = await client.retryDelivery({ webhookId: deferred.webhookId, deliveryId: deferred.id }, ada);
    assert.deepEqual([res.delivery!.status, res.delivery!.attempts], [DeliveryStatus.SUCCEEDED, 1]);
    assert.equal(r.received.length, 11);
  });

  it("refuses to send for a disabled webhook, and reports a deleted one as not found", async () => {
    const r = await receiver();
    webhooks.add({ id: "wh_1", url: r.url, enabled: true });
    await acceptEvent(sampleEvent());
    const [d] = await db.deliveries("wh_1");
    webhooks.hooks.get("wh_1")!.webhook.enabled = false;
    await rejectsWith(
      client.retryDelivery({ webhookId: "wh_1", deliveryId: d.id }, ada),
      Code.FailedPrecondition,
      "the webhook is disabled; enable it to send its deliveries again",
    );
    webhooks.remove("wh_1");
    await rejectsWith(client.retryDelivery({ webhookId: "wh_1", deliveryId: d.id }, ada), Code.NotFound, "webhook not found");
    await rejectsWith(client.listDeliveries({ webhookId: "wh_1" }, ada), Code.NotFound, "webhook not found");
    assert.equal(r.received.length, 0);
  });

  it("answers UNAVAILABLE when webhooks does not answer", async () => {
    webhooks.add({ id: "wh_1", url: "https://a.example/hook" });
    await acceptEvent(sampleEvent());
    const [d] = await db.deliveries("wh_1");
    // The fake's GetWebhook still answers; GetWebhookForDelivery fails.
    webhooks.failWith = Code.Unavailable;
    await rejectsWith(client.retryDelivery({ webhookId: "wh_1", deliveryId: d.id }, ada), Code.Unavailable, "webhooks is unavailable");
  });

  it("records a refused private target as a manual attempt when those are not allowed", async () => {
    const r = await receiver();
    webhooks.add({ id: "wh_1", url: r.url });
    await acceptEvent(sampleEvent());
    const [d] = await db.deliveries("wh_1");
    const res = await guardedClient.retryDelivery({ webhookId: "wh_1", deliveryId: d.id }, ada);
    assert.deepEqual([res.delivery!.status, res.delivery!.attempts], [DeliveryStatus.PENDING, 1]);
    assert.equal(res.delivery!.lastError, "refused: not a public address");
    assert.equal(r.received.length, 0);
  });
});

describe("SendTestEvent", () => {
  it("sends an event of any type the webhook receives, and refuses one it does not", async () => {
    const r = await receiver();
    webhooks.add({ id: "wh_1", url: r.url, eventTypes: ["FORM_CLOSED", "FORM_RESPONSE_PARTIAL"] });
    const first = (await client.sendTestEvent({ webhookId: "wh_1" }, ada)).delivery!;
    assert.deepEqual([first.eventType, first.status], ["FORM_CLOSED", DeliveryStatus.SUCCEEDED]);
    assert.deepEqual([r.received[0].body.eventType, r.received[0].body.test, r.received[0].body.data.status, r.received[0].body.data.formId], ["FORM_CLOSED", true, "closed", "form_1"]);
    const partial = (await client.sendTestEvent({ webhookId: "wh_1", eventType: "FORM_RESPONSE_PARTIAL" }, ada)).delivery!;
    assert.equal(partial.eventType, "FORM_RESPONSE_PARTIAL");
    assert.equal(r.received[1].body.data.page, 1);
    await rejectsWith(client.sendTestEvent({ webhookId: "wh_1", eventType: "FORM_RESPONSE" }, ada), Code.InvalidArgument, "eventType: the webhook does not receive FORM_RESPONSE; it receives FORM_CLOSED, FORM_RESPONSE_PARTIAL");
  });

  it("sends one signed sample FORM_RESPONSE now and records it as a test delivery the worker never retries", async () => {
    let status = 200;
    const r = await receiver(() => ({ status, body: "got it" }));
    webhooks.add({ id: "wh_1", url: r.url, secret: "s3cret", headers: { "X-Team": "forms" } });
    const sent = await client.sendTestEvent({ webhookId: "wh_1" }, ada);
    const d = sent.delivery!;
    assert.deepEqual([d.status, d.attempts, d.lastStatusCode, d.eventType, d.trigger, d.submissionId], [DeliveryStatus.SUCCEEDED, 1, 200, "FORM_RESPONSE", "test", ""]);
    assert.equal(r.received.length, 1);
    const [got] = r.received;
    assert.equal(got.body.eventType, "FORM_RESPONSE");
    assert.equal(got.body.test, true);
    assert.equal(got.body.eventId, d.eventId);
    assert.equal(got.body.data.formId, "form_1");
    assert.equal(got.body.data.formName, "Event sign-up");
    // The form's real questions, each with a sample answer.
    assert.deepEqual(got.body.data.fields, [
      { questionId: "q1", type: "SHORT_TEXT", label: "Your full name", value: "Ada Lovelace" },
      { questionId: "q2", type: "MULTIPLE_CHOICE", label: "Plan", value: "o1", options: [{ id: "o1", text: "Free" }, { id: "o2", text: "Pro" }] },
      { questionId: "q3", type: "FILE", label: "CV", value: null, files: [] },
    ]);
    assert.deepEqual(got.body.data.hiddenFields, { utm_source: "sample" });
    assert.deepEqual(got.body.data.calculatedFields, { score: null });
    assert.equal(got.headers["x-team"], "forms");
    assert.equal(got.headers["x-service-signature"], serviceSignature(got.raw, "s3cret"), "signed like any delivery");

    const listed = await client.listDeliveries({ webhookId: "wh_1" }, ada);
    assert.deepEqual(listed.deliveries.map((x) => [x.id, x.eventType, x.trigger]), [[d.id, "FORM_RESPONSE", "test"]]);
    const { attempts } = await client.listAttempts({ webhookId: "wh_1", deliveryId: d.id }, ada);
    assert.deepEqual(attempts.map((a) => [a.number, a.statusCode, a.responseBody, a.manual]), [[1, 200, "got it", true]]);

    // A failing receiver: the test fails at once, is not scheduled, and can be sent again by hand.
    status = 500;
    const failed = (await client.sendTestEvent({ webhookId: "wh_1" }, ada)).delivery!;
    assert.deepEqual([failed.status, failed.attempts, failed.lastStatusCode], [DeliveryStatus.FAILED, 1, 500]);
    assert.equal(failed.nextAttemptAt, undefined);
    const worker = new DeliveryWorker({ orm: db.orm, webhooks: webhooks.client, logger: quietLogger, retrySchedule: [0], allowPrivateUrls: true, disableAfterFailingSeconds: 3600, pollIntervalMs: 20 });
    worker.start();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await worker.stop();
    assert.equal(r.received.length, 2, "the worker sent nothing");
    status = 200;
    const resent = (await client.retryDelivery({ webhookId: "wh_1", deliveryId: failed.id }, ada)).delivery!;
    assert.deepEqual([resent.status, resent.attempts], [DeliveryStatus.SUCCEEDED, 2]);
    assert.equal(r.received[2].raw.toString("utf8"), r.received[1].raw.toString("utf8"), "the same bytes again");
  });

  it("is refused for a stranger, without a caller, for a disabled webhook, and to a private address when those are not allowed", async () => {
    const r = await receiver();
    webhooks.add({ id: "wh_1", url: r.url });
    webhooks.add({ id: "wh_off", url: r.url, enabled: false });
    await rejectsWith(client.sendTestEvent({ webhookId: "wh_1" }, mallory), Code.NotFound, "webhook not found");
    await rejectsWith(client.sendTestEvent({ webhookId: "wh_nope" }, ada), Code.NotFound, "webhook not found");
    await rejectsWith(client.sendTestEvent({ webhookId: "wh_1" }), Code.Unauthenticated);
    await rejectsWith(client.sendTestEvent({ webhookId: "wh_off" }, ada), Code.FailedPrecondition);
    assert.equal(r.received.length, 0);
    assert.equal((await db.deliveries()).length, 0, "nothing recorded for refused calls");

    const guarded = (await guardedClient.sendTestEvent({ webhookId: "wh_1" }, ada)).delivery!;
    assert.equal(guarded.status, DeliveryStatus.FAILED);
    assert.equal(guarded.lastError, "refused: not a public address");
    assert.equal(r.received.length, 0);
  });
});

describe("ListSampleEvents", () => {
  it("answers the latest response events as webhook bodies, else one test body made from the form", async () => {
    // No responses yet: one body from the form's questions, marked as a test.
    const [made] = (await client.listSampleEvents({ formId: sampleForm.id }, ada)).bodies.map((b) => JSON.parse(b));
    assert.equal(made.test, true);
    assert.equal(made.eventType, "FORM_RESPONSE");
    assert.deepEqual(made.data.fields.map((f: { label: string }) => f.label), ["Your full name", "Plan", "CV"]);
    assert.deepEqual(submissions.asked.at(-1), { formId: sampleForm.id, eventType: "FORM_RESPONSE", limit: 3 });

    const events = [sampleEvent({ responseId: "r2" }), sampleEvent({ responseId: "r1" })].map(envelopeOf);
    submissions.events.push(...events);
    const bodies = (await client.listSampleEvents({ formId: sampleForm.id, eventType: "FORM_RESPONSE", limit: 1 }, ada)).bodies;
    assert.deepEqual(bodies, [serializePayload(events[0], testFileLinks)], "exactly the body a webhook is sent");
    submissions.events.length = 0;

    // Form events have no kept samples: one made from the form.
    const [published] = (await client.listSampleEvents({ formId: sampleForm.id, eventType: "FORM_PUBLISHED" }, ada)).bodies.map((b) => JSON.parse(b));
    assert.deepEqual([published.test, published.data.status], [true, "published"]);
  });

  it("refuses unknown event types, limits out of 1 to 10, a stranger's form and a call without a caller", async () => {
    await rejectsWith(client.listSampleEvents({ formId: sampleForm.id, eventType: "FORM_EATEN" }, ada), Code.InvalidArgument, /^eventType: /);
    await rejectsWith(client.listSampleEvents({ formId: sampleForm.id, limit: 11 }, ada), Code.InvalidArgument, "limit: 1 to 10");
    await rejectsWith(client.listSampleEvents({ formId: sampleForm.id, eventType: "FORM_PUBLISHED" }, mallory), Code.NotFound);
    await rejectsWith(client.listSampleEvents({ formId: sampleForm.id }), Code.Unauthenticated);
  });
});
