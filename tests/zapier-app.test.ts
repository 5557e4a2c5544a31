// The Zapier app (integrations/zapier) run by zapier-platform-core's own test harness (createAppTester)
// against the whole running system: the connection test, the form picker, the instant trigger's subscribe,
// a real response delivered to a local catch URL, performList's samples, the polling fallback, the
// search and the action, and unsubscribing. The app has its own package.json (zapier-platform-core and
// its ~75 packages stay out of the root's `npm ci`): this test installs them from its lockfile with
// `npm ci` the first time (node_modules absent).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { repoRoot } from "@formsvc/launcher/system.ts";
import { startReceiver } from "./support/receiver.ts";
import { createUserWithKey, startTestSystem, type TestSystem } from "./support/system.ts";

const appDir = join(repoRoot, "integrations", "zapier");
if (!existsSync(join(appDir, "node_modules", "zapier-platform-core"))) {
  execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: appDir, stdio: "inherit" });
}
const require = createRequire(join(appDir, "index.js"));
// zapier-platform-core knows a test run by NODE_ENV when it loads (no memory report on stdout per call);
// the system this test starts is not told.
process.env.NODE_ENV = "test";
const zapier = require("zapier-platform-core");
delete process.env.NODE_ENV;
const App = require("./index.js");
const appTester = zapier.createAppTester(App);

describe("the Zapier app against the running system", () => {
  let sys: TestSystem;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let authData: { baseUrl: string; apiKey: string };
  let formId: string;
  let workspaceId: string;

  before(async () => {
    receiver = await startReceiver();
    // Zapier's hooks are public; here the catch URL is on loopback, let in by the allow-list alone.
    sys = await startTestSystem("zapier_app", { WEBHOOK_ALLOWED_CIDRS: "127.0.0.1/32" });
    const user = await createUserWithKey(sys, "zap@example.com");
    workspaceId = user.workspace.id;
    authData = { baseUrl: `${sys.url}/`, apiKey: user.key };
    const form = await user.api("POST", "/forms", {
      workspaceId,
      name: "Zapped",
      document: {
        blocks: [
          { id: "name", key: "name", type: "SHORT_TEXT", question: "Your name" },
          { id: "plan", key: "plan", type: "CHECKBOXES", question: "Plan", options: [{ id: "free", text: "Free" }, { id: "pro", text: "Pro" }] },
        ],
      },
    });
    formId = form.body.id;
    await sys.cli("form:publish", "--id", formId);
  });
  after(async () => {
    await sys?.stop();
    await receiver?.close();
  });

  it("is a valid app by zapier-platform-schema (the check `zapier validate` runs)", async () => {
    const handler = zapier.createAppHandler(App);
    const errors = await new Promise((resolve, reject) =>
      handler({ command: "validate" }, {}, (err: unknown, answer: { results: unknown[] }) => (err ? reject(err) : resolve(answer.results))),
    );
    assert.deepEqual(errors, []);
  });

  it("connects with a base URL and key, and refuses a wrong key", async () => {
    const me = await appTester(App.authentication.test, { authData });
    assert.equal(me.email, "zap@example.com");
    await assert.rejects(appTester(App.authentication.test, { authData: { ...authData, apiKey: "fk-wrong" } }), /API key is missing or was deleted/);
  });

  it("subscribes once, receives a real response at its catch URL, samples it, polls it, and unsubscribes", async () => {
    const forms = await appTester(App.triggers.form.operation.perform, { authData, meta: { page: 0 } });
    assert.ok(forms.some((f: { id: string; name: string }) => f.id === formId && f.name === "Zapped"));
    const trigger = App.triggers.new_response.operation;

    const [made] = await appTester(trigger.performList, { authData, inputData: { formId } });
    assert.equal(made.test, true, "before any response, one made-up sample");
    assert.deepEqual(Object.keys(made.answers), ["Your name", "Plan"]);

    const subscription = { authData, inputData: { formId }, targetUrl: receiver.url };
    const subscribeData = await appTester(trigger.performSubscribe, subscription);
    assert.equal(subscribeData.subscriber, "zapier");
    assert.equal((await appTester(trigger.performSubscribe, subscription)).id, subscribeData.id, "switched on again: the same webhook");

    const res = await fetch(`${sys.url}/f/${formId}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ answers: { name: "Ada", plan: ["free", "pro"] }, completed: true }),
    });
    const { responseId } = (await res.json()) as { responseId: string };
    await receiver.waitFor(1);
    const [instant] = await appTester(trigger.perform, { authData, inputData: { formId }, cleanedRequest: receiver.received[0].body });
    assert.deepEqual([instant.id, instant.answers], [responseId, { "Your name": "Ada", Plan: "Free, Pro" }]);

    const [sampled] = await appTester(trigger.performList, { authData, inputData: { formId } });
    assert.deepEqual(sampled, instant, "performList's sample is the real response, as the hook delivers it");
    const polled = await appTester(App.triggers.new_response_polling.operation.perform, { authData, inputData: { formId }, meta: { page: 0 } });
    assert.deepEqual(polled, [instant], "the polling fallback sees the same item");
    const [found] = await appTester(App.searches.find_response.operation.perform, { authData, inputData: { formId, responseId } });
    assert.deepEqual(found, instant);
    assert.deepEqual(await appTester(App.searches.find_response.operation.perform, { authData, inputData: { formId, responseId: "Rnope" } }), []);

    await appTester(trigger.performUnsubscribe, { authData, inputData: { formId }, subscribeData });
    const left = await fetch(`${sys.url}/api/v1/webhooks?formId=${formId}`, { headers: { authorization: `Bearer ${authData.apiKey}` } });
    assert.deepEqual(((await left.json()) as { items: unknown[] }).items, []);
    await appTester(trigger.performUnsubscribe, { authData, inputData: { formId }, subscribeData });
  });

  it("creates a draft form in a chosen workspace", async () => {
    const workspaces = await appTester(App.triggers.workspace.operation.perform, { authData });
    assert.ok(workspaces.some((w: { id: string }) => w.id === workspaceId));
    const created = await appTester(App.creates.create_form.operation.perform, { authData, inputData: { workspaceId, name: "Made by a Zap" } });
    assert.deepEqual([created.name, created.status], ["Made by a Zap", "draft"]);
  });
});
