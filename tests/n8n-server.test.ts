// The n8n node package (integrations/n8n) inside the real n8n 2.x server (tests/support/n8n.ts: installed once
// into ~/.cache/formsvc, started on loopback), against the whole running system. Everything goes through n8n's
// own public API as an operator's tooling would: the credential made, the workflow with our trigger imported
// and activated (our system then holds one webhook with subscriber "n8n", however often activated), a response
// submitted in Chromium runs the workflow (read back through n8n's executions API: answers by label with option
// texts), and deactivating deletes the webhook. The editor is shown signed in as the owner, screenshots of the
// workflow and its execution saved as test-output/screenshots/n8n-*.png (the README shows copies of them).
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext } from "playwright-core";
import { repoRoot } from "@formsvc/launcher/system.ts";
import { launchBrowser, screenshot } from "./support/browser.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { installTimeoutMs, startN8n, type N8nServer } from "./support/n8n.ts";
import { createPublishedForm, createUserWithKey, startTestSystem, type TestSystem } from "./support/system.ts";

const packageName = "n8n-nodes-formsvc";
/** A first run installs n8n (when .ci/run has not): its install's own limit, then n8n's start and the system's. */
const setupTimeoutMs = installTimeoutMs + 15 * 60_000;
/** How long a delivery and the workflow's run may take on a loaded machine. */
const runTimeoutMs = 120_000;

