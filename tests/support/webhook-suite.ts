import assert from "node:assert/strict";
import { createHmac, randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { Webhook as SvixWebhook } from "svix";
import { loadConfig } from "@formsvc/platform/config.ts";
import { openDatabase } from "@formsvc/platform/database.ts";
import { deliverySchema, webhookSchema } from "@formsvc/api-records/schemas";
import { envelopeOf } from "../../gateway/src/routes/paging.ts";
import { entities as submissionsEntities } from "../../services/submissions/src/entities/index.ts";
import { migrations as submissionsMigrations } from "../../services/submissions/src/migrations/index.ts";
import { outboxBacklog } from "../../services/submissions/src/outbox/outbox-metrics.ts";
import { spanKinds, startOtlpCollector, type CollectedSpan } from "./otlp-collector.ts";
import { servedResponseValidator } from "./openapi-validator.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { startReceiver } from "./receiver.ts";
import { createUserWithKey, startTestSystem, type TestSystem } from "./system.ts";

/**
 * Webhooks end to end, as an integrator sees them: real receivers on loopback, responses sent
 * through the public endpoint, receipts read over /api/v1. `busEnv` chooses the event bus. Tracing is
 * on (exported to a real OTLP/HTTP receiver), so this suite also runs the traced code paths.
 */
/** WEBHOOK_DISABLE_AFTER_FAILING_SECONDS of the suite: longer than any one test's failing receiver fails for, but one. */
const disableAfterFailingSeconds = 8;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

export function webhookSuite(bus: string, busEnv: () => Promise<{ env: Record<string, string>; stop(): Promise<void> }>) {
  let sys: TestSystem;
  let stopBus: () => Promise<void>;
  let ada: Awaited<ReturnType<typeof createUserWithKey>>;
  let mallory: Awaited<ReturnType<typeof createUserWithKey>>;
  let collector: Awaited<ReturnType<typeof startOtlpCollector>>;

  before(async () => {
    const busSetup = await busEnv();
    stopBus = busSetup.stop;
    collector = await startOtlpCollector();
    sys = await startTestSystem(`webhooks_${bus}`, {
      WEBHOOK_ALLOW_PRIVATE_URLS: "true",
      // The longest step (2.5 s) is where a Retry-After is capped.
      WEBHOOK_RETRY_SCHEDULE: "0.5,2.5",
      // Shortened rules: disabled after 8 s of failures (5 days by default); a rotated-out secret signs for 6 s (24 h).
      WEBHOOK_DISABLE_AFTER_FAILING_SECONDS: String(disableAfterFailingSeconds),
      WEBHOOK_SECRET_OVERLAP_SECONDS: "6",
      // The respondent's country comes from COUNTRY_HEADER only behind a trusted proxy.
      TRUST_PROXY: "loopback",
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_BSP_SCHEDULE_DELAY: "100",
      ...busSetup.env,
    });
    ada = await createUserWithKey(sys, "ada@example.com");
    mallory = await createUserWithKey(sys, "mallory@example.com");
  });
  after(async () => {
    await sys?.stop();
    await stopBus?.();
    await collector?.close();
  });

  async function publishedForm() {
    const res = await ada.api("POST", "/forms", {
      workspaceId: ada.workspace.id,
      name: "Hooked",
      document: {
        blocks: [
          { id: "name", key: "name", type: "SHORT_TEXT", question: "Your name", fieldName: "full_name" },
          { id: "plan", key: "plan", type: "MULTIPLE_CHOICE", question: "Plan", options: [{ id: "pro", text: "Pro" }] },
        ],
      },
    });
    await sys.cli("form:publish", "--id", res.body.id);
    return res.body.id as string;
  }

  async function respond(formId: string, answers: object, completed = true, headers: Record<string, string> = {}) {
    const res = await fetch(`${sys.url}/f/${formId}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ answers, completed }),
    });
    assert.equal(res.status, 200);
    return (await res.json()) as { responseId: string };
  }

  async function addWebhook(formId: string, url: string, extra: object = {}) {
    const res = await ada.api("POST", "/webhooks", { formId, url, ...extra });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    webhookSchema.parse(res.body);
    return res.body as { id: string };
  }

  const receipts = async (webhookId: string, query = "") => {
    const res = await ada.api("GET", `/webhooks/${webhookId}/deliveries${query}`);
    assert.equal(res.status, 200);
    return envelopeOf(deliverySchema, "D").parse(res.body).items;
  };

  describe(`webhooks on the ${bus} bus`, () => {
    it("pushes each completed response, signed over the raw bytes, with the webhook's headers", async () => {
      const receiver = await startReceiver();
      const formId = await publishedForm();
      const secret = `whsec_${randomBytes(24).toString("base64")}`;
      const hook = await addWebhook(formId, receiver.url, { secret, headers: { "X-Tenant": "acme" } });
      const partial = await respond(formId, { name: "Half" }, false);
      const { responseId } = await respond(formId, { name: "Ada", plan: "pro" });
      await receiver.waitFor(1);
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(receiver.received.length, 1, "partial responses push nothing");
      const [got] = receiver.received;
      assert.equal(got.headers["content-type"], "application/json");
      assert.equal(got.headers["x-tenant"], "acme");
      const expected = createHmac("sha256", secret).update(got.raw).digest("base64");
      assert.equal(got.headers["x-service-signature"], expected);
      const standard = new StandardWebhook(secret.slice("whsec_".length));
      assert.doesNotThrow(() => standard.verify(got.raw.toString("utf8"), got.headers as Record<string, string>));
      assert.equal(got.body.eventType, "FORM_RESPONSE");
      assert.equal(got.headers["webhook-id"], got.body.eventId);
      assert.equal(got.body.data.responseId, responseId);
      assert.notEqual(got.body.data.responseId, partial.responseId);
      assert.equal(got.body.data.formId, formId);
      assert.equal(got.body.data.formName, "Hooked");
      assert.ok(Date.parse(got.body.data.submittedAt));
      assert.deepEqual(got.body.data.fields, [
        { questionId: "name", type: "SHORT_TEXT", label: "Your name", value: "Ada" },
        { questionId: "plan", type: "MULTIPLE_CHOICE", label: "Plan", value: "pro", options: [{ id: "pro", text: "Pro" }] },
      ]);
      const [receipt] = await eventuallyPasses(() => receipts(hook.id), (r) => r[0]?.status === "succeeded");
      assert.deepEqual([receipt.attempts, receipt.submissionId, receipt.eventType, receipt.eventId], [1, responseId, "FORM_RESPONSE", got.body.eventId]);
      const attempts = await ada.api("GET", `/webhooks/${hook.id}/deliveries/${receipt.id}/attempts`);
      assert.equal(attempts.body.items[0].statusCode, 200);
      await receiver.close();
    });

    it("sends values a receiver can use without another call: option texts, file links, hidden and calculated fields; verified by svix, standardwebhooks and by hand", async () => {
      const receiver = await startReceiver();
      const created = await ada.api("POST", "/forms", {
        workspaceId: ada.workspace.id,
        name: "Usable",
        document: {
          blocks: [
            { id: "plan", key: "plan", type: "MULTIPLE_CHOICE", question: "Plan", options: [{ id: "free", text: "Free" }, { id: "pro", text: "Pro" }] },
            { id: "cv", key: "cv", type: "FILE", question: "Your CV" },
          ],
          hiddenFields: [{ name: "utm_source" }],
          calculatedFields: [{ name: "is_pro", type: "TEXT", expression: 'plan == "pro" ? "yes" : "no"' }],
        },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const formId = created.body.id as string;
      await sys.cli("form:publish", "--id", formId);
      // No secret given: one is generated, shown whole in this answer only.
      const hook = await ada.api("POST", "/webhooks", { formId, url: receiver.url });
      assert.equal(hook.status, 201);
      const secret = hook.body.secret as string;
      assert.match(secret, /^whsec_[A-Za-z0-9+/]{32}$/);
      assert.equal((await ada.api("GET", `/webhooks/${hook.body.id}`)).body.secret, `whsec_…${secret.slice(-4)}`);

      const bytes = randomBytes(2048);
      const form = new FormData();
      form.append("file", new Blob([bytes], { type: "application/pdf" }), "cv.pdf");
      const upload = await fetch(`${sys.url}/f/${formId}/uploads`, { method: "POST", body: form });
      assert.equal(upload.status, 200);
      const { uploadId } = (await upload.json()) as { uploadId: string };
      const res = await fetch(`${sys.url}/f/${formId}/responses?utm_source=newsletter`, {
        method: "POST",
        headers: { "content-type": "application/json", "cf-ipcountry": "DE" },
        body: JSON.stringify({ answers: { plan: "pro", cv: [uploadId] }, hidden: { utm_source: "newsletter" }, completed: true }),
      });
      assert.equal(res.status, 200, await res.clone().text());

      await receiver.waitFor(1);
      const [got] = receiver.received;
      const headers = got.headers as Record<string, string>;
      assert.doesNotThrow(() => new SvixWebhook(secret).verify(got.raw.toString("utf8"), headers), "svix verifies it");
      assert.doesNotThrow(() => new StandardWebhook(secret).verify(got.raw.toString("utf8"), headers), "standardwebhooks verifies it");
      const key = Buffer.from(secret.slice("whsec_".length), "base64");
      assert.ok(headers["webhook-signature"].split(" ").includes(`v1,${createHmac("sha256", key).update(`${headers["webhook-id"]}.${headers["webhook-timestamp"]}.`).update(got.raw).digest("base64")}`), "by hand: Standard Webhooks");
      assert.equal(headers["x-service-signature"], createHmac("sha256", secret).update(got.raw).digest("base64"), "by hand: X-Service-Signature");

      const [plan, cv] = got.body.data.fields;
      assert.deepEqual(plan, { questionId: "plan", type: "MULTIPLE_CHOICE", label: "Plan", value: "pro", options: [{ id: "free", text: "Free" }, { id: "pro", text: "Pro" }] });
      assert.deepEqual([cv.value, cv.files.map((f: { id: string; name: string; mimeType: string; size: number }) => [f.id, f.name, f.mimeType, f.size])], [[uploadId], [[uploadId, "cv.pdf", "application/pdf", 2048]]]);
      // Links name the configured public address (PUBLIC_URL, by default http://localhost:PORT), not the loopback one the test uses.
      assert.ok(cv.files[0].url.startsWith(`${loadConfig(sys.env).publicUrl}/files/${uploadId}?expires=`), cv.files[0].url);
      const file = await fetch(cv.files[0].url.replace(/^https?:\/\/[^/]+/, sys.url));
      assert.equal(file.status, 200);
      assert.deepEqual(Buffer.from(await file.arrayBuffer()), bytes, "the link serves the uploaded bytes");
      assert.deepEqual(got.body.data.hiddenFields, { utm_source: "newsletter" });
      assert.deepEqual(got.body.data.calculatedFields, { is_pro: "yes" });
      assert.equal(got.body.data.respondentCountry, "DE");

      await receiver.close();
    });

    it("fails 4xx at once, retries 5xx on schedule, keeps the eventId, and retries by hand", async () => {
      const rejecting = await startReceiver(() => ({ status: 410 }));
      const failing = await startReceiver(() => ({ status: 503 }));
      try {
        const formId = await publishedForm();
        const gone = await addWebhook(formId, rejecting.url);
        const flaky = await addWebhook(formId, failing.url);
        await respond(formId, { name: "Bob" });

        const [failed] = await eventuallyPasses(() => receipts(gone.id), (r) => r[0]?.status === "failed");
        assert.deepEqual([failed.attempts, failed.lastStatusCode], [1, 410]);
        // 410 Gone disables the webhook at once (delivery asks webhooks to, after recording the attempt: a read
        // between the two sees the receipt failed and the webhook still enabled); enabling it again clears the reason.
        const disabled = (await eventuallyPasses(() => ada.api("GET", `/webhooks/${gone.id}`), (r) => r.body.enabled === false)).body;
        assert.deepEqual([disabled.enabled, disabled.disabledReason], [false, "the receiver answered 410 Gone"]);
        assert.ok(Date.parse(disabled.disabledAt));
        const enabled = await ada.api("PATCH", `/webhooks/${gone.id}`, { enabled: true });
        assert.deepEqual([enabled.body.enabled, enabled.body.disabledReason, enabled.body.disabledAt], [true, null, null]);
        const [exhausted] = await eventuallyPasses(() => receipts(flaky.id), (r) => r[0]?.status === "failed", 30_000);
        assert.equal(exhausted.attempts, 3, "the first attempt and the two of the schedule");
        assert.equal(exhausted.lastStatusCode, 503);
        assert.equal(new Set(failing.received.map((r) => r.body.eventId)).size, 1);

        const retried = await ada.api("POST", `/webhooks/${flaky.id}/deliveries/${exhausted.id}/retry`);
        assert.equal(retried.status, 200);
        assert.equal(retried.body.attempts, 4);
        assert.equal(retried.body.status, "failed");
        assert.equal(failing.received.at(-1)!.body.eventId, exhausted.eventId);
        const attempts = await ada.api("GET", `/webhooks/${flaky.id}/deliveries/${exhausted.id}/attempts`);
        assert.deepEqual(attempts.body.items.map((a: { manual: boolean }) => a.manual), [false, false, false, true]);
      } finally {
        await Promise.all([rejecting.close(), failing.close()]);
      }
    });

    it("sends nothing to disabled webhooks and stops a deleted webhook's deliveries", async () => {
      let healthy = false;
      // The first attempt's 500 is answered only once the webhook is deleted, so its retry is due after that.
      let deletedNow = () => {};
      const deletion = new Promise<void>((resolve) => (deletedNow = resolve));
      const receiver = await startReceiver(() => (healthy ? { status: 200 } : { status: 500, heldUntil: deletion }));
      const formId = await publishedForm();
      const disabled = await addWebhook(formId, receiver.url, { enabled: false });
      const doomed = await addWebhook(formId, receiver.url.replace("/hook", "/doomed"));
      await respond(formId, { name: "Cy" });
      await receiver.waitFor(1);
      const deleted = await ada.api("DELETE", `/webhooks/${doomed.id}`);
      deletedNow();
      assert.equal(deleted.status, 204);
      healthy = true;
      await new Promise((r) => setTimeout(r, 2_500));
      assert.equal(receiver.received.length, 1, "no attempt after the webhook was deleted");
      assert.equal((await receipts(disabled.id)).length, 0);
      assert.equal((await ada.api("GET", `/webhooks/${doomed.id}/deliveries`)).status, 404);
      await receiver.close();
    });

    it("traces one response from the gateway through the RPCs and the bus to the receiver call", async () => {
      const receiver = await startReceiver();
      try {
        const formId = await publishedForm();
        await addWebhook(formId, receiver.url);
        // The test is the caller: its traceparent makes the gateway's span a child of ours.
        const traceId = randomBytes(16).toString("hex");
        const callerSpanId = randomBytes(8).toString("hex");
        await respond(formId, { name: "Traced" }, true, { traceparent: `00-${traceId}-${callerSpanId}-01` });
        await eventuallyPasses(async () => receiver.received.length, (n) => n === 1, 30_000, 50);
        // Our trace ids stay ours: the receiver gets no trace context.
        assert.equal(receiver.received[0].headers.traceparent, undefined);

        const find = (spans: CollectedSpan[], service: string, name: string) => spans.find((s) => s.service === `formsvc-${service}` && s.name === name);
        const expected: [string, string, number][] = [
          ["gateway", "POST /f/:formId/responses", spanKinds.server],
          ["gateway", "formsvc.submissions.v1.SubmissionsService/SaveResponse", spanKinds.client],
          ["submissions", "formsvc.submissions.v1.SubmissionsService/SaveResponse", spanKinds.server],
          ["submissions", "formsvc.forms.v1.FormsService/GetPublicForm", spanKinds.client],
          ["forms", "formsvc.forms.v1.FormsService/GetPublicForm", spanKinds.server],
          ...(bus === "kafka"
            ? ([
                ["submissions", "send formsvc.responses", spanKinds.producer],
                ["delivery", "process formsvc.responses", spanKinds.consumer],
              ] as [string, string, number][])
            : ([["delivery", "process submissions outbox", spanKinds.consumer]] as [string, string, number][])),
          ["webhooks", "formsvc.webhooks.v1.WebhooksService/ListEnabledWebhooks", spanKinds.server],
          ["delivery", "deliver webhook", spanKinds.internal],
          ["webhooks", "formsvc.webhooks.v1.WebhooksService/GetWebhookForDelivery", spanKinds.server],
          ["delivery", "POST", spanKinds.client],
        ];
        // Each process exports its spans in its own batches: wait for all of them, not the last one only.
        const spans = await eventuallyPasses(
          async () => collector.trace(traceId),
          (all) => expected.every(([service, name]) => find(all, service, name)),
          30_000,
          100,
        );
        for (const [service, name, kind] of expected) {
          const span = find(spans, service, name);
          assert.ok(span, `a ${service} span "${name}" in the trace; got ${spans.map((s) => `${s.service}:${s.name}`).join(", ")}`);
          assert.equal(span.kind, kind, `${service} ${name}`);
        }
        // One tree: every span hangs from another span of the trace, or from the caller's.
        const ids = new Set([callerSpanId, ...spans.map((s) => s.spanId)]);
        for (const s of spans) assert.ok(ids.has(s.parentSpanId), `${s.service}:${s.name} has its parent in the trace`);
        assert.equal(find(spans, "gateway", "POST /f/:formId/responses")!.parentSpanId, callerSpanId);
        // The chain from the receiver call back up to the gateway's request.
        const byId = new Map(spans.map((s) => [s.spanId, s]));
        const chain: string[] = [];
        for (let s: CollectedSpan | undefined = find(spans, "delivery", "POST"); s; s = byId.get(s.parentSpanId)) chain.push(`${s.service}:${s.name}`);
        assert.equal(chain.at(-1), "formsvc-gateway:POST /f/:formId/responses");
        const post = find(spans, "delivery", "POST")!;
        assert.equal(post.attributes["http.response.status_code"], 200);
        assert.equal(post.attributes["server.address"], "127.0.0.1");
        assert.equal(post.attributes["url.full"], undefined);
        assert.equal(find(spans, "gateway", "POST /f/:formId/responses")!.attributes["http.response.status_code"], 200);
      } finally {
        await receiver.close();
      }
    });

    it("delivers each event type to the webhooks subscribed to it and to no other, each payload as documented", async () => {
      const validator = await servedResponseValidator(sys.url);
      const [all, responses, forms, partials] = await Promise.all([startReceiver(), startReceiver(), startReceiver(), startReceiver()]);
      try {
        const created = await ada.api("POST", "/forms", {
          workspaceId: ada.workspace.id,
          name: "Paged",
          document: {
            blocks: [
              { id: "name", key: "name", type: "SHORT_TEXT", question: "Your name" },
              { id: "pb", type: "PAGE_BREAK" },
              { id: "age", key: "age", type: "NUMBER", question: "Age" },
            ],
          },
        });
        const formId = created.body.id as string;
        const everything = ["FORM_RESPONSE", "FORM_RESPONSE_PARTIAL", "FORM_PUBLISHED", "FORM_CLOSED", "FORM_DELETED"];
        await addWebhook(formId, all.url, { eventTypes: everything });
        const defaults = await addWebhook(formId, responses.url);
        assert.deepEqual((await ada.api("GET", `/webhooks/${defaults.id}`)).body.eventTypes, ["FORM_RESPONSE"]);
        await addWebhook(formId, forms.url, { eventTypes: ["FORM_PUBLISHED", "FORM_CLOSED", "FORM_DELETED"] });
        await addWebhook(formId, partials.url, { eventTypes: ["FORM_RESPONSE_PARTIAL"] });
        assert.equal((await ada.api("POST", "/webhooks", { formId, url: all.url, eventTypes: ["FORM_CHANGED"] })).status, 400);

        await sys.cli("form:publish", "--id", formId);
        const { responseId } = await respond(formId, { name: "Ada" }, false);
        const again = async (answers: object, completed: boolean) => {
          const res = await fetch(`${sys.url}/f/${formId}/responses`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ responseId, answers, completed }),
          });
          assert.equal(res.status, 200, await res.clone().text());
        };
        await again({ name: "Ada L." }, false);
        await again({ name: "Ada L.", age: 36 }, false);
        await again({ name: "Ada L.", age: 36 }, true);
        await sys.cli("form:close", "--id", formId);
        assert.equal((await ada.api("DELETE", `/forms/${formId}`)).status, 204);

        await all.waitFor(6);
        await forms.waitFor(3);
        await partials.waitFor(2);
        await responses.waitFor(1);
        await sleep(1_000);
        const types = (r: typeof all) => r.received.map((g) => g.body.eventType as string);
        assert.deepEqual(types(all).sort(), ["FORM_CLOSED", "FORM_DELETED", "FORM_PUBLISHED", "FORM_RESPONSE", "FORM_RESPONSE_PARTIAL", "FORM_RESPONSE_PARTIAL"]);
        assert.deepEqual(types(responses), ["FORM_RESPONSE"]);
        assert.deepEqual(types(forms), ["FORM_PUBLISHED", "FORM_CLOSED", "FORM_DELETED"]);
        assert.deepEqual(partials.received.map((g) => [g.body.eventType, g.body.data.page, g.body.data.responseId]), [
          ["FORM_RESPONSE_PARTIAL", 1, responseId],
          ["FORM_RESPONSE_PARTIAL", 2, responseId],
        ]);
        assert.deepEqual(forms.received.map((g) => [g.body.data.formId, g.body.data.status]), [
          [formId, "published"],
          [formId, "closed"],
          [formId, "closed"],
        ]);
        for (const got of all.received) assert.deepEqual(validator.checkWebhook(got.body.eventType, got.body), [], got.body.eventType);
        assert.equal(new Set(all.received.map((g) => g.body.eventId)).size, 6);
      } finally {
        await Promise.all([all, responses, forms, partials].map((r) => r.close()));
      }
    });

    it("retries a 429 no sooner than its Retry-After", async () => {
      const receiver = await startReceiver((_req, n) => (n === 1 ? { status: 429, headers: { "Retry-After": "2" } } : { status: 200 }));
      const formId = await publishedForm();
      const hook = await addWebhook(formId, receiver.url);
      await respond(formId, { name: "Limited" });
      const [receipt] = await eventuallyPasses(() => receipts(hook.id), (r) => r[0]?.status === "succeeded", 30_000);
      assert.equal(receipt.attempts, 2);
      const [first, second] = receiver.received;
      assert.equal(first.body.eventId, second.body.eventId);
      assert.ok(second.at - first.at >= 2_000, `the retry waited for Retry-After (2 s), not the 0.5 s step: ${second.at - first.at} ms`);
      await receiver.close();
    });

    it("disables a webhook whose deliveries have all failed for WEBHOOK_DISABLE_AFTER_FAILING_SECONDS, and PATCH enabled: true enables it", async () => {
      const receiver = await startReceiver(() => ({ status: 500 }));
      const formId = await publishedForm();
      const hook = await addWebhook(formId, receiver.url);
      await respond(formId, { name: "Dee" });
      await eventuallyPasses(() => receipts(hook.id), (r) => r[0]?.status === "failed", 30_000);
      assert.equal((await ada.api("GET", `/webhooks/${hook.id}`)).body.enabled, true, "failing for less than the setting: still enabled");
      // The next event's first failed attempt comes after the setting has passed since the first failure.
      await sleep(receiver.received[0].at + disableAfterFailingSeconds * 1000 + 500 - Date.now());
      await respond(formId, { name: "Eve" });
      const disabled = await eventuallyPasses(
        async () => (await ada.api("GET", `/webhooks/${hook.id}`)).body,
        (w) => w.enabled === false,
        30_000,
      );
      assert.equal(disabled.disabledReason, `every delivery attempt failed for ${disableAfterFailingSeconds} seconds`);
      assert.equal((await ada.api("POST", `/webhooks/${hook.id}/test`)).status, 409, "a disabled webhook takes no test event");
      const enabled = await ada.api("PATCH", `/webhooks/${hook.id}`, { enabled: true });
      assert.deepEqual([enabled.body.enabled, enabled.body.disabledReason], [true, null]);
      await receiver.close();
    });

    it("recovers exactly the failed deliveries of a window, with their eventIds, and filters receipts by status", async () => {
      let healthy = false;
      const receiver = await startReceiver(() => ({ status: healthy ? 200 : 400 }));
      const formId = await publishedForm();
      const hook = await addWebhook(formId, receiver.url);
      const allFailed = (n: number) => eventuallyPasses(() => receipts(hook.id), (r) => r.length === n && r.every((d) => d.status === "failed"), 30_000);
      await respond(formId, { name: "Before" });
      await allFailed(1);
      const since = new Date().toISOString();
      await respond(formId, { name: "In 1" });
      await respond(formId, { name: "In 2" });
      const inWindow = (await allFailed(3)).slice(0, 2).map((d) => d.eventId);
      const until = new Date().toISOString();
      await respond(formId, { name: "After" });
      await allFailed(4);
      const sent = receiver.received.length;

      assert.equal((await ada.api("POST", `/webhooks/${hook.id}/recover`, {})).status, 400);
      assert.equal((await ada.api("POST", `/webhooks/${hook.id}/recover`, { since: until, until: since })).status, 400);
      healthy = true;
      const recovered = await ada.api("POST", `/webhooks/${hook.id}/recover`, { since, until });
      assert.deepEqual([recovered.status, recovered.body], [200, { recovered: 2 }]);
      const succeeded = await eventuallyPasses(() => receipts(hook.id, "?status=succeeded"), (r) => r.length === 2, 30_000);
      assert.deepEqual(succeeded.map((d) => d.eventId).sort(), [...inWindow].sort());
      assert.deepEqual(receiver.received.slice(sent).map((r) => r.body.eventId).sort(), [...inWindow].sort(), "sent again with the same eventIds");
      const failed = await receipts(hook.id, "?status=failed");
      assert.equal(failed.length, 2);
      assert.ok(failed.every((d) => !inWindow.includes(d.eventId)));
      assert.equal((await ada.api("GET", `/webhooks/${hook.id}/deliveries?status=lost`)).status, 400);
      await receiver.close();
    });

    it("sends a signed test event through the public API, recorded with trigger test", async () => {
      const receiver = await startReceiver();
      const formId = await publishedForm();
      const created = await ada.api("POST", "/webhooks", { formId, url: receiver.url });
      const test = await ada.api("POST", `/webhooks/${created.body.id}/test`);
      assert.equal(test.status, 200, JSON.stringify(test.body));
      assert.deepEqual([test.body.trigger, test.body.eventType, test.body.status, test.body.attempts], ["test", "FORM_RESPONSE", "succeeded", 1]);
      const [got] = receiver.received;
      assert.equal(got.body.test, true);
      assert.equal(got.body.eventId, test.body.eventId);
      assert.doesNotThrow(() => new StandardWebhook(created.body.secret).verify(got.raw.toString("utf8"), got.headers as Record<string, string>));
      const [listed] = await receipts(created.body.id);
      assert.deepEqual([listed.id, listed.trigger], [test.body.id, "test"]);
      // Of another type the webhook receives, on request; not of one it does not.
      await ada.api("PATCH", `/webhooks/${created.body.id}`, { eventTypes: ["FORM_RESPONSE", "FORM_CLOSED"] });
      const closed = await ada.api("POST", `/webhooks/${created.body.id}/test`, { eventType: "FORM_CLOSED" });
      assert.deepEqual([closed.status, closed.body.eventType], [200, "FORM_CLOSED"]);
      assert.deepEqual([receiver.received[1].body.eventType, receiver.received[1].body.test, receiver.received[1].body.data.formId], ["FORM_CLOSED", true, formId]);
      assert.equal((await ada.api("POST", `/webhooks/${created.body.id}/test`, { eventType: "FORM_DELETED" })).status, 400);
      await receiver.close();
    });

    it("rotates a secret: both verify through standardwebhooks during the overlap, only the new one after it", async () => {
      const receiver = await startReceiver();
      const formId = await publishedForm();
      const created = await ada.api("POST", "/webhooks", { formId, url: receiver.url });
      const oldSecret = created.body.secret as string;
      const rotated = await ada.api("POST", `/webhooks/${created.body.id}/rotate-secret`);
      assert.equal(rotated.status, 200);
      const newSecret = rotated.body.secret as string;
      assert.match(newSecret, /^whsec_[A-Za-z0-9+/]{32}$/);
      assert.notEqual(newSecret, oldSecret);
      const expiresAt = Date.parse(rotated.body.previousSecretExpiresAt);
      assert.equal((await ada.api("GET", `/webhooks/${created.body.id}`)).body.secret, `whsec_…${newSecret.slice(-4)}`);
      const verifies = (secret: string, got: (typeof receiver.received)[number]) => {
        try {
          new StandardWebhook(secret).verify(got.raw.toString("utf8"), got.headers as Record<string, string>);
          return true;
        } catch {
          return false;
        }
      };

      await respond(formId, { name: "During" });
      await receiver.waitFor(1);
      const during = receiver.received[0];
      assert.ok(during.at < expiresAt, "sent within the overlap");
      assert.equal(String(during.headers["webhook-signature"]).split(" ").length, 2);
      assert.deepEqual([verifies(newSecret, during), verifies(oldSecret, during)], [true, true]);
      assert.equal(during.headers["x-service-signature"], createHmac("sha256", newSecret).update(during.raw).digest("base64"));

      await sleep(expiresAt + 200 - Date.now());
      await respond(formId, { name: "After" });
      await receiver.waitFor(2);
      const afterwards = receiver.received[1];
      assert.deepEqual([verifies(newSecret, afterwards), verifies(oldSecret, afterwards)], [true, false]);
      assert.equal((await ada.api("GET", `/webhooks/${created.body.id}`)).body.previousSecretExpiresAt, null);
      await receiver.close();
    });

    it("leaves nothing waiting on the bus once the events are taken: the outbox backlog reads 0", async () => {
      const receiver = await startReceiver();
      const formId = await publishedForm();
      await addWebhook(formId, receiver.url);
      await respond(formId, { name: "Ada" });
      await receiver.waitFor(1);
      const orm = await openDatabase({ databaseUrl: sys.databaseUrl, schema: "submissions", entities: submissionsEntities, migrations: submissionsMigrations });
      try {
        // With Kafka the relay marks what it published; on the embedded bus delivery acknowledges what it
        // stored to submissions every few seconds (AcknowledgeCompletions).
        const waiting = await eventuallyPasses(() => outboxBacklog(orm, bus === "kafka" ? "kafka" : "embedded"), (n) => n === 0, 30_000, 250);
        assert.equal(waiting, 0);
      } finally {
        await orm.close(true);
        await receiver.close();
      }
    });

    it("validates webhooks and masks other people's", async () => {
      const formId = await publishedForm();
      assert.equal((await ada.api("GET", "/webhooks")).status, 400);
      for (const body of [
        { formId, url: "ftp://example.com/x" },
        { formId, url: "https://user:pw@example.com/x" },
        { formId, url: "https://example.com/x", headers: { "X-Service-Signature": "forged" } },
        { formId, url: "https://example.com/x", headers: { "Content-Type": "text/plain" } },
        { formId, url: "https://example.com/x", enabled: "yes" },
      ]) {
        const res = await ada.api("POST", "/webhooks", body);
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(typeof res.body.error, "string");
      }
      const hook = await addWebhook(formId, "https://example.com/hook", { secret: "s" });
      const patched = await ada.api("PATCH", `/webhooks/${hook.id}`, { enabled: false, headers: { "X-A": "1" }, secret: null });
      assert.deepEqual([patched.status, patched.body.enabled, patched.body.headers, patched.body.secret], [200, false, { "X-A": "1" }, null]);
      const listed = await ada.api("GET", `/webhooks?formId=${formId}`);
      assert.deepEqual(listed.body.items.map((w: { id: string }) => w.id), [hook.id]);
      for (const [method, path, body] of [
        ["GET", `/webhooks?formId=${formId}`],
        ["POST", "/webhooks", { formId, url: "https://example.com/x" }],
        ["GET", `/webhooks/${hook.id}`],
        ["PATCH", `/webhooks/${hook.id}`, { enabled: true }],
        ["DELETE", `/webhooks/${hook.id}`],
        ["GET", `/webhooks/${hook.id}/deliveries`],
        ["POST", `/webhooks/${hook.id}/deliveries/nope/retry`],
        ["POST", `/webhooks/${hook.id}/test`],
        ["POST", `/webhooks/${hook.id}/recover`, { since: new Date().toISOString() }],
        ["POST", `/webhooks/${hook.id}/rotate-secret`],
      ] as [string, string, object?][]) {
        const res = await mallory.api(method, path, body);
        assert.equal(res.status, 404, `${method} ${path}`);
      }
      assert.equal((await ada.api("GET", `/webhooks/${hook.id}`)).body.enabled, false);
    });
  });
}
