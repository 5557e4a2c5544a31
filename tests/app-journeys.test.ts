import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { ensureAppBuilt } from "@formsvc/launcher/app-build.ts";
import type { BlockType } from "@formsvc/form-document";
import { blockTypeLabels } from "../app/src/lib/document.ts";
import { drawSignature, editorBlock, editorSaved, launchBrowser, openAccountMenu, screenshot, watchPage } from "./support/browser.ts";
import { mailedFileLinkToken } from "./support/mail-files.ts";
import { startReceiver } from "./support/receiver.ts";
import { apiClient, newestDeliveryReads, startTestSystem, type TestSystem } from "./support/system.ts";

// The web app at /app in Chromium, against the whole running system: a person signs up, builds a form
// with every question type, publishes it, a respondent fills it in at /f/:id in a second browser
// context, the response shows in the table; an API key made on the page works on /api/v1 until it is
// deleted; a webhook to a local receiver gets the delivery, which is resent; the form goes to the Trash
// and comes back. Each main page is saved as test-output/screenshots/app-*.png.

let sys: TestSystem;
let browser: Browser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

before(async () => {
  ensureAppBuilt(undefined, { quiet: true });
  [sys, browser, receiver] = await Promise.all([
    // TRUST_PROXY: the API checks below come from several client addresses (X-Forwarded-For), so each
    // has its own sign-in limit; the browser sends none and is 127.0.0.1.
    startTestSystem("app_journeys", { WEBHOOK_ALLOW_PRIVATE_URLS: "true", WEBHOOK_RETRY_SCHEDULE: "0.5,0.5", TRUST_PROXY: "true" }),
    launchBrowser(),
    startReceiver(),
  ]);
});
after(async () => {
  await browser?.close();
  await receiver?.close();
  await sys?.stop();
});



/** Waits until the editor's autosave has stored every change. */
const save = (page: Page) => editorSaved(page);

/** Waits for a notice (toast or inline) with this text. */
const notice = (page: Page, text: string | RegExp) => page.locator(".notice, .inline").filter({ hasText: text }).first().waitFor();

