// A chat webhook made without code: in Chromium, the form's Integrations tab adds a webhook that sends
// Slack messages; a completed response reaches a local receiver as a Block Kit message in Slack's
// documented shape, and the list shows what the webhook sends.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { ensureAppBuilt } from "@formsvc/launcher/app-build.ts";
import { slackMessage } from "../services/delivery/src/testing/chat-shapes.ts";
import { signedUpPerson } from "./support/app-client.ts";
import { launchBrowser, signedInContext } from "./support/browser.ts";
import { startReceiver } from "./support/receiver.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";

describe("a Slack webhook added in the app, in Chromium", () => {
  let sys: TestSystem;
  let browser: Browser;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  before(async () => {
    ensureAppBuilt(undefined, { quiet: true });
    [sys, browser, receiver] = await Promise.all([startTestSystem("app_chat_webhooks", { WEBHOOK_ALLOWED_CIDRS: "127.0.0.1/32" }), launchBrowser(), startReceiver()]);
  });
  after(async () => {
    await browser?.close();
    await receiver?.close();
    await sys?.stop();
  });

  it("sends each response as a Slack message with the answers by label", async () => {
    const person = await signedUpPerson(sys.url, "chat");
    const form = await person.call("POST", "/forms", {
      workspaceId: person.workspace.id,
      name: "Standup",
      document: { blocks: [{ id: "mood", key: "mood", type: "MULTIPLE_CHOICE", question: "Mood", options: [{ id: "ok", text: "Fine" }, { id: "meh", text: "Meh" }] }] },
    });
    assert.equal(form.status, 201, JSON.stringify(form.body));
    await sys.cli("form:publish", "--id", form.body.id);

    const context = await signedInContext(browser, sys.url, person.cookies);
    const page = await context.newPage();
    await page.goto(`${sys.url}/app/forms/${form.body.id}/integrations`);
    await page.getByRole("button", { name: "Add webhook" }).click();
    await page.getByLabel("Endpoint URL").fill(receiver.url);
    await page.getByLabel("Sends").selectOption("slack");
    await page.getByRole("button", { name: "Add webhook" }).click();
    await page.locator(".webhook").filter({ hasText: "Slack message" }).waitFor();
    await context.close();

    const res = await fetch(`${sys.url}/f/${form.body.id}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ answers: { mood: "meh" }, completed: true }),
    });
    assert.equal(res.status, 200);
    await receiver.waitFor(1);
    const message = slackMessage.parse(receiver.received[0].body);
    assert.equal(message.text, 'New response to "Standup"');
    assert.ok(JSON.stringify(message.blocks).includes("*Mood*\\nMeh"));
  });
});
