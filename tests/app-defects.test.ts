import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { ensureAppBuilt } from "@formsvc/launcher/app-build.ts";
import { editorBlock, editorSaved, launchBrowser, openAccountMenu, pageApi, screenshot, watchPage } from "./support/browser.ts";
import { startReceiver } from "./support/receiver.ts";
import { newestDeliveryReads, startTestSystem, type TestSystem } from "./support/system.ts";

// The defects of issue 19 as a person meets them in Chromium, against the whole running system: the base
// URL, the "Made with" footer's link, readable question keys, a broken formula at save, the unsaved-changes
// guard on every way out of the editor (for changes the autosave cannot store; others are saved on the way out), a delivery's attempts after Refresh and Resend, a succeeded
// delivery's last error, and notices over row buttons. Pages are saved as test-output/screenshots/defects-*.png.

let sys: TestSystem;
let browser: Browser;
// The first request and every test event fail (HTTP 500); the rest is accepted.
let receiver: Awaited<ReturnType<typeof startReceiver>>;

before(async () => {
  ensureAppBuilt(undefined, { quiet: true });
  [sys, browser, receiver] = await Promise.all([
    // An hour to the automatic retry: every attempt after the first is one this test makes.
    startTestSystem("app_defects", { WEBHOOK_ALLOW_PRIVATE_URLS: "true", WEBHOOK_RETRY_SCHEDULE: "3600" }),
    launchBrowser(),
    startReceiver((req, n) => ({ status: n === 1 || req.body?.test ? 500 : 200 })),
  ]);
});
after(async () => {
  await browser?.close();
  await receiver?.close();
  await sys?.stop();
});


const notice = (page: Page, text: string | RegExp) => page.locator(".notice").filter({ hasText: text }).first();

/** Dismisses every notice shown, so the next one seen is new. */
async function dismissNotices(page: Page) {
  const dismiss = page.locator(".notice").getByRole("button", { name: "Dismiss" });
  // One at a time: each may also go by itself meanwhile.
  while ((await dismiss.count()) > 0) await dismiss.first().click({ timeout: 2_000 }).catch(() => undefined);
}

