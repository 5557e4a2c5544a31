// The n8n node package (integrations/n8n) against the whole running system, its nodes called as n8n calls
// them (webhookMethods on activation and deactivation, webhook() per request, execute()) through a small
// stand-in of n8n's execution context: real HTTP to the system and to a local catch URL. The cases a real
// server does not reach easily (a forged signature, a webhook deleted meanwhile, paging) are here; the package
// inside the real n8n 2.x server is tests/n8n-server.test.ts.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { repoRoot } from "@formsvc/launcher/system.ts";
import { startReceiver, type Received } from "./support/receiver.ts";
import { createPublishedForm, createUserWithKey, startTestSystem, type TestSystem } from "./support/system.ts";

const require = createRequire(join(repoRoot, "integrations", "n8n", "package.json"));
const { FormServiceTrigger } = require("./nodes/FormServiceTrigger.node.js");
const { FormService } = require("./nodes/FormService.node.js");
const { FormServiceApi } = require("./credentials/FormServiceApi.credentials.js");

describe("the n8n nodes against the running system", () => {
  let sys: TestSystem;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let key: string;
  let formId: string;
  const trigger = new FormServiceTrigger();
  const action = new FormService();

  /** What n8n gives a node: its parameters, credentials, static data, webhook URL and request helper. */
  function context(parameters: Record<string, unknown>, staticData: Record<string, unknown> = {}, request?: Partial<Received> & { rawBody?: Buffer }) {
    const answer = { code: 200, body: undefined as unknown };
    return {
      answer,
      getCredentials: async () => ({ baseUrl: `${sys.url}/`, apiKey: key }),
      getNodeParameter: (name: string) => parameters[name],
      getWorkflowStaticData: () => staticData,
      getNodeWebhookUrl: () => receiver.url,
      getInputData: () => [{ json: {} }],
      getRequestObject: () => request,
      getResponseObject: () => ({
        status(code: number) {
          answer.code = code;
          return this;
        },
        json(body: unknown) {
          answer.body = body;
        },
      }),
      helpers: {
        // As the credential's `authenticate` says: the key as a bearer token; n8n's errors carry httpCode.
        async httpRequestWithAuthentication(type: string, options: { method: string; url: string; qs?: Record<string, unknown>; body?: unknown }) {
          assert.equal(type, "formServiceApi");
          const url = new URL(options.url);
          for (const [name, value] of Object.entries(options.qs ?? {})) url.searchParams.set(name, String(value));
          const res = await fetch(url, {
            method: options.method,
            headers: { authorization: `Bearer ${key}`, ...(options.body === undefined ? {} : { "content-type": "application/json" }) },
            body: options.body === undefined ? undefined : JSON.stringify(options.body),
          });
          const text = await res.text();
          if (!res.ok) throw Object.assign(new Error(text), { httpCode: String(res.status) });
          return text ? JSON.parse(text) : undefined;
        },
      },
    };
  }
  const webhooksOfForm = async () =>
    ((await (await fetch(`${sys.url}/api/v1/webhooks?formId=${formId}`, { headers: { authorization: `Bearer ${key}` } })).json()) as { items: { id: string; subscriber: string }[] }).items;
  async function respond(answers: object) {
    const res = await fetch(`${sys.url}/f/${formId}/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ answers, completed: true }) });
    return ((await res.json()) as { responseId: string }).responseId;
  }

  before(async () => {
    receiver = await startReceiver();
    sys = await startTestSystem("n8n_nodes", { WEBHOOK_ALLOWED_CIDRS: "127.0.0.1/32" });
    const user = await createUserWithKey(sys, "n8n@example.com");
    key = user.key;
    formId = await createPublishedForm(sys, user, "Automated", [
      { id: "name", key: "name", type: "SHORT_TEXT", question: "Your name" },
      { id: "plan", key: "plan", type: "MULTIPLE_CHOICE", question: "Plan", options: [{ id: "free", text: "Free" }, { id: "pro", text: "Pro" }] },
    ]);
  });
  after(async () => {
    await sys?.stop();
    await receiver?.close();
  });

  it("makes items as the Zapier app does: one file, copied into each package published alone", () => {
    const read = (path: string) => readFileSync(join(repoRoot, "integrations", path), "utf8");
    assert.equal(read("n8n/lib/response-items.js"), read("zapier/items.js"));
  });

  it("describes a credential tested on /users/me with the key as a bearer token", () => {
    const credential = new FormServiceApi();
    assert.equal(credential.test.request.url, "/users/me");
    assert.equal(credential.authenticate.properties.headers.Authorization, "=Bearer {{$credentials.apiKey}}");
  });

  it("subscribes on activation (once, however often), runs the workflow on a signed response with labels and option texts, and unsubscribes", async () => {
    const parameters = { formId, events: ["FORM_RESPONSE"] };
    const forms = await trigger.methods.loadOptions.getForms.call(context(parameters));
    assert.ok(forms.some((f: { name: string; value: string }) => f.value === formId && f.name === "Automated"));

    const staticData: Record<string, unknown> = {};
    const hooks = trigger.webhookMethods.default;
    assert.equal(await hooks.checkExists.call(context(parameters, staticData)), false);
    assert.equal(await hooks.create.call(context(parameters, staticData)), true);
    assert.equal(await hooks.checkExists.call(context(parameters, staticData)), true);
    // Activated again elsewhere (static data lost): the same webhook, with a secret it can verify with.
    const again: Record<string, unknown> = {};
    await hooks.create.call(context(parameters, again));
    assert.equal(again.webhookId, staticData.webhookId);
    assert.match(String(again.secret), /^whsec_[A-Za-z0-9+/]+=*$/);
    assert.deepEqual((await webhooksOfForm()).map((w) => [w.id, w.subscriber]), [[staticData.webhookId, "n8n"]]);

    const responseId = await respond({ name: "Ada", plan: "pro" });
    await receiver.waitFor(1);
    const received = receiver.received[0];
    const run = await trigger.webhook.call(context(parameters, again, { ...received, rawBody: received.raw }));
    const [[item]] = run.workflowData;
    assert.deepEqual([item.json.responseId, item.json.answers], [responseId, { "Your name": "Ada", Plan: "Pro" }]);
    // A body that is not what was signed runs nothing.
    const forged = context(parameters, again, { ...received, rawBody: Buffer.from(received.raw.toString("utf8").replace("Ada", "Eve")) });
    assert.deepEqual(await trigger.webhook.call(forged), { noWebhookResponse: true });
    assert.deepEqual([forged.answer.code, forged.answer.body], [401, { error: "invalid signature" }]);

    assert.equal(await hooks.delete.call(context(parameters, again)), true);
    assert.deepEqual(await webhooksOfForm(), []);
    assert.equal(await hooks.delete.call(context(parameters, staticData)), true, "deleted already is deactivated too");
    assert.equal(await hooks.checkExists.call(context(parameters, { webhookId: staticData.webhookId })), false);
  });

  it("lists forms and responses, a limit or all of them, and gets one response, answers by label", async () => {
    const second = await respond({ name: "Grace", plan: "free" });
    const forms = await action.execute.call(context({ resource: "form", operation: "getAll", returnAll: true }));
    assert.ok(forms[0].some((f: { json: { id: string } }) => f.json.id === formId));
    const all = await action.execute.call(context({ resource: "response", operation: "getAll", formId, filter: "completed", returnAll: true }));
    assert.deepEqual(all[0].map((r: { json: { answers: object } }) => r.json.answers), [{ "Your name": "Grace", Plan: "Free" }, { "Your name": "Ada", Plan: "Pro" }]);
    const one = await action.execute.call(context({ resource: "response", operation: "getAll", formId, filter: "completed", returnAll: false, limit: 1 }));
    assert.deepEqual(one[0].map((r: { json: { id: string } }) => r.json.id), [second]);
    const got = await action.execute.call(context({ resource: "response", operation: "get", formId, responseId: second }));
    assert.equal(got[0][0].json.answers.Plan, "Free");
  });
});
