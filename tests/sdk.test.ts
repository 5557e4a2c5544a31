// The TypeScript SDK against the whole running system: every /api/v1 operation (and the hosted-form
// endpoints) through the generated types, with no cast, and every answer checked against the served document.
import assert from "node:assert/strict";
import { eventually } from "@formsvc/platform/testing/eventually.ts";
import { after, before, describe, it } from "node:test";
import type { Middleware } from "openapi-fetch";
import { createFormsClient, createHostedFormsClient, verifyWebhook } from "@formsvc/sdk";
import { offlineApiRoutes } from "../gateway/src/developers/reference-document.ts";
import { servedResponseValidator, type ResponseValidator } from "./support/openapi-validator.ts";
import { startReceiver } from "./support/receiver.ts";
import { createUserWithKey, startTestSystem, type TestSystem } from "./support/system.ts";

describe("the SDK against the running system", () => {
  let sys: TestSystem;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let validator: ResponseValidator;
  const violations: string[] = [];
  /** operationIds the SDK called, by method and path template. */
  const called = new Set<string>();

  before(async () => {
    receiver = await startReceiver();
    sys = await startTestSystem("sdk", { WEBHOOK_ALLOW_PRIVATE_URLS: "true", WEBHOOK_RETRY_SCHEDULE: "0.5" });
    validator = await servedResponseValidator(sys.url);
  });
  after(async () => {
    await sys?.stop();
    await receiver?.close();
  });

  /** Checks every answer the SDK receives against the document, by operation and status. */
  const checkAnswers: Middleware = {
    async onResponse({ request, response, schemaPath }) {
      called.add(`${request.method.toLowerCase()} ${schemaPath}`);
      const text = await response.clone().text();
      const body: unknown = text ? JSON.parse(text) : undefined;
      violations.push(...validator.check(request.method, schemaPath, response.status, body, response.headers.get("content-type")));
    },
  };

  it("drives every operation with typed requests and answers", async () => {
    const { workspace, key } = await createUserWithKey(sys, "sdk@example.com");
    const client = createFormsClient({ baseUrl: sys.url, apiKey: key });
    const hosted = createHostedFormsClient({ baseUrl: sys.url });
    client.use(checkAnswers);
    hosted.use(checkAnswers);

    const me = await client.GET("/users/me");
    assert.equal(me.data?.email, "sdk@example.com");
    const workspaces = await client.GET("/workspaces", { params: { query: { limit: 10 } } });
    assert.equal(workspaces.data?.items[0]?.id, workspace.id);
    const ws = await client.GET("/workspaces/{id}", { params: { path: { id: workspace.id } } });
    assert.equal(ws.data?.entitlements.removeBranding, false);

    const created = await client.POST("/forms", {
      body: {
        workspaceId: workspace.id,
        name: "SDK sign-up",
        document: {
          title: "SDK sign-up",
          blocks: [
            { type: "SHORT_TEXT", key: "name", question: "Your name", required: true },
            { type: "NUMBER", key: "guests", question: "Guests", min: 0, max: 10 },
            { type: "CHECKBOXES", key: "days", question: "Days", options: [{ id: "mon", text: "Monday" }, { id: "tue", text: "Tuesday" }] },
            { type: "FILE", key: "cv", question: "Your CV" },
          ],
          hiddenFields: [{ name: "utm_source" }],
        },
      },
    });
    assert.equal(created.response.status, 201);
    const form = created.data;
    assert.ok(form);
    // The document comes back typed: blocks narrow by `type`.
    const numberBlock = form.document.blocks.find((block) => block.type === "NUMBER");
    assert.equal(numberBlock?.type === "NUMBER" ? numberBlock.max : undefined, 10);
    assert.equal(form.settings.submitLabel, "Submit");

    assert.equal((await client.GET("/forms", { params: { query: { workspaceId: workspace.id } } })).data?.items.length, 1);
    assert.equal((await client.GET("/forms/{id}", { params: { path: { id: form.id } } })).data?.status, "draft");
    const updated = await client.PATCH("/forms/{id}", { params: { path: { id: form.id } }, body: { settings: { submitLabel: "Register" } } });
    assert.equal(updated.data?.settings.submitLabel, "Register");
    const questions = await client.GET("/forms/{id}/questions", { params: { path: { id: form.id } } });
    assert.deepEqual(
      questions.data?.items.map((q) => q.type),
      ["SHORT_TEXT", "NUMBER", "CHECKBOXES", "FILE", "HIDDEN_FIELDS", "RESPONDENT_COUNTRY"],
    );
    await sys.cli("form:publish", "--id", form.id);
    // Before any response, one sample body made from the form, marked as a test.
    const samples = await client.GET("/forms/{id}/sample-events", { params: { path: { id: form.id }, query: { limit: 1 } } });
    assert.equal(samples.data?.items[0]?.test, true);

    const hook = await client.POST("/webhooks", {
      body: { formId: form.id, url: receiver.url, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", headers: { "X-Tenant": "acme" } },
    });
    assert.equal(hook.response.status, 201);
    const webhook = hook.data;
    assert.ok(webhook);
    assert.equal((await client.GET("/webhooks", { params: { query: { formId: form.id } } })).data?.items[0]?.id, webhook.id);
    assert.equal((await client.GET("/webhooks/{id}", { params: { path: { id: webhook.id } } })).data?.url, receiver.url);
    const renamed = await client.PATCH("/webhooks/{id}", { params: { path: { id: webhook.id } }, body: { headers: { "X-Tenant": "acme-2" } } });
    assert.deepEqual(renamed.data?.headers, { "X-Tenant": "acme-2" });

    // A respondent through the public endpoints: the definition, an upload, the answers.
    const definition = await hosted.GET("/f/{formId}/definition", { params: { path: { formId: form.id } } });
    assert.equal(definition.data?.version, form.version);
    const upload = await hosted.POST("/f/{formId}/uploads", {
      params: { path: { formId: form.id } },
      body: { file: "Ada Lovelace, analyst" },
      bodySerializer: (body) => {
        const parts = new FormData();
        parts.append("file", new Blob([body.file], { type: "text/plain" }), "cv.txt");
        return parts;
      },
    });
    assert.equal(upload.data?.name, "cv.txt");
    const uploadId = upload.data?.uploadId ?? "";
    const saved = await hosted.POST("/f/{formId}/responses", {
      params: { path: { formId: form.id } },
      body: { answers: { name: "Ada", guests: 2, days: ["mon", "tue"], cv: [uploadId] }, hidden: { utm_source: "sdk" }, completed: true },
    });
    assert.equal(saved.data?.completed, true);
    const responseId = saved.data?.responseId ?? "";

    const submissions = await client.GET("/forms/{id}/submissions", { params: { path: { id: form.id }, query: { filter: "completed" } } });
    assert.equal(submissions.data?.items.length, 1);
    // Insights count as the gateway sends them on (once a second): the completion arrives.
    const insights = await eventually(async () => {
      const read = await client.GET("/forms/{id}/insights", { params: { path: { id: form.id } } });
      return read.data?.completions === 1 ? read.data : undefined;
    });
    assert.equal(insights.views, 0, "a response posted by a program is no view of the page");
    // Single-use links: minted with their tokens, listed without, one withdrawn.
    const minted = await client.POST("/forms/{id}/links", { params: { path: { id: form.id } }, body: { count: 2 } });
    assert.equal(minted.data?.items.length, 2);
    assert.match(minted.data?.items[0]?.url ?? "", /\?t=/);
    const linkList = await client.GET("/forms/{id}/links", { params: { path: { id: form.id } } });
    assert.equal(linkList.data?.items.length, 2);
    const revoked = await client.POST("/forms/{id}/links/{linkId}/revoke", { params: { path: { id: form.id, linkId: minted.data?.items[0]?.id ?? "" } } });
    assert.equal(revoked.response.status, 200);
    const submission = await client.GET("/forms/{id}/submissions/{sid}", { params: { path: { id: form.id, sid: responseId } } });
    // Answers narrow by type: numbers are numbers (null: skipped by logic), files come with links.
    const guests = submission.data?.answers.guests;
    assert.equal(guests?.type === "NUMBER" && guests.value !== null ? guests.value + 1 : undefined, 3);
    const cv = submission.data?.answers.cv;
    assert.match(cv?.type === "FILE" ? (cv.files[0]?.url ?? "") : "", /\/files\//);

    // The webhook arrives signed; the SDK verifies both signatures and types the payload.
    await receiver.waitFor(1);
    const pushed = receiver.received[0];
    assert.ok(pushed);
    const payload = verifyWebhook(pushed.raw, pushed.headers, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    assert.equal(payload.data.responseId, responseId);
    assert.deepEqual(payload.data.hiddenFields, { utm_source: "sdk" });
    violations.push(...validator.checkWebhook("FORM_RESPONSE", payload));
    assert.throws(() => verifyWebhook(pushed.raw, pushed.headers, "whsec_other"));

    // The receiver answers before delivery records the attempt: read the attempts once it is recorded.
    const delivery = await eventually(async () => {
      const read = await client.GET("/webhooks/{id}/deliveries", { params: { path: { id: webhook.id } } });
      return read.data?.items[0]?.status === "succeeded" ? read.data.items[0] : undefined;
    }, 10_000, "the delivery recorded as succeeded");
    const attempts = await client.GET("/webhooks/{id}/deliveries/{did}/attempts", { params: { path: { id: webhook.id, did: delivery.id } } });
    assert.ok((attempts.data?.items.length ?? 0) >= 1);
    const retried = await client.POST("/webhooks/{id}/deliveries/{did}/retry", { params: { path: { id: webhook.id, did: delivery.id } } });
    assert.equal(retried.data?.eventId, delivery.eventId);
    // The webhook's own actions: a test event, recovering failed deliveries (none failed), a new secret.
    const tested = await client.POST("/webhooks/{id}/test", { params: { path: { id: webhook.id } }, body: {} });
    assert.deepEqual([tested.data?.trigger, tested.data?.eventType], ["test", "FORM_RESPONSE"]);
    const recovered = await client.POST("/webhooks/{id}/recover", { params: { path: { id: webhook.id } }, body: { since: "2026-01-01T00:00:00Z" } });
    assert.equal(recovered.data?.recovered, 0);
    const rotated = await client.POST("/webhooks/{id}/rotate-secret", { params: { path: { id: webhook.id } } });
    assert.match(rotated.data?.secret ?? "", /^whsec_/);
    assert.ok(rotated.data?.previousSecretExpiresAt);

    // Errors are typed too, and documented.
    const missing = await client.GET("/forms/{id}", { params: { path: { id: "nope" } } });
    assert.equal(missing.response.status, 404);
    assert.equal(typeof missing.error?.error, "string");
    const invalid = await client.GET("/forms", { params: { query: { limit: 100_000 } } });
    assert.equal(invalid.response.status, 400);

    assert.equal((await client.DELETE("/forms/{id}/submissions/{sid}", { params: { path: { id: form.id, sid: responseId } } })).response.status, 204);
    assert.equal((await client.DELETE("/webhooks/{id}", { params: { path: { id: webhook.id } } })).response.status, 204);
    assert.equal((await client.DELETE("/forms/{id}", { params: { path: { id: form.id } } })).response.status, 204);

    // The workspace's audit log holds what was just done with the key (recorded as each answer went out).
    const trashed = await eventually(async () => {
      const log = await client.GET("/workspaces/{id}/audit-events", { params: { path: { id: workspace.id }, query: { action: "form.*", limit: 100 } } });
      return log.data?.items.find((event) => event.action === "form.trash");
    });
    assert.deepEqual([trashed.target, trashed.actor.type], [{ type: "form", id: form.id }, "api_key"]);
  });

  it("called every operation of the route table, and every answer matched the document", () => {
    const routes = offlineApiRoutes(sys.url);
    const apiOperations = [...called].filter((operation) => !operation.includes(" /f/"));
    assert.equal(apiOperations.length, routes.length, `called ${apiOperations.length} of ${routes.length} operations`);
    for (const route of routes) assert.ok(called.has(`${route.method} ${route.path.replace(/:(\w+)/g, "{$1}")}`), `${route.operationId} was not called`);
    console.log(`validated ${validator.counts.responses} responses of ${validator.counts.operations} operations: ${violations.length} violations`);
    assert.deepEqual(violations, []);
  });
});