describe("the defects of issue 19, in Chromium", () => {
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let api: ReturnType<typeof pageApi>;
  let formId = "";

  before(async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    problems = watchPage(page, [400, 401]);
    api = pageApi(page);
  });
  after(async () => {
    await context?.close();
  });

  it("the base URL leads to the app: sign in when signed out, the forms when signed in", async () => {
    const res = await page.goto(`${sys.url}/`);
    assert.equal(res?.status(), 200);
    await page.waitForURL(/\/app\/signin$/);
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    assert.doesNotMatch(await page.content(), /Cannot GET/);

    await page.getByRole("link", { name: "Create an account" }).click();
    await page.getByLabel("Name").fill("Grace Hopper");
    await page.getByLabel("Email").fill(`grace.${Date.now()}@example.com`);
    await page.getByLabel("Password").fill("compiler-pioneer-1952");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.getByRole("heading", { name: "Forms", level: 1 }).waitFor();

    await page.goto(`${sys.url}/`);
    await page.waitForURL(/\/app\/forms$/);
    await page.getByRole("heading", { name: "Forms", level: 1 }).waitFor();
    await screenshot(page, "defects-base-url");
  });

  it("gives new questions readable keys from their text, unique in the form, kept when the question changes", async () => {
    await page.getByRole("button", { name: "New form" }).first().click();
    await page.getByRole("dialog", { name: "New form" }).getByRole("button", { name: /^Blank form/ }).click();
    await page.getByLabel("Form name").waitFor();
    formId = /\/app\/forms\/([^/]+)\/edit/.exec(page.url())![1];
    await page.getByLabel("Form name").fill("Feedback");
    const questions: [string, string][] = [
      ["Email", "Email"],
      ["Short text", "Your full name"],
      ["Rating", "Rating"],
      ["Email", "What is your email?"],
      ["Short text", "お名前"],
    ];
    for (const [i, [type, question]] of questions.entries()) {
      await page.getByLabel("Block type").selectOption({ label: type });
      await page.getByRole("button", { name: "Add block" }).click();
      await editorBlock(page, i).getByLabel("Question").fill(question);
    }
    // Save now, without waiting for the autosave: a notice says it is stored.
    await page.getByRole("button", { name: "Save", exact: true }).first().click();
    await notice(page, "Saved.").waitFor();
    const keys = async () => (await api("GET", `/forms/${formId}`)).body.document.blocks.map((b: { key: string }) => b.key);
    assert.deepEqual(await keys(), ["q_email", "q_full_name", "q_rating", "q_email_2", "q_short_text"]);
    // The editor names each question's key (in the selected block's settings), and the calculated fields' hint lists them.
    await editorBlock(page, 0).getByLabel("Question").click();
    await editorBlock(page, 0).locator("code").filter({ hasText: /^q_email$/ }).waitFor();
    assert.match((await page.locator(".hint").filter({ hasText: "A formula is worked out" }).textContent())!, /q_email, q_full_name, q_rating, q_email_2, q_short_text/);

    // Renamed later, a question keeps its key: answers already filed under it stay together.
    await editorBlock(page, 0).getByLabel("Question").fill("Work email");
    await editorSaved(page);
    assert.equal((await keys())[0], "q_email");
    await screenshot(page, "defects-editor-keys");
  });

  it("refuses to save a formula that does not parse, naming the problem, and saves it once fixed", async () => {
    await page.locator("summary").filter({ hasText: "Calculated fields" }).click();
    await page.getByRole("button", { name: "Add calculated field" }).click();
    const expression = page.getByLabel("Calculated field 1 formula");
    await expression.fill("q_rating *");
    // Checked as it is typed...
    assert.equal(await expression.getAttribute("aria-invalid"), "true");
    await page.locator(".calc-row .error-text").filter({ hasText: /^The formula / }).waitFor();
    // ...by the autosave, which stores nothing and lists the problem above the form...
    await page.locator(".inline-error").filter({ hasText: "The form cannot be saved yet:" }).getByText(/^Calculated field 1 formula: /).waitFor();
    await page.locator('.save-status[data-state="problems"]').waitFor();
    // ...and at Save: no "Saved.", a notice that names the list.
    await dismissNotices(page);
    await page.getByRole("button", { name: "Save", exact: true }).first().click();
    await notice(page, "The form has problems: see the list above the form.").waitFor();
    assert.equal(await page.locator(".notice").filter({ hasText: /^Saved/ }).count(), 0);
    assert.equal(await page.getByRole("button", { name: "Save", exact: true }).first().isEnabled(), true, "still unsaved");
    assert.equal((await api("GET", `/forms/${formId}`)).body.document.calculatedFields, undefined);
    await screenshot(page, "defects-broken-formula");

    // The API refuses it the same way, whoever sends it.
    const refused = await api("PATCH", `/forms/${formId}`, {
      document: { blocks: [], calculatedFields: [{ name: "score", type: "NUMBER", expression: "q_rating *" }] },
    });
    assert.equal(refused.status, 400);
    assert.match(refused.body.error, /expression/);

    await expression.fill("q_rating * 2");
    assert.equal(await expression.getAttribute("aria-invalid"), null);
    await editorSaved(page);
    assert.equal((await api("GET", `/forms/${formId}`)).body.document.calculatedFields[0].expression, "q_rating * 2");
  });

  it("asks before changes that cannot be saved are lost: ← All forms, the top navigation, Back, reload; the form's tabs keep them; others are saved on the way out", async () => {
    const name = page.getByLabel("Form name");
    // A form needs a name: without one the autosave stores nothing, and leaving asks.
    await name.fill("");
    await page.locator('.save-status[data-state="problems"]').waitFor();
    const dialog = page.getByRole("dialog", { name: "Leave without saving?" });

    await page.getByRole("link", { name: "← All forms" }).click();
    await dialog.waitFor();
    await screenshot(page, "defects-unsaved-guard");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    assert.match(page.url(), new RegExp(`/app/forms/${formId}/edit$`));
    assert.equal(await name.inputValue(), "");

    for (const link of ["Forms", "Trash", "Workspaces", "API keys"]) {
      // API keys is in the account menu.
      if (link === "API keys") await openAccountMenu(page);
      await page.locator("header").getByRole("link", { name: link, exact: true }).click();
      await dialog.waitFor();
      await dialog.getByRole("button", { name: "Cancel" }).click();
      await dialog.waitFor({ state: "hidden" });
      assert.match(page.url(), new RegExp(`/app/forms/${formId}/edit$`), link);
    }
    await page.getByRole("link", { name: "formsvc", exact: true }).click();
    await dialog.getByRole("button", { name: "Cancel" }).click();

    // Another tab of the form keeps the draft without asking.
    await page.getByRole("link", { name: "Preview", exact: true }).click();
    await page.waitForURL(/\/preview$/);
    assert.equal(await dialog.isVisible(), false);
    await page.getByRole("link", { name: "Build", exact: true }).click();
    assert.equal(await name.inputValue(), "");

    // Back to the tab before asks nothing; back out of the form asks, and Cancel stays.
    await page.goBack();
    await page.waitForURL(/\/preview$/);
    await page.goBack();
    await page.waitForURL(/\/edit$/);
    await page.goBack();
    await dialog.waitFor();
    await dialog.getByRole("button", { name: "Cancel" }).click();
    assert.match(page.url(), new RegExp(`/app/forms/${formId}/edit$`));
    assert.equal(await name.inputValue(), "");

    // Sign out asks too (the session, and the edits with it, would be gone).
    await openAccountMenu(page);
    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await dialog.getByRole("button", { name: "Cancel" }).click();
    assert.ok((await api("GET", "/session")).body.user, "still signed in");

    // Reload: the browser's own prompt.
    let prompted = "";
    page.once("dialog", (d) => {
      prompted = d.type();
      void d.accept();
    });
    await page.reload();
    assert.equal(prompted, "beforeunload");
    await page.getByLabel("Form name").waitFor();
    assert.equal(await page.getByLabel("Form name").inputValue(), "Feedback", "left without saving, as chosen");

    // Leaving on purpose goes, and the edit is gone.
    await page.getByLabel("Form name").fill("");
    await page.getByRole("link", { name: "← All forms" }).click();
    await dialog.getByRole("button", { name: "Leave without saving" }).click();
    await page.getByRole("heading", { name: "Forms", level: 1 }).waitFor();
    await page.getByRole("row").filter({ hasText: "Feedback" }).waitFor();

    // Nothing unsaved: no question.
    await page.getByRole("link", { name: "Feedback", exact: true }).click();
    await page.getByLabel("Form name").waitFor();
    await page.getByRole("link", { name: "← All forms" }).click();
    await page.getByRole("heading", { name: "Forms", level: 1 }).waitFor();

    // A change that can be saved is saved on the way out, before the autosave's second is up: no question.
    await page.getByRole("link", { name: "Feedback", exact: true }).click();
    await page.getByLabel("Form name").fill("Feedback, kept");
    await page.getByRole("link", { name: "← All forms" }).click();
    await page.getByRole("heading", { name: "Forms", level: 1 }).waitFor();
    await page.getByRole("link", { name: "Feedback, kept", exact: true }).waitFor();
    assert.equal(await dialog.count(), 0);
    assert.equal((await api("GET", `/forms/${formId}`)).body.name, "Feedback, kept");
  });

  it("links the hosted form's “Made with formsvc” to a page that exists", async () => {
    assert.equal((await api("POST", `/forms/${formId}/publish`, {})).body.status, "published");
    const respondent = await browser.newContext();
    try {
      const r = await respondent.newPage();
      const rProblems = watchPage(r, [400, 401]);
      await r.goto(`${sys.url}/f/${formId}`);
      const made = r.getByRole("link", { name: "Made with formsvc" });
      assert.equal(await made.getAttribute("href"), `${sys.env.PUBLIC_URL ?? `http://localhost:${sys.env.PORT}`}/app/signup`);
      await screenshot(r, "defects-hosted-footer");
      await made.click();
      await r.getByRole("heading", { name: "Create your account" }).waitFor();
      assert.deepEqual(rProblems, []);
    } finally {
      await respondent.close();
    }
  });

  it("refreshes an open attempts list on Refresh and Resend, shows no last error once delivered, and keeps notices off the row buttons", async () => {
    await page.goto(`${sys.url}/app/forms/${formId}/integrations`);
    await page.getByRole("button", { name: "Add webhook" }).click();
    await page.getByLabel("Endpoint URL").fill(receiver.url);
    await page.getByRole("button", { name: "Add webhook" }).click();
    await page.getByRole("button", { name: "Done" }).click();
    const hookId = await page.locator(".webhook").first().getAttribute("data-webhook-id");

    const answered = await fetch(`${sys.url}/f/${formId}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ answers: {}, completed: true }),
    });
    assert.equal(answered.status, 200, await answered.clone().text());
    await receiver.waitFor(1);
    await newestDeliveryReads(api, hookId!, "retrying");

    // The first attempt failed: Retrying, with its error, and one attempt when opened.
    await page.getByRole("button", { name: "Refresh deliveries" }).click();
    const deliveryId = await page.locator(".deliveries-table tbody tr[data-delivery-id]").first().getAttribute("data-delivery-id");
    const row = page.locator(`tr[data-delivery-id="${deliveryId}"]`);
    const errorCell = row.locator("td.error-cell");
    const attempts = page.locator(".attempts .attempt");
    await row.filter({ hasText: "Retrying" }).waitFor();
    await errorCell.filter({ hasText: /500/ }).waitFor();
    await row.getByRole("button", { name: "Attempts" }).click();
    await attempts.first().waitFor();
    assert.equal(await attempts.count(), 1);
    assert.match((await attempts.first().textContent())!, /Attempt 1.*HTTP 500/);

    // Sent again behind the page's back (another tab, the API): Refresh shows it in the open list too.
    assert.equal((await api("POST", `/webhooks/${hookId}/deliveries/${deliveryId}/retry`, {})).body.status, "succeeded");
    await page.getByRole("button", { name: "Refresh deliveries" }).click();
    await row.filter({ hasText: "Succeeded" }).waitFor();
    await attempts.nth(1).waitFor();
    assert.match((await attempts.nth(1).textContent())!, /Attempt 2.*HTTP 200/);
    // Delivered: the old error is in attempt 1's details, not in the row.
    assert.equal((await errorCell.textContent())?.trim(), "—");

    // Resend: the open list shows the new attempt at once.
    await row.getByRole("button", { name: "Resend" }).click();
    await notice(page, "Sent again: the receiver accepted it.").waitFor();
    await attempts.nth(2).waitFor();
    assert.match((await attempts.nth(2).textContent())!, /Attempt 3.*HTTP 200.*sent by hand/);
    assert.equal((await errorCell.textContent())?.trim(), "—");

    // Stacked notices (an error and others) leave the row buttons and the page's actions free to click.
    await page.getByRole("button", { name: "Send test event" }).click();
    await page.locator(".notice-error").filter({ hasText: /^Test event failed: / }).waitFor();
    await row.getByRole("button", { name: "Resend" }).click();
    await page.locator(".notice").nth(2).waitFor();
    const boxes = async (selector: string) =>
      (await page.locator(selector).evaluateAll((els) => els.map((e) => e.getBoundingClientRect().toJSON()))) as DOMRect[];
    const overlaps = (a: DOMRect, b: DOMRect) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    for (const scroll of [0, 10_000]) {
      await page.evaluate((y) => window.scrollTo(0, y), scroll);
      const notices = await boxes(".notice");
      assert.ok(notices.length >= 2, "notices stacked");
      for (const button of await boxes("td button, .page-head .actions button, .webhook .actions button, .toolbar button")) {
        for (const n of notices) assert.ok(!overlaps(n, button), `a notice at ${JSON.stringify(n)} covers a button at ${JSON.stringify(button)}`);
      }
    }
    await screenshot(page, "defects-notices");
    // A real click on a row button while the notices are up (Chromium refuses one on a covered button).
    await row.getByRole("button", { name: "Hide attempts" }).click({ timeout: 5_000 });
    await attempts.first().waitFor({ state: "detached" });
    assert.deepEqual(problems, []);
  });
});
