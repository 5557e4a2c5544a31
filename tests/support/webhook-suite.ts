import assert from "node:assert/strict";
import { createHmac, randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { deliverySchema, envelopeOf, webhookSchema } from "../../gateway/src/api/schemas.ts";
import { spanKinds, startOtlpCollector, type CollectedSpan } from "./otlp-collector.ts";
import { eventually, startReceiver } from "./receiver.ts";
import { createUserWithKey, startTestSystem, type TestSystem } from "./system.ts";

/**
 * Webhooks end to end, as an integrator sees them: real receivers on loopback, responses sent
 * through the public endpoint, receipts read over /api/v1. `busEnv` chooses the event bus. Tracing is
 * on (exported to a real OTLP/HTTP receiver), so this suite also runs the traced code paths.
 */
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
      WEBHOOK_RETRY_SCHEDULE: "0.5,0.5",
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

  const receipts = async (webhookId: string) => {
    const res = await ada.api("GET", `/webhooks/${webhookId}/deliveries`);
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
        { questionId: "plan", type: "MULTIPLE_CHOICE", label: "Plan", value: "pro" },
      ]);
      const [receipt] = await eventually(() => receipts(hook.id), (r) => r[0]?.status === "succeeded");
      assert.deepEqual([receipt.attempts, receipt.submissionId, receipt.eventType, receipt.eventId], [1, responseId, "FORM_RESPONSE", got.body.eventId]);
      const attempts = await ada.api("GET", `/webhooks/${hook.id}/deliveries/${receipt.id}/attempts`);
      assert.equal(attempts.body.items[0].statusCode, 200);
      await receiver.close();
    });

    it("fails 4xx at once, retries 5xx on schedule, keeps the eventId, and retries by hand", async () => {
      const rejecting = await startReceiver(() => ({ status: 410 }));
      const failing = await startReceiver(() => ({ status: 503 }));
      const formId = await publishedForm();
      const gone = await addWebhook(formId, rejecting.url);
      const flaky = await addWebhook(formId, failing.url);
      await respond(formId, { name: "Bob" });

      const [failed] = await eventually(() => receipts(gone.id), (r) => r[0]?.status === "failed");
      assert.deepEqual([failed.attempts, failed.lastStatusCode], [1, 410]);
      const [exhausted] = await eventually(() => receipts(flaky.id), (r) => r[0]?.status === "failed", 30_000);
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
      await Promise.all([rejecting.close(), failing.close()]);
    });

    it("sends nothing to disabled webhooks and stops a deleted webhook's deliveries", async () => {
      let healthy = false;
      const receiver = await startReceiver(() => ({ status: healthy ? 200 : 500 }));
      const formId = await publishedForm();
      const disabled = await addWebhook(formId, receiver.url, { enabled: false });
      const doomed = await addWebhook(formId, receiver.url.replace("/hook", "/doomed"));
      await respond(formId, { name: "Cy" });
      await receiver.waitFor(1);
      const deleted = await ada.api("DELETE", `/webhooks/${doomed.id}`);
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
        await eventually(async () => receiver.received.length, (n) => n === 1, 30_000, 50);
        // Our trace ids stay ours: the receiver gets no trace context.
        assert.equal(receiver.received[0].headers.traceparent, undefined);

        const find = (spans: CollectedSpan[], service: string, name: string) => spans.find((s) => s.service === `formsvc-${service}` && s.name === name);
        const spans = await eventually(
          async () => collector.trace(traceId),
          (all) => Boolean(find(all, "delivery", "POST")),
          30_000,
          100,
        );
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
      ] as [string, string, object?][]) {
        const res = await mallory.api(method, path, body);
        assert.equal(res.status, 404, `${method} ${path}`);
      }
      assert.equal((await ada.api("GET", `/webhooks/${hook.id}`)).body.enabled, false);
    });
  });
}