describe("the n8n nodes inside a real n8n server", () => {
  let sys: TestSystem;
  let n8n: N8nServer;
  let browser: Browser;
  let key: string;
  let formId: string;
  let workflowId: string;
  let executionId: string;
  const triggerName = "Form Service Trigger";

  /** Asks n8n's public API, failing with what it answered when the status is not `status`. */
  async function n8nApi(method: string, path: string, body?: unknown, status = 200) {
    const res = await n8n.api(method, path, body);
    assert.equal(res.status, status, `n8n ${method} /api/v1${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body;
  }
  const webhooksOfForm = async () =>
    ((await (await fetch(`${sys.url}/api/v1/webhooks?formId=${formId}`, { headers: { authorization: `Bearer ${key}` } })).json()) as { items: { id: string; url: string; subscriber: string }[] }).items;

  /**
   * Publishes or unpublishes the workflow and waits until n8n has applied it: n8n 2.x answers at once and
   * (un)registers the triggers from its publication outbox, so the webhook comes and goes after the answer.
   * The editor's publication status says when that is done.
   */
  async function setPublished(published: boolean) {
    await n8nApi("POST", `/workflows/${workflowId}/${published ? "publish" : "unpublish"}`);
    const settled = await waitFor(`n8n's publication of the workflow still in progress`, async () => {
      const status = await n8n.rest("GET", `/workflows/${workflowId}/publication-status`);
      return status.status === "in_progress" ? undefined : status;
    });
    if (published) assert.equal(settled.status, "published", `the trigger was not activated: ${JSON.stringify(settled.triggers)}`);
  }

  /** Until `check` answers a value, or `what` fails the test after runTimeoutMs (with n8n's log path). */
  async function waitFor<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
    const value = await eventuallyPasses(check, (v) => v !== undefined, runTimeoutMs, 250).catch((err: Error) =>
      assert.fail(`${what} within ${runTimeoutMs / 1000} s (n8n's log: ${n8n.logFile}): ${err.message}`),
    );
    return value!;
  }

  before(
    async () => {
      n8n = await startN8n({ nodesPackage: join(repoRoot, "integrations", "n8n"), packageName });
      // n8n's webhook URL is on loopback: let in by the allow-list alone, as a LAN n8n would be.
      sys = await startTestSystem("n8n_server", { WEBHOOK_ALLOWED_CIDRS: "127.0.0.1/32" });
      const user = await createUserWithKey(sys, "n8n-server@example.com");
      key = user.key;
      formId = await createPublishedForm(sys, user, "Automated", [
        { id: "name", key: "name", type: "SHORT_TEXT", question: "Your name" },
        { id: "plan", key: "plan", type: "MULTIPLE_CHOICE", question: "Plan", options: [{ id: "free", text: "Free" }, { id: "pro", text: "Pro" }] },
      ]);
      browser = await launchBrowser();
    },
    { timeout: setupTimeoutMs },
  );
  after(async () => {
    await browser?.close();
    await n8n?.stop();
    await sys?.stop();
  });

  it("tests the credential, imports and activates (publishes) a workflow with our trigger: one webhook with subscriber n8n, however often activated", async () => {
    const credential = await n8nApi("POST", "/credentials", { name: "Form Service", type: "formServiceApi", data: { baseUrl: sys.url, apiKey: key } });
    // n8n's own credential test: the credential's request (GET /api/v1/users/me with the key as a bearer token).
    assert.equal((await n8nApi("POST", `/credentials/${credential.id}/test`)).status, "OK");
    const wrong = await n8nApi("POST", "/credentials", { name: "Wrong key", type: "formServiceApi", data: { baseUrl: sys.url, apiKey: "fs_wrong" } });
    assert.equal((await n8nApi("POST", `/credentials/${wrong.id}/test`)).status, "Error");
    const webhookId = randomUUID();
    const workflow = await n8nApi("POST", "/workflows", {
      name: "New form responses",
      nodes: [
        {
          id: randomUUID(),
          name: triggerName,
          type: `${packageName}.formServiceTrigger`,
          typeVersion: 1,
          position: [0, 0],
          webhookId,
          parameters: { formId, events: ["FORM_RESPONSE"] },
          credentials: { formServiceApi: { id: credential.id, name: credential.name } },
        },
        { id: randomUUID(), name: "Handle response", type: "n8n-nodes-base.noOp", typeVersion: 1, position: [240, 0], parameters: {} },
      ],
      connections: { [triggerName]: { main: [[{ node: "Handle response", type: "main", index: 0 }]] } },
      settings: { saveDataSuccessExecution: "all", saveManualExecutions: true },
    });
    workflowId = workflow.id;
    assert.deepEqual(await webhooksOfForm(), [], "importing subscribes nothing");

    await setPublished(true);
    const hooks = await webhooksOfForm();
    assert.deepEqual(hooks.map((w) => [w.subscriber, w.url]), [["n8n", `${n8n.url}/webhook/${webhookId}/webhook`]]);
    await setPublished(true);
    assert.deepEqual((await webhooksOfForm()).map((w) => w.subscriber), ["n8n"], "activated twice, still one webhook");
  });

  it("runs the workflow on a response submitted in Chromium, with answers by label and option texts", async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    try {
      const page = await context.newPage();
      await page.goto(`${sys.url}/f/${formId}`);
      await page.getByLabel("Your name").fill("Ada");
      await page.getByLabel("Pro", { exact: true }).check();
      await page.getByRole("button", { name: "Submit" }).click();
      await page.getByRole("heading", { name: "Thank you!" }).waitFor();
    } finally {
      await context.close();
    }
    const execution = await waitFor("no finished execution of the workflow in n8n", async () => {
      const list = await n8nApi("GET", `/executions?workflowId=${workflowId}&includeData=true`);
      // An execution as n8n's API answers it: its status, and with includeData its run data per node.
      return (list.data as any[]).find((e) => !["new", "running", "waiting"].includes(e.status));
    });
    executionId = execution.id;
    assert.equal(execution.status, "success", `the execution ended ${execution.status}: ${JSON.stringify(execution.data?.resultData?.error)}`);
    const [item] = execution.data.resultData.runData[triggerName][0].data.main[0];
    assert.equal(item.json.formId, formId);
    assert.equal(item.json.formName, "Automated");
    assert.match(item.json.responseId, /\S/);
    assert.deepEqual(item.json.answers, { "Your name": "Ada", Plan: "Pro" });
    assert.ok(execution.data.resultData.runData["Handle response"], "the next node ran on the item");
  });

  it("shows the workflow and its execution in n8n's editor to the signed-in owner", async () => {
    const context = await signedInEditor();
    try {
      const page = await context.newPage();
      await page.goto(`${n8n.url}/workflow/${workflowId}`);
      await page.getByText(triggerName, { exact: true }).first().waitFor();
      await page.getByText("Handle response", { exact: true }).first().waitFor();
      await screenshot(page, "n8n-workflow", { fullPage: false });
      await page.goto(`${n8n.url}/workflow/${workflowId}/executions/${executionId}`);
      await page.getByText("Succeeded", { exact: true }).first().waitFor();
      // Opening the trigger's node in the run shows the item it made.
      await page.locator(".vue-flow__node", { hasText: triggerName }).dblclick();
      await page.getByText("Ada").first().waitFor();
      await screenshot(page, "n8n-execution", { fullPage: false });
    } finally {
      await context.close();
    }
  });

  it("deletes the webhook when the workflow is deactivated (unpublished), and subscribes one again when activated", async () => {
    await setPublished(false);
    assert.deepEqual(await webhooksOfForm(), []);
    await setPublished(true);
    assert.deepEqual((await webhooksOfForm()).map((w) => w.subscriber), ["n8n"]);
    await setPublished(false);
    assert.deepEqual(await webhooksOfForm(), []);
  });

  /** A browser context signed in to n8n's editor as its owner; only loopback is reachable from it. */
  async function signedInEditor(): Promise<BrowserContext> {
    const context = await browser.newContext({ viewport: { width: 1400, height: 800 } });
    // The editor is a large single-page app: its first load on a loaded 2-core machine can take a minute.
    context.setDefaultTimeout(runTimeoutMs);
    await context.route((url) => url.hostname !== "127.0.0.1", (route) => route.abort());
    const page = await context.newPage();
    await page.goto(`${n8n.url}/signin`);
    await page.getByLabel("Email").fill(n8n.owner.email);
    await page.getByLabel("Password").fill(n8n.owner.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => !url.pathname.startsWith("/signin"));
    await page.close();
    return context;
  }
});
