import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { ensureAppBuilt } from "@formsvc/launcher/app-build.ts";
import { appClient } from "./support/app-client.ts";
import { launchBrowser, screenshot, watchPage, signedInContext } from "./support/browser.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { createUserWithKey, startTestSystem, type TestSystem } from "./support/system.ts";

// The form controls against the whole running system: an owner sets them over /api/v1, or in the app's
// Settings tab in Chromium (screenshot form-controls), a respondent meets them on the hosted form (its
// page and its posts), and the owner reads back what was stored.

let sys: TestSystem;
let ada: Awaited<ReturnType<typeof createUserWithKey>>;
before(async () => {
  sys = await startTestSystem("form_controls");
  ada = await createUserWithKey(sys, "ada@example.com");
});
after(() => sys?.stop());

const document = { title: "Workshop", blocks: [{ id: "name", key: "name", type: "SHORT_TEXT", question: "Your name", required: true }] };

async function publishedForm(settings: object) {
  const created = await ada.api("POST", "/forms", { workspaceId: ada.workspace.id, name: "Workshop", document });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const patched = await ada.api("PATCH", `/forms/${created.body.id}`, { settings });
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  await sys.cli("form:publish", "--id", created.body.id);
  return created.body.id as string;
}

const respond = (formId: string, body: object) =>
  fetch(`${sys.url}/f/${formId}/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const postPlain = (formId: string, fields: [string, string][]) =>
  fetch(`${sys.url}/f/${formId}`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });
const completedCount = async (formId: string) => (await ada.api("GET", `/forms/${formId}/submissions?filter=completed&limit=100`)).body.items.length;

describe("form controls, end to end", () => {
  it("a response limit of 5 takes exactly 5 of 10 concurrent submissions; then the page says closed", async () => {
    const formId = await publishedForm({ responseLimit: 5, closedMessage: "All places are taken." });
    const statuses = await Promise.all(Array.from({ length: 10 }, (_, i) => respond(formId, { answers: { name: `R${i}` }, completed: true }).then((r) => r.status)));
    assert.deepEqual(statuses.toSorted(), [200, 200, 200, 200, 200, 409, 409, 409, 409, 409]);
    assert.equal(await completedCount(formId), 5);
    // The page reads the form's responseCount, which follows the stored responses within seconds; the
    // submissions themselves were refused exactly at the limit.
    const page = await eventuallyPasses(async () => (await fetch(`${sys.url}/f/${formId}`)).text(), (text) => /All places are taken\./.test(text), 15_000, 50);
    assert.match(page, /All places are taken\./);
    assert.equal((await postPlain(formId, [["name", "Late"]])).status, 409);
  });

  it("a closing date in the past closes the form", async () => {
    const formId = await publishedForm({});
    assert.equal((await respond(formId, { answers: { name: "Early" }, completed: true })).status, 200);
    assert.equal((await ada.api("PATCH", `/forms/${formId}`, { settings: { closesAt: new Date(Date.now() - 1000).toISOString() } })).status, 200);
    // Submissions holds the open form and drops it when forms' change notice arrives (milliseconds). Until
    // then a completion without its required answer is refused as invalid, after as closed: stored neither way.
    const probe = await eventuallyPasses(() => respond(formId, { answers: {}, completed: true }).then((r) => r.status), (status) => status === 409, 5_000, 5);
    assert.equal(probe, 409);
    const late = await respond(formId, { answers: { name: "Late" }, completed: true });
    assert.equal(late.status, 409);
    assert.match((await late.json()).error, /closed/);
    assert.match(await (await fetch(`${sys.url}/f/${formId}`)).text(), /This form is closed\./);
    assert.equal(await completedCount(formId), 1);
  });

  it("a filled honeypot is thanked and not stored; an empty one is", async () => {
    const formId = await publishedForm({});
    assert.match(await (await fetch(`${sys.url}/f/${formId}`)).text(), /name="_website"[^>]*tabindex="-1"/);
    const bot = await postPlain(formId, [["name", "Bot"], ["_website", "http://spam.example"]]);
    assert.equal(bot.status, 200);
    assert.match(await bot.text(), /Thank you!/);
    assert.equal((await respond(formId, { answers: { name: "Bot" }, completed: true, honeypot: "x" })).status, 200);
    assert.equal(await completedCount(formId), 0);
    assert.equal((await postPlain(formId, [["name", "Person"], ["_website", ""]])).status, 200);
    assert.equal(await completedCount(formId), 1);
  });

  it("submissionsPerMinute: the form's posts past it are answered 429 with Retry-After", async () => {
    const formId = await publishedForm({ submissionsPerMinute: 2 });
    assert.equal((await respond(formId, { answers: { name: "A" } })).status, 200);
    assert.equal((await respond(formId, { answers: { name: "B" } })).status, 200);
    const third = await respond(formId, { answers: { name: "C" } });
    assert.equal(third.status, 429);
    assert.ok(Number(third.headers.get("retry-after")) >= 1);
    assert.deepEqual(await third.json(), { error: "rate limit of 2 requests a minute per form exceeded" });
  });
});

describe("the Closing and spam and the Keeping responses cards in Chromium", () => {
  let browser: Browser;
  before(async () => {
    ensureAppBuilt(undefined, { quiet: true });
    browser = await launchBrowser();
  });
  after(() => browser?.close());

  it("sets a closing date, a response limit, the honeypot and a rate; the hosted form follows, and clearing them reopens it", async () => {
    const { call, cookies } = appClient(sys.url);
    await call("GET", "/session");
    const signedUp = await call("POST", "/auth/signup", { email: `controls.${Date.now()}@example.com`, name: "Cleo", password: "Cleo keeps a long passphrase" });
    assert.equal(signedUp.status, 201, JSON.stringify(signedUp.body));
    const workspace = (await call("GET", "/workspaces")).body.items[0];
    const created = await call("POST", "/forms", { workspaceId: workspace.id, name: "Workshop", document });
    const formId: string = created.body.id;
    assert.equal((await call("POST", `/forms/${formId}/publish`)).status, 200);

    const context = await signedInContext(browser, sys.url, cookies);
    const page = await context.newPage();
    const problems = watchPage(page, []);
    await page.goto(`${sys.url}/app/forms/${formId}/settings`);
    const card = page.getByRole("group", { name: "Closing and spam" });
    await card.getByLabel("Close the form at").fill("2030-01-01T09:30");
    await card.getByLabel("Close after this many responses").fill("1");
    await card.getByLabel(/Catch bots with a hidden field/).uncheck();
    await card.getByLabel("Responses a minute at most").fill("30");
    await page.getByLabel("Closed message").fill("All places are taken.");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByText("Settings saved.").waitFor();
    await card.scrollIntoViewIfNeeded();
    await screenshot(page, "form-controls");

    // datetime-local is the browser's time zone: the instant stored is what the browser makes of it.
    const closesAt = await page.evaluate(() => new Date("2030-01-01T09:30").toISOString());
    const saved = (await call("GET", `/forms/${formId}`)).body.settings;
    assert.deepEqual(
      [saved.closesAt, saved.responseLimit, saved.honeypot, saved.submissionsPerMinute, saved.closedMessage],
      [closesAt, 1, false, 30, "All places are taken."],
    );
    assert.doesNotMatch(await (await fetch(`${sys.url}/f/${formId}`)).text(), /name="_website"/, "no honeypot field once it is off");
    assert.equal((await respond(formId, { answers: { name: "First" }, completed: true })).status, 200);
    assert.equal((await respond(formId, { answers: { name: "Second" }, completed: true })).status, 409, "the limit of 1 is reached");
    // The page reads the form's responseCount, which follows the stored responses within moments.
    const closedPage = await eventuallyPasses(async () => (await fetch(`${sys.url}/f/${formId}`)).text(), (text) => /All places are taken\./.test(text), 15_000, 50);
    assert.match(closedPage, /All places are taken\./);

    await page.reload();
    assert.equal(await card.getByLabel("Close the form at").inputValue(), "2030-01-01T09:30");
    assert.equal(await card.getByLabel("Close after this many responses").inputValue(), "1");
    assert.equal(await card.getByLabel(/Catch bots with a hidden field/).isChecked(), false);
    await card.getByLabel("Close the form at").fill("");
    await card.getByLabel("Close after this many responses").fill("");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByText("Settings saved.").waitFor();
    const cleared = (await call("GET", `/forms/${formId}`)).body.settings;
    assert.deepEqual([cleared.closesAt, cleared.responseLimit], [null, null]);
    assert.equal((await respond(formId, { answers: { name: "Second" }, completed: true })).status, 200, "open again");
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("sets how many days responses are kept, and clearing it keeps them until deleted", async () => {
    const { call, cookies } = appClient(sys.url);
    await call("GET", "/session");
    const signedUp = await call("POST", "/auth/signup", { email: `retention.${Date.now()}@example.com`, name: "Rita", password: "Rita keeps a long passphrase" });
    assert.equal(signedUp.status, 201, JSON.stringify(signedUp.body));
    const workspace = (await call("GET", "/workspaces")).body.items[0];
    const formId: string = (await call("POST", "/forms", { workspaceId: workspace.id, name: "Workshop", document })).body.id;

    const context = await signedInContext(browser, sys.url, cookies);
    const page = await context.newPage();
    const problems = watchPage(page, []);
    await page.goto(`${sys.url}/app/forms/${formId}/settings`);
    const card = page.getByRole("group", { name: "Keeping responses" });
    const days = card.getByLabel("Delete responses after this many days");
    assert.equal(await days.inputValue(), "", "kept until deleted by default");
    await days.fill("30");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByText("Settings saved.").waitFor();
    await card.scrollIntoViewIfNeeded();
    await screenshot(page, "form-retention");
    assert.equal((await call("GET", `/forms/${formId}`)).body.settings.deleteResponsesAfterDays, 30);

    await page.reload();
    assert.equal(await days.inputValue(), "30");
    await days.fill("");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByText("Settings saved.").waitFor();
    assert.equal((await call("GET", `/forms/${formId}`)).body.settings.deleteResponsesAfterDays, null);
    assert.deepEqual(problems, []);
    await context.close();
  });
});