/** The blocks of the journey's form, in order: every block type there is. */
const plan: { type: string; question?: string; text?: string; options?: string[] }[] = [
  { type: "HEADING", text: "Welcome to the conference" },
  { type: "SHORT_TEXT", question: "Your full name" },
  { type: "EMAIL", question: "Email address" },
  { type: "LONG_TEXT", question: "About you" },
  { type: "NUMBER", question: "Age" },
  { type: "PHONE", question: "Phone number" },
  { type: "URL", question: "Your website" },
  { type: "DATE", question: "Arrival date" },
  { type: "MULTIPLE_CHOICE", question: "Ticket", options: ["Standard", "VIP"] },
  { type: "CHECKBOXES", question: "Interests", options: ["Talks", "Workshops", "Party"] },
  { type: "DROPDOWN", question: "T-shirt size", options: ["S", "M"] },
  { type: "RATING", question: "How excited are you?" },
  { type: "PARAGRAPH", text: "Nearly done: two more things." },
  { type: "PAGE_BREAK" },
  { type: "FILE", question: "Upload your CV" },
  { type: "SIGNATURE", question: "Sign here" },
];
describe("the app in Chromium: one person's journey", () => {
  const email = `ada.${Date.now()}@example.com`;
  const password = "analytical-engine-1843";
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let formId = "";
  let apiKey = "";

  before(async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: sys.url });
    page = await context.newPage();
    // 401 from /session checks and refused keys, 400 for a refused password, 403/404 the journey provokes.
    problems = watchPage(page, [400, 401, 403, 404]);
  });
  after(async () => {
    await context?.close();
  });

  it("signs up with email and password and lands on an empty forms list", async () => {
    await page.goto(`${sys.url}/app`);
    await page.waitForURL(/\/app\/signin$/);
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await screenshot(page, "app-signin");
    await page.getByRole("link", { name: "Create an account" }).click();
    await page.getByLabel("Name").fill("Ada Lovelace");
    await page.getByLabel("Email").fill(email);
    // A common password is refused with the reason, shown at the field.
    await page.getByLabel("Password").fill("12345678");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.getByText("Password is too easy to guess: This is one of the ten most used passwords.").waitFor();
    assert.equal(await page.getByLabel("Password").getAttribute("aria-invalid"), "true");
    await screenshot(page, "app-signup-weak-password");
    await page.getByLabel("Password").fill(password);
    await screenshot(page, "app-signup");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.getByRole("heading", { name: "Forms", level: 1 }).waitFor();
    await page.getByRole("heading", { name: "No forms yet" }).waitFor();
    assert.match(page.url(), /\/app\/forms$/);
    const cookies = await context.cookies(sys.url);
    const session = cookies.find((c) => c.name === "formsvc_session")!;
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, "Lax");
    assert.ok(cookies.find((c) => c.name === "formsvc_csrf" && !c.httpOnly));
    assert.equal(await page.getByLabel("Workspace", { exact: true }).inputValue() !== "", true, "the personal workspace is selected");
    await screenshot(page, "app-forms-empty");
  });

  it("builds a form with every block type, reorders, renames a column, adds hidden and calculated fields, and saves", async () => {
    await page.getByRole("button", { name: "New form" }).first().click();
    await page.getByRole("dialog", { name: "New form" }).getByRole("button", { name: /^Blank form/ }).click();
    await page.getByLabel("Form name").waitFor();
    formId = /\/app\/forms\/([^/]+)\/edit/.exec(page.url())![1];
    await page.getByLabel("Form name").fill("Conference sign-up");
    await page.getByLabel("Title on the page").fill("Conference sign-up");

    // Every block, in the plan's order, except the paragraph, added last and moved into place with the keyboard.
    const addOrder = plan.filter((b) => b.type !== "PARAGRAPH").concat(plan.filter((b) => b.type === "PARAGRAPH"));
    for (const b of addOrder) {
      await page.getByLabel("Block type").selectOption({ label: blockTypeLabels[b.type as BlockType] });
      await page.getByRole("button", { name: "Add block" }).click();
    }
    assert.equal(await page.locator("[data-block-index]").count(), plan.length);
    // The paragraph is last: move it up above the page break and the two questions after it.
    const last = plan.length - 1;
    const focusedOn = (label: string) =>
      page.waitForFunction((l) => document.activeElement?.getAttribute("aria-label") === l, label, { timeout: 5_000 });
    await editorBlock(page, last).getByRole("button", { name: `Move block ${last + 1} up` }).click();
    // Focus follows the moved block's "up" button, so the keyboard carries on from there.
    await focusedOn(`Move block ${last} up`);
    await page.keyboard.press("Enter");
    await focusedOn(`Move block ${last - 1} up`);
    await page.keyboard.press("Enter");
    await focusedOn(`Move block ${last - 2} up`);
    const types = await page.locator("[data-block-index]").evaluateAll((els) => els.map((e) => e.getAttribute("data-block-type")));
    assert.deepEqual(types, plan.map((b) => b.type), "the paragraph now sits before the page break");

    for (const [i, b] of plan.entries()) {
      const card = editorBlock(page, i);
      if (b.question) await card.getByLabel("Question").fill(b.question);
      if (b.text) await card.getByLabel(b.type === "HEADING" ? "Heading text" : "Paragraph text").fill(b.text);
      if (b.options) {
        for (let j = 2; j < b.options.length; j++) await card.getByRole("button", { name: "Add option" }).click();
        for (const [j, text] of b.options.entries()) await card.getByLabel(`Option ${j + 1} of block ${i + 1}`).fill(text);
      }
    }
    // The name question: required, and its column renamed (a block's settings show while it is selected).
    const select = (i: number) => editorBlock(page, i).getByLabel("Question").click();
    await select(1);
    await editorBlock(page, 1).getByLabel("Required").check();
    await editorBlock(page, 1).getByLabel("Answer key").fill("full_name");
    await select(4);
    await editorBlock(page, 4).getByLabel("Smallest answer").fill("0");
    await select(11);
    await editorBlock(page, 11).getByLabel("Steps").selectOption("5");

    // Hidden and calculated fields are folded under the form until opened.
    await page.locator("summary").filter({ hasText: "Hidden fields" }).click();
    await page.getByRole("button", { name: "Add hidden field" }).click();
    assert.equal(await page.getByLabel("Hidden field 1 name").inputValue(), "utm_source");
    await page.locator("summary").filter({ hasText: "Calculated fields" }).click();
    await page.getByRole("button", { name: "Add calculated field" }).click();
    await page.getByLabel("Calculated field 1 name").fill("excitement_doubled");
    await page.getByLabel("Calculated field 1 formula").fill("0");
    await screenshot(page, "app-editor");
    await save(page);

    // Keys exist now: the calculated field uses the rating's.
    const questions = await page.evaluate(async (id) => (await (await fetch(`/app/api/forms/${id}/questions`)).json()).items, formId);
    const ratingKey = questions.find((q: { type: string }) => q.type === "RATING").key;
    assert.deepEqual(
      questions.map((q: { label: string }) => q.label).slice(0, 4),
      ["Your full name".replace("Your full name", "full_name"), "Email address", "About you", "Age"],
    );
    await page.getByLabel("Calculated field 1 formula").fill(`${ratingKey} * 2`);
    await save(page);
    const saved = await page.evaluate(async (id) => (await fetch(`/app/api/forms/${id}`)).json(), formId);
    assert.equal(saved.document.blocks.length, plan.length);
    assert.equal(saved.document.blocks[1].fieldName, "full_name");
    assert.equal(saved.document.blocks[1].required, true);
    assert.deepEqual(saved.document.blocks[9].options.map((o: { text: string }) => o.text), ["Talks", "Workshops", "Party"]);
    assert.deepEqual(saved.document.hiddenFields, [{ name: "utm_source" }]);
    assert.equal(saved.document.calculatedFields[0].expression, `${ratingKey} * 2`);
    assert.equal(saved.status, "draft");
  });

  it("previews the draft, publishes it, and is refused hiding the branding on the free plan, with the reason", async () => {
    await page.getByRole("link", { name: "Preview", exact: true }).click();
    const frame = page.frameLocator("iframe.preview-frame");
    await frame.getByLabel("Your full name").waitFor();
    assert.equal(await frame.getByRole("heading", { level: 1 }).textContent(), "Conference sign-up");
    await screenshot(page, "app-preview");
    assert.equal((await fetch(`${sys.url}/f/${formId}`)).status, 404, "a draft has no public page");

    await page.getByRole("button", { name: "Publish" }).click();
    await page.locator(".page-head .badge").filter({ hasText: "Published" }).waitFor();
    await page.getByRole("link", { name: "Open public page" }).waitFor();
    assert.equal((await fetch(`${sys.url}/f/${formId}`)).status, 200);

    await page.getByRole("link", { name: "Settings", exact: true }).click();
    const branding = page.getByLabel("Show “Made with formsvc” on the form");
    assert.equal(await branding.isChecked(), true);
    await branding.uncheck();
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByText("Branding was not changed.").waitFor();
    assert.match(await page.locator(".inline-error").textContent() ?? "", /Free plan, which does not include it/);
    assert.equal(await branding.isChecked(), true, "the toggle shows what is in force");
    await screenshot(page, "app-settings");
    await page.getByLabel("Submit button label").fill("Register");
    await page.getByRole("button", { name: "Save settings" }).click();
    await notice(page, "Settings saved.");
  });

  it("a respondent fills in the form at /f/:id in a second browser context", async () => {
    const respondent = await browser.newContext();
    try {
      const r = await respondent.newPage();
      const rProblems = watchPage(r, [400, 401, 403, 404]);
      await r.goto(`${sys.url}/f/${formId}?utm_source=newsletter`);
      await r.getByLabel("Your full name").fill("Ada Lovelace");
      await r.getByLabel("Email address", { exact: true }).fill("ada@example.com");
      await r.getByLabel("About you", { exact: true }).fill("I program the Analytical Engine.");
      await r.getByLabel("Age", { exact: true }).fill("36");
      await r.getByLabel("Phone number", { exact: true }).fill("+44 20 7946 0000");
      await r.getByLabel("Your website", { exact: true }).fill("https://ada.example.com");
      await r.getByLabel("Arrival date", { exact: true }).fill("2026-06-01");
      await r.getByLabel("VIP", { exact: true }).check();
      await r.getByLabel("Talks", { exact: true }).check();
      await r.getByLabel("Party", { exact: true }).check();
      await r.getByLabel("T-shirt size", { exact: true }).selectOption({ label: "M" });
      await r.getByRole("radio", { name: "4 of 5" }).check();
      await r.getByRole("button", { name: "Next" }).click();
      await r.getByLabel("Upload your CV").setInputFiles({ name: "cv.txt", mimeType: "text/plain", buffer: Buffer.from("Ada Lovelace, CV\n") });
      await r.getByText("cv.txt", { exact: false }).waitFor();
      await drawSignature(r, 3);
      await r.getByRole("button", { name: "Register" }).click();
      await r.getByRole("heading", { name: "Thank you!" }).waitFor();
      assert.deepEqual(rProblems, []);
    } finally {
      await respondent.close();
    }
  });

  it("sees the response in the table, opens it against its version, and exports CSV", async () => {
    await page.getByRole("link", { name: "Responses", exact: true }).click();
    const row = page.locator("tbody tr[data-response-id]").first();
    await row.waitFor();
    const heads = await page.locator(".responses-table thead th").allTextContents();
    for (const label of ["full_name", "Email address", "Ticket", "Interests", "T-shirt size", "How excited are you?", "Upload your CV", "Sign here", "utm_source", "Respondent country", "excitement_doubled"]) {
      assert.ok(heads.includes(label), `column ${label} in ${heads.join(" | ")}`);
    }
    const text = await row.textContent();
    for (const shown of ["Ada Lovelace", "ada@example.com", "VIP", "Talks, Party", "M", "newsletter", "Completed"]) assert.ok(text!.includes(shown), `${shown} in ${text}`);
    const cvLink = row.getByRole("link", { name: "cv.txt" });
    assert.match((await cvLink.getAttribute("href"))!, /\/files\/[^?]+\?expires=\d+&signature=/);
    const cv = await fetch((await cvLink.getAttribute("href"))!);
    assert.equal(await cv.text(), "Ada Lovelace, CV\n");
    const doubled = heads.indexOf("excitement_doubled");
    assert.equal((await row.locator("td, th").nth(doubled).textContent())?.trim(), "8");
    await screenshot(page, "app-responses");

    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Export CSV" }).click()]);
    const csv = readFileSync((await download.path())!, "utf8");
    assert.match(download.suggestedFilename(), /^Conference_sign-up-responses\.csv$/);
    assert.match(csv, /full_name/);
    assert.match(csv, /Ada Lovelace/);
    assert.match(csv, /"Talks, Party"/);

    await row.getByRole("link", { name: /View response/ }).click();
    await page.getByRole("heading", { name: "Response" }).waitFor();
    assert.match((await page.locator(".response .muted").first().textContent())!, /answered version \d+/);
    assert.ok(await page.locator(".answers").getByText("I program the Analytical Engine.").isVisible());
    assert.ok(await page.locator(".answers").getByRole("link", { name: "signature.png" }).isVisible());
    await screenshot(page, "app-response");
    await page.getByRole("link", { name: "← All responses" }).click();
    await row.waitFor();
  });

  it("shows on the Settings tab the files the form's responses hold against its storage quota", async () => {
    await page.getByRole("link", { name: "Settings", exact: true }).click();
    const card = page.locator("section.card").filter({ has: page.getByRole("heading", { name: "Files" }) });
    await card.getByText("Responses hold").waitFor();
    // The CV and the signature's PNG.
    assert.match((await card.textContent())!, /Responses hold 2 files, [\d.]+ (bytes|KB) of this form's 1 GB of storage\./);
    assert.ok(await card.getByRole("meter", { name: "Storage used" }).isVisible());
    await screenshot(page, "app-settings-files");
  });

  it("creates an API key shown once with a copy button, and uses it on /api/v1/forms", async () => {
    await openAccountMenu(page);
    await page.getByRole("link", { name: "API keys", exact: true }).click();
    await page.getByRole("heading", { name: "No API keys" }).waitFor();
    await page.getByLabel("Key name").fill("journey");
    await page.getByRole("button", { name: "Create API key" }).click();
    const field = page.getByLabel("New API key");
    await field.waitFor();
    apiKey = await field.inputValue();
    assert.match(apiKey, /^fk-[A-Za-z0-9_-]{43,}$/);
    await page.getByRole("button", { name: "Copy" }).click();
    await page.getByText("Copied to the clipboard.").waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), apiKey);
    await page.locator("tbody tr").filter({ hasText: "journey" }).waitFor();
    assert.ok((await page.locator("tbody tr").first().textContent())!.includes(apiKey.slice(0, 12)), "the list shows the prefix");
    await screenshot(page, "app-api-keys");

    // From this test's own code, as an integrator would.
    const api = apiClient(sys.url, apiKey);
    const forms = await api("GET", "/forms");
    assert.equal(forms.status, 200);
    assert.ok(forms.body.items.some((f: { id: string; status: string }) => f.id === formId && f.status === "published"));
    const subs = await api("GET", `/forms/${formId}/submissions?filter=completed`);
    assert.equal(subs.body.items.length, 1);

    await page.getByRole("button", { name: "Done" }).click();
    await page.reload();
    await page.locator("tbody tr").filter({ hasText: "journey" }).waitFor();
    assert.equal(await page.getByLabel("New API key").count(), 0, "the key is never shown again");
    assert.doesNotMatch((await page.content()), new RegExp(apiKey.slice(12)));
    assert.match((await page.locator("tbody tr").first().textContent())!, /just now|minute/, "last used is shown");
  });

  it("adds a webhook to a local receiver, sees the delivery, its attempts, resends it, and sends a test event", async () => {
    await page.goto(`${sys.url}/app/forms/${formId}/integrations`);
    await page.getByRole("heading", { name: "No webhooks yet" }).waitFor();
    await page.getByRole("button", { name: "Add webhook" }).click();
    await page.getByLabel("Endpoint URL").fill(receiver.url);
    await page.getByLabel("Signing secret").fill("journey-secret");
    await page.getByRole("button", { name: "Add header" }).click();
    await page.getByLabel("Header 1 name").fill("X-Journey");
    await page.getByLabel("Header 1 value").fill("yes");
    await page.getByRole("button", { name: "Add webhook" }).click();
    await notice(page, "Webhook added.");
    await page.locator(".webhook").filter({ hasText: receiver.url }).waitFor();
    assert.equal(await page.locator(".webhook-secret").textContent(), "journey-secret", "the secret is shown whole once");
    await page.getByRole("button", { name: "Done" }).click();
    assert.equal(await page.locator(".webhook-secret").count(), 0);

    // A response completed from this test's code is delivered to the receiver.
    const sent = await fetch(`${sys.url}/f/${formId}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ answers: {}, completed: false }),
    });
    const { responseId } = await sent.json();
    const questions = (await apiClient(sys.url, apiKey)("GET", `/forms/${formId}/questions`)).body.items;
    const nameKey = questions.find((q: { label: string }) => q.label === "full_name").key;
    const done = await fetch(`${sys.url}/f/${formId}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ responseId, answers: { [nameKey]: "Charles Babbage" }, completed: true }),
    });
    assert.equal(done.status, 200);
    await receiver.waitFor(1);
    const first = receiver.received[0];
    assert.equal(first.body.eventType, "FORM_RESPONSE");
    assert.equal(first.body.data.responseId, responseId);
    assert.equal(first.headers["x-journey"], "yes");
    assert.equal(first.headers["x-service-signature"], createHmac("sha256", "journey-secret").update(first.raw).digest("base64"));

    const hookId = await page.locator(".webhook").first().getAttribute("data-webhook-id");
    await newestDeliveryReads(apiClient(sys.url, apiKey), hookId!, "succeeded");
    const deliveries = page.locator(".deliveries-table tbody tr[data-delivery-id]");
    await page.getByRole("button", { name: "Refresh deliveries" }).click();
    await deliveries.filter({ hasText: "Succeeded" }).first().waitFor();
    const row = deliveries.first();
    assert.match((await row.textContent())!, /FORM_RESPONSE.*Succeeded.*HTTP 200/);
    await row.getByRole("button", { name: "Attempts" }).click();
    await page.getByText("Attempt 1", { exact: false }).waitFor();

    await row.getByRole("button", { name: "Resend" }).click();
    await notice(page, "Sent again: the receiver accepted it.");
    await receiver.waitFor(2);
    assert.equal(receiver.received[1].body.eventId, first.body.eventId, "the same event again");
    assert.equal(receiver.received[1].raw.toString(), first.raw.toString());
    await deliveries.first().locator("td.num").filter({ hasText: "2" }).waitFor();

    await page.getByRole("button", { name: "Send test event" }).click();
    await notice(page, "Test event delivered.");
    await receiver.waitFor(3);
    assert.equal(receiver.received[2].body.test, true);
    // Built from the form's real questions: the same questionIds as the real response's fields.
    assert.deepEqual(
      receiver.received[2].body.data.fields.map((f: { questionId: string }) => f.questionId),
      receiver.received[0].body.data.fields.map((f: { questionId: string }) => f.questionId),
    );
    await deliveries.filter({ hasText: "Test event" }).first().waitFor();
    await deliveries.filter({ hasText: "Test event" }).first().getByRole("button", { name: "Attempts" }).click();
    await page.locator(".attempts").filter({ hasText: "sent by hand" }).first().waitFor();
    await screenshot(page, "app-integrations");

    // Edit: disable, and the webhook says so; enable again.
    await page.getByRole("button", { name: "Edit" }).click();
    await page.getByLabel("Enabled").uncheck();
    await page.getByRole("button", { name: "Save webhook" }).click();
    await notice(page, "Webhook saved.");
    await page.locator(".webhook .badge").filter({ hasText: "Disabled" }).waitFor();
    const hooks = (await apiClient(sys.url, apiKey)("GET", `/webhooks?formId=${formId}`)).body.items;
    // Saving without typing a secret keeps it; reads show it masked.
    assert.deepEqual([hooks[0].enabled, hooks[0].headers, hooks[0].secret], [false, { "X-Journey": "yes" }, "…"]);
  });

  it("deletes the API key on the page, and /api/v1 answers 401 at once", async () => {
    await openAccountMenu(page);
    await page.getByRole("link", { name: "API keys", exact: true }).click();
    await page.getByRole("button", { name: "Delete key journey" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete the key “journey”?" });
    await dialog.waitFor();
    await dialog.getByRole("button", { name: "Delete key" }).click();
    await page.getByRole("heading", { name: "No API keys" }).waitFor();
    const refused = await apiClient(sys.url, apiKey)("GET", "/forms");
    assert.equal(refused.status, 401);
    assert.deepEqual(refused.body, { error: "invalid API key" });
  });

  it("closes and reopens the form, moves it to the Trash and restores it", async () => {
    await page.goto(`${sys.url}/app/forms/${formId}/edit`);
    await page.getByRole("button", { name: "Close" }).click();
    await page.locator(".page-head .badge").filter({ hasText: "Closed" }).waitFor();
    assert.match(await (await fetch(`${sys.url}/f/${formId}`)).text(), /This form is closed/);
    await page.getByRole("button", { name: "Reopen" }).click();
    await page.locator(".page-head .badge").filter({ hasText: "Published" }).waitFor();

    await page.getByRole("button", { name: "Move to Trash" }).click();
    await page.getByRole("dialog", { name: "Move to Trash?" }).getByRole("button", { name: "Move to Trash" }).click();
    await page.getByRole("heading", { name: "Forms", level: 1 }).waitFor();
    await page.getByRole("heading", { name: "No forms yet" }).waitFor();
    assert.equal((await fetch(`${sys.url}/f/${formId}`)).status, 404);

    await page.getByRole("link", { name: "Trash", exact: true }).click();
    await page.getByRole("row").filter({ hasText: "Conference sign-up" }).waitFor();
    await screenshot(page, "app-trash");
    await page.getByRole("button", { name: "Restore Conference sign-up" }).click();
    await page.getByRole("heading", { name: "The Trash is empty" }).waitFor();
    await page.getByRole("link", { name: "Forms", exact: true }).click();
    const listed = page.getByRole("row").filter({ hasText: "Conference sign-up" });
    await listed.waitFor();
    assert.match((await listed.textContent())!, /Published\s*2/, "back as published, with its two responses");
    assert.equal((await fetch(`${sys.url}/f/${formId}`)).status, 200);
    await screenshot(page, "app-forms");
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, "app-forms-mobile");
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it("creates a workspace, invites by email and revokes an invitation; the invited person joins from her own Workspaces page; switches back, and shows the plan", async () => {
    const other = `grace.${Date.now()}@example.com`;
    await sys.cli("user:create", "--email", other, "--name", "Grace Hopper");
    await page.getByRole("link", { name: "Workspaces", exact: true }).click();
    await page.getByText("Not included: forms show “Made with formsvc”").first().waitFor();
    await page.getByLabel("Workspace name").fill("Analytical team");
    await page.getByRole("button", { name: "Create workspace" }).click();
    await notice(page, "Workspace “Analytical team” created; it is now the current one.");
    const team = page.locator(".workspace").filter({ hasText: "Analytical team" });
    await team.locator(".badge").filter({ hasText: "Current" }).waitFor();
    await team.getByLabel("Invite by email").fill("nobody.yet@example.com");
    await team.getByRole("button", { name: "Invite" }).click();
    await notice(page, "Invitation mailed to nobody.yet@example.com.");
    await team.getByRole("button", { name: "Revoke invitation to nobody.yet@example.com" }).click();
    await notice(page, "The invitation to nobody.yet@example.com is revoked; its link no longer works.");
    await team.getByRole("button", { name: "Revoke invitation to nobody.yet@example.com" }).waitFor({ state: "detached" });
    // Someone with an account is mailed a link too, and joins only by accepting it.
    await team.getByLabel("Invite by email").fill(other);
    await team.getByRole("button", { name: "Invite" }).click();
    await notice(page, `Invitation mailed to ${other}.`);
    await team.getByRole("button", { name: `Revoke invitation to ${other}` }).waitFor();
    // Grace sets a password by a mailed link, which proves her address, and signs in in a browser of her own:
    // her Workspaces page offers the invitation.
    const grace = appClient(sys.url, "198.51.100.150");
    await grace("GET", "/session");
    assert.equal((await grace("POST", "/auth/password-reset", { email: other })).status, 202);
    const token = await mailedFileLinkToken(sys.env.DATA_DIR, other, "/app/reset-password");
    const reset = await grace("POST", "/auth/password-reset/complete", { token, password: "Grace's compiler passphrase" });
    assert.equal(reset.status, 200, JSON.stringify(reset.body));
    const gracesBrowser = await browser.newContext();
    try {
      const gracesPage = await gracesBrowser.newPage();
      await gracesPage.goto(`${sys.url}/app/signin`);
      await gracesPage.getByLabel("Email").fill(other);
      await gracesPage.getByLabel("Password").fill("Grace's compiler passphrase");
      await gracesPage.getByRole("button", { name: "Sign in" }).click();
      await gracesPage.getByRole("heading", { name: "Forms", level: 1 }).waitFor();
      await gracesPage.getByRole("link", { name: "Workspaces", exact: true }).click();
      await gracesPage.getByRole("heading", { name: "Invitations for you" }).waitFor();
      await gracesPage.getByRole("button", { name: "Join Analytical team" }).click();
      await notice(gracesPage, "You joined Analytical team as a member; it is now the current workspace.");
      await gracesPage.getByRole("heading", { name: "Invitations for you" }).waitFor({ state: "detached" });
      await openAccountMenu(gracesPage);
      await gracesPage.locator("header").getByRole("link", { name: "Security", exact: true }).waitFor();
      assert.equal(await gracesPage.getByRole("link", { name: "Administration" }).count(), 0, "Grace does not administer the installation");
    } finally {
      await gracesBrowser.close();
    }
    // Ada's page, opened again, shows Grace as a member and no pending invitation.
    await page.getByRole("link", { name: "Forms", exact: true }).click();
    await page.getByRole("link", { name: "Workspaces", exact: true }).click();
    await team.getByRole("button", { name: "Remove Grace Hopper" }).waitFor();
    assert.equal(await team.getByRole("button", { name: `Revoke invitation to ${other}` }).count(), 0);
    await team.getByLabel("Role of Grace Hopper").selectOption("admin");
    await notice(page, "Grace Hopper is now an admin of Analytical team.");
    await screenshot(page, "app-workspaces");
    // Ada made this installation's first account: she administers it, and plans are set there.
    await openAccountMenu(page);
    await page.getByRole("link", { name: "Administration", exact: true }).click();
    await page.getByRole("heading", { name: "Administration", level: 1 }).waitFor();
    await page.getByRole("row", { name: "Grace Hopper's workspace" }).waitFor();
    await page.getByLabel("Plan of Analytical team").selectOption("pro");
    await notice(page, "Analytical team is now on the Pro plan.");
    await screenshot(page, "app-administration");
    await page.getByRole("link", { name: "Workspaces", exact: true }).click();
    await team.getByText("Included: forms may hide “Made with formsvc”").waitFor();

    await page.getByRole("link", { name: "Forms", exact: true }).click();
    await page.getByRole("heading", { name: "No forms yet" }).waitFor();
    await page.getByLabel("Workspace", { exact: true }).selectOption({ label: "Ada Lovelace's workspace" });
    await page.getByRole("row").filter({ hasText: "Conference sign-up" }).waitFor();
  });

  it("signs out, is refused a wrong password, signs in again, and signs out everywhere", async () => {
    await openAccountMenu(page);
    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    assert.equal((await page.evaluate(async () => (await fetch("/app/api/forms")).status)), 401);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill("not the password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("email or password is wrong").waitFor();
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("row").filter({ hasText: "Conference sign-up" }).waitFor();

    // Signed in in a second browser too; Sign out everywhere ends both.
    const other = await browser.newContext();
    const otherPage = await other.newPage();
    await otherPage.goto(`${sys.url}/app/signin`);
    await otherPage.getByLabel("Email").fill(email);
    await otherPage.getByLabel("Password").fill(password);
    await otherPage.getByRole("button", { name: "Sign in" }).click();
    await otherPage.getByRole("heading", { name: "Forms", level: 1 }).waitFor();
    await openAccountMenu(page);
    await page.getByRole("button", { name: "Sign out everywhere" }).click();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await notice(page, "You are signed out everywhere (2 sessions ended).");
    assert.equal(await otherPage.evaluate(async () => (await fetch("/app/api/workspaces")).status), 401);
    await other.close();
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("row").filter({ hasText: "Conference sign-up" }).waitFor();
    assert.deepEqual(problems, []);
  });
});

/** A client of /app/api as the page is: cookies kept, the CSRF header sent back on changes. */
function appClient(baseUrl: string, address: string) {
  const jar = new Map<string, string>();
  return async (method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = { "x-forwarded-for": address };
    if (jar.size) headers.cookie = [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
    if (body !== undefined) headers["content-type"] = "application/json";
    if (method !== "GET" && jar.has("formsvc_csrf")) headers["x-csrf-token"] = decodeURIComponent(jar.get("formsvc_csrf")!);
    const res = await fetch(`${baseUrl}/app/api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    for (const cookie of res.headers.getSetCookie()) {
      const pair = cookie.split(";")[0];
      const name = pair.slice(0, pair.indexOf("="));
      if (/Max-Age=0/.test(cookie)) jar.delete(name);
      else jar.set(name, pair.slice(pair.indexOf("=") + 1));
    }
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
}

describe("the app's API against the running services", () => {
  let n = 0;
  const person = async (label: string) => {
    const call = appClient(sys.url, `198.51.100.${++n}`);
    await call("GET", "/session");
    const email = `${label}.${Date.now()}.${n}@example.com`;
    const signedUp = await call("POST", "/auth/signup", { email, name: label, password: "correct horse battery" });
    assert.equal(signedUp.status, 201, JSON.stringify(signedUp.body));
    const workspace = (await call("GET", "/workspaces")).body.items[0];
    return { call, email, workspace, user: signedUp.body.user };
  };

  it("keeps people's forms apart, and checks status moves, invites and test events", async () => {
    const ada = await person("ada");
    const eve = await person("eve");
    const form = (await ada.call("POST", "/forms", { workspaceId: ada.workspace.id, name: "Private" })).body;
    for (const path of [`/forms/${form.id}`, `/forms/${form.id}/submissions`, `/forms/${form.id}/webhooks`, `/forms/${form.id}/preview`]) {
      assert.equal((await eve.call("GET", path)).status, 404, path);
    }
    assert.equal((await eve.call("POST", `/forms/${form.id}/publish`, {})).status, 404);
    assert.equal((await eve.call("POST", "/forms", { workspaceId: ada.workspace.id })).status, 404);
    assert.equal((await eve.call("POST", `/workspaces/${ada.workspace.id}/invites`, { email: eve.email })).status, 404, "only members invite");

    const reopen = await ada.call("POST", `/forms/${form.id}/reopen`, {});
    assert.deepEqual([reopen.status, reopen.body.error], [409, "only a closed form can be reopened"]);
    assert.equal((await ada.call("POST", `/forms/${form.id}/close`, {})).status, 409, "a draft cannot be closed");
    assert.equal((await ada.call("POST", `/forms/${form.id}/publish`, {})).body.status, "published");

    // Eve is invited and accepts by the mailed link, signed in (written under DATA_DIR/mail).
    const invited = await ada.call("POST", `/workspaces/${ada.workspace.id}/invites`, { email: eve.email.toUpperCase() });
    assert.equal(invited.status, 201);
    const accepted = await eve.call("POST", "/invitations/accept", { token: await mailedFileLinkToken(sys.env.DATA_DIR, eve.email, "/app/accept-invite") });
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
    assert.equal((await eve.call("GET", `/forms/${form.id}`)).body.name, "Private", "a member sees the workspace's forms");
    const members = (await eve.call("GET", `/workspaces/${ada.workspace.id}/members`)).body.items;
    assert.deepEqual(members.map((m: { role: string }) => m.role), ["owner", "member"]);

    const hook = (await ada.call("POST", `/forms/${form.id}/webhooks`, { url: receiver.url, enabled: false })).body;
    const refused = await ada.call("POST", `/webhooks/${hook.id}/test`, {});
    assert.equal(refused.status, 409);
    assert.match(refused.body.error, /disabled/);
    assert.equal((await ada.call("PATCH", `/webhooks/${hook.id}`, { enabled: true })).body.enabled, true);
    const before = receiver.received.length;
    const test = await ada.call("POST", `/webhooks/${hook.id}/test`, {});
    assert.deepEqual([test.status, test.body.status, test.body.eventType, test.body.trigger, test.body.attempts], [200, "succeeded", "FORM_RESPONSE", "test", 1]);
    await receiver.waitFor(before + 1);
    assert.equal(receiver.received[before].body.data.formId, form.id);
    const attempts = (await ada.call("GET", `/webhooks/${hook.id}/deliveries/${test.body.id}/attempts`)).body.items;
    assert.deepEqual(attempts.map((a: { statusCode: number; manual: boolean }) => [a.statusCode, a.manual]), [[200, true]]);
    assert.equal((await ada.call("DELETE", `/webhooks/${hook.id}`)).status, 204);
  });

  it("signs in with the password only, limits a guesser without locking the owner out, refuses weak passwords, and keeps out a CLI-made user", async () => {
    const ada = await person("limited");
    const guesser = appClient(sys.url, "198.51.100.200");
    await guesser("GET", "/session");
    for (let i = 0; i < 10; i++) {
      const res = await guesser("POST", "/auth/signin", { email: ada.email, password: `guess number ${i}` });
      assert.deepEqual([res.status, res.body.error], [401, "email or password is wrong"]);
    }
    const limited = await guesser("POST", "/auth/signin", { email: ada.email, password: "correct horse battery" });
    assert.equal(limited.status, 429, "the guesser's address waits, even with the right password");
    // The owner, from their own address, is not locked out by the guesser.
    const owner = appClient(sys.url, "198.51.100.202");
    await owner("GET", "/session");
    assert.equal((await owner("POST", "/auth/signin", { email: ada.email, password: "correct horse battery" })).status, 200);

    const weak = await owner("POST", "/auth/signup", { email: `weak.${Date.now()}@example.com`, password: "12345678" });
    assert.deepEqual([weak.status, weak.body.error], [400, "password is too easy to guess: This is one of the ten most used passwords. Add another word or two; uncommon words are better."]);

    const { user } = await sys.cli("user:create", "--email", `cli.${Date.now()}@example.com`);
    const other = appClient(sys.url, "198.51.100.201");
    await other("GET", "/session");
    const noPassword = await other("POST", "/auth/signin", { email: user.email, password: "anything at all" });
    assert.deepEqual([noPassword.status, noPassword.body.error], [401, "email or password is wrong"]);
  });
});
