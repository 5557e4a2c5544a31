import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import axe from "axe-core";
import type { Browser, Page } from "playwright-core";
import { ensureAppBuilt } from "@formsvc/launcher/app-build.ts";
import { launchBrowser, screenshot, signedInContext, watchPage } from "./support/browser.ts";
import { signedUpPerson } from "./support/app-client.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";

// One question at a time against the whole running system: the owner turns it on in the app's Settings
// tab; respondents then answer a form with a rule (the company is asked of Pro only), recall (the plan
// question greets by the name just given) and two pages, one question per screen. In Chromium by
// keyboard only (Enter on, Shift+Enter back, Ctrl+Enter out of a long text, a required answer refusing),
// with a pick moving on by itself on a phone, without JavaScript (a page per question) and with reduced
// motion (no transition; axe finds nothing serious), and through single-use links. The stored responses
// hold the answers given.
// Screenshots: test-output/screenshots/one-question-*.png (1280 and 390 px).

let sys: TestSystem;
let browser: Browser;
let owner: Awaited<ReturnType<typeof signedUpPerson>>;
let formId = "";

const document = {
  title: "Trial sign-up",
  blocks: [
    { id: "b_name", key: "name", type: "SHORT_TEXT", question: "Your name", required: true },
    { id: "b_plan", key: "plan", type: "MULTIPLE_CHOICE", question: "Which plan, {{name}}?", required: true, options: [{ id: "o_free", text: "Free" }, { id: "o_pro", text: "Pro" }] },
    { id: "b_company", key: "company", type: "SHORT_TEXT", question: "Company name", required: true },
    { id: "pb", type: "PAGE_BREAK" },
    { id: "h_more", type: "HEADING", text: "A little more" },
    { id: "b_note", key: "note", type: "LONG_TEXT", question: "Anything else?" },
    { id: "b_email", key: "email", type: "EMAIL", question: "Your email" },
  ],
  logic: [{ when: { conditions: [{ question: "b_plan", operator: "EQUALS", value: "o_pro" }] }, then: [{ action: "SHOW", block: "b_company" }] }],
};

before(async () => {
  ensureAppBuilt(undefined, { quiet: true });
  [sys, browser] = await Promise.all([startTestSystem("one_question"), launchBrowser()]);
  owner = await signedUpPerson(sys.url, "owner");
});
after(async () => {
  await browser?.close();
  await sys?.stop();
});

const focusedId = (page: Page) => page.evaluate(() => window.document.activeElement?.id ?? "");
const progressText = (page: Page) => page.locator("#hf-progress-label").innerText();
/** The screen shown: its section's question keys. */
const shownKeys = (page: Page) => page.locator(".hf-page.hf-current .hf-q:visible").evaluateAll((els) => els.map((el) => (el as HTMLElement).dataset.key));
const noSidewaysScroll = (page: Page) => page.evaluate(() => window.document.documentElement.scrollWidth <= window.document.documentElement.clientWidth);
const animationOf = (page: Page) => page.locator(".hf-page.hf-current").evaluate((el) => getComputedStyle(el).animationName);

async function completed(note: string) {
  return eventuallyPasses(
    async () => (await owner.call("GET", `/forms/${formId}/submissions?filter=completed&limit=100`)).body.items.find((s: any) => s.answers.note?.value === note),
    (found) => found !== undefined,
  );
}

describe("one question at a time", () => {
  it("is a toggle of the app's Settings tab", async () => {
    const created = await owner.call("POST", "/forms", { workspaceId: owner.workspace.id, name: "Trial", document });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    formId = created.body.id;
    assert.equal(created.body.settings.oneQuestionAtATime, false, "off by default");
    assert.equal((await owner.call("POST", `/forms/${formId}/publish`)).status, 200);
    const refused = await owner.call("PATCH", `/forms/${formId}`, { settings: { oneQuestionAtATime: "yes" } });
    assert.equal(refused.status, 400);
    assert.match(refused.body.error, /settings\.oneQuestionAtATime: Invalid input: expected boolean/);

    const context = await signedInContext(browser, sys.url, owner.cookies, { viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems = watchPage(page, []);
    await page.goto(`${sys.url}/app/forms/${formId}/settings`);
    const card = page.getByRole("group", { name: "While answering" });
    await card.getByLabel(/One question at a time/).check();
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByText("Settings saved.").waitFor();
    await card.scrollIntoViewIfNeeded();
    await screenshot(page, "one-question-setting", { fullPage: false });
    assert.equal((await owner.call("GET", `/forms/${formId}`)).body.settings.oneQuestionAtATime, true);
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("Chromium, keyboard only at 1280 px: Enter on, a required answer refusing, recall, Shift+Enter back, the rule skipping a question, Ctrl+Enter out of a long text", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const problems = watchPage(page, []);
    await page.goto(`${sys.url}/f/${formId}`);
    // The company waits for Pro: three questions on the path, then two on page two.
    assert.equal(await progressText(page), "Question 1 of 4");
    assert.deepEqual(await shownKeys(page), ["name"]);
    assert.equal(await page.locator("#hf-keys").isVisible(), true, "the keys are said");
    await page.keyboard.press("Tab");
    assert.equal(await focusedId(page), "q-b_name");

    await page.keyboard.press("Enter");
    await page.locator('[data-key="name"] .hf-error').filter({ hasText: "This question is required." }).waitFor();
    assert.deepEqual(await shownKeys(page), ["name"], "a required answer missing: no moving on");
    await page.keyboard.type("Ada");
    await screenshot(page, "one-question-1280");
    await page.keyboard.press("Enter");

    await page.getByText("Which plan, Ada?").waitFor();
    assert.deepEqual(await shownKeys(page), ["plan"]);
    assert.equal(await focusedId(page), "q-b_plan-o_free", "the focus on the new question's answer");
    assert.equal(await progressText(page), "Question 2 of 4");
    assert.equal(await animationOf(page), "hf-in", "the screen comes in");
    // A partial response after each question.
    await eventuallyPasses(
      async () => (await owner.call("GET", `/forms/${formId}/submissions?filter=partial&limit=100`)).body.items.filter((s: any) => s.answers.name?.value === "Ada"),
      (found) => found.length === 1,
    );

    await page.keyboard.press("Shift+Enter");
    await page.getByLabel("Your name").waitFor();
    assert.equal(await focusedId(page), "q-b_name");
    assert.equal(await page.getByLabel("Your name").inputValue(), "Ada");
    assert.equal(await animationOf(page), "hf-in-back", "going back comes from above");
    await page.keyboard.press("Enter");
    await page.getByText("Which plan, Ada?").waitFor();
    await page.keyboard.press("Enter");
    await page.locator('[data-key="plan"] .hf-error').filter({ hasText: "This question is required." }).waitFor();
    // Space picks Free (the keyboard does not move on by itself), Enter moves on past the company.
    await page.keyboard.press("Space");
    assert.deepEqual(await shownKeys(page), ["plan"]);
    await page.keyboard.press("Enter");

    await page.getByLabel("Anything else?").waitFor();
    assert.equal(await focusedId(page), "q-b_note");
    assert.equal(await progressText(page), "Question 3 of 4");
    assert.equal(await page.getByRole("heading", { name: "A little more" }).isVisible(), true, "the heading with the question after it");
    await page.keyboard.type("line one");
    await page.keyboard.press("Enter");
    await page.keyboard.type("line two");
    assert.deepEqual(await shownKeys(page), ["note"], "Enter is a new line in a long text");
    await page.keyboard.press("Control+Enter");

    await page.getByLabel("Your email").waitFor();
    assert.equal(await progressText(page), "Question 4 of 4");
    await page.keyboard.type("not an address");
    await page.keyboard.press("Enter");
    await page.locator('[data-key="email"] .hf-error').filter({ hasText: "Enter a valid email address." }).waitFor();
    await page.getByLabel("Your email").fill("ada@example.com");
    await page.keyboard.press("Shift+Enter");
    await page.getByLabel("Anything else?").waitFor();
    assert.equal(await focusedId(page), "q-b_note");
    assert.equal(await page.getByLabel("Anything else?").inputValue(), "line one\nline two");
    await page.keyboard.press("Control+Enter");
    await page.getByLabel("Your email").waitFor();
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Thank you!" }).waitFor();
    assert.deepEqual(problems, []);
    await context.close();

    const stored = (await completed("line one\nline two")).answers;
    assert.deepEqual(
      ["name", "plan", "company", "email"].map((key) => stored[key]?.value),
      ["Ada", "o_free", null, "ada@example.com"],
    );
  });

  it("on a phone (390 px): a pick of Pro moves on by itself to the question it reveals, with no sideways scroll", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
    const page = await context.newPage();
    const problems = watchPage(page, []);
    await page.goto(`${sys.url}/f/${formId}`);
    await page.getByLabel("Your name").fill("Grace");
    await page.getByRole("button", { name: "Next" }).tap();
    await page.getByText("Which plan, Grace?").waitFor();
    await screenshot(page, "one-question-390");
    await page.getByText("Pro", { exact: true }).tap();
    await page.getByLabel("Company name").waitFor();
    assert.equal(await progressText(page), "Question 3 of 5", "Pro's path has the company");
    assert.equal(await noSidewaysScroll(page), true);
    await page.getByLabel("Company name").fill("Navy");
    await page.getByRole("button", { name: "Next" }).tap();
    await page.getByLabel("Anything else?").fill("phone");
    assert.equal(await noSidewaysScroll(page), true);
    await page.getByRole("button", { name: "Next" }).tap();
    await page.getByRole("button", { name: "Submit" }).tap();
    await page.getByRole("heading", { name: "Thank you!" }).waitFor();
    assert.deepEqual(problems, []);
    await context.close();
    const stored = (await completed("phone")).answers;
    assert.deepEqual([stored.name.value, stored.plan.value, stored.company.value], ["Grace", "o_pro", "Navy"]);
  });

  it("without JavaScript: a page per question, the progress and recall from the server, Back, the rule followed", async () => {
    for (const [width, shot] of [
      [1280, "one-question-nojs-1280"],
      [390, "one-question-nojs-390"],
    ] as const) {
      const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width, height: 844 } });
      const page = await context.newPage();
      await page.goto(`${sys.url}/f/${formId}`);
      assert.equal(await progressText(page), "Question 1 of 4");
      assert.equal(await page.locator("#hf-keys").isVisible(), false, "no keys without script");
      // The browser's own check refuses a required answer missing (the page is a plain form).
      await page.getByRole("button", { name: "Next" }).click();
      assert.equal(await page.getByLabel("Your name").evaluate((input: HTMLInputElement) => input.validity.valueMissing), true);
      assert.equal(await progressText(page), "Question 1 of 4");
      await page.getByLabel("Your name").fill("Linus");
      await page.getByRole("button", { name: "Next" }).click();
      await page.getByText("Which plan, Linus?").waitFor();
      assert.equal(await progressText(page), "Question 2 of 4");
      assert.equal(await page.getByLabel("Your name").count(), 0, "one question on the page");
      await page.getByLabel("Free", { exact: true }).check();
      await screenshot(page, shot);
      assert.equal(await noSidewaysScroll(page), true);
      await page.getByRole("button", { name: "Next" }).click();
      await page.getByLabel("Anything else?").waitFor();
      assert.equal(await progressText(page), "Question 3 of 4", "the company passed over for Free");
      await page.getByRole("button", { name: "Back" }).click();
      assert.equal(await page.getByLabel("Free", { exact: true }).isChecked(), true);
      await page.getByRole("button", { name: "Next" }).click();
      await page.getByLabel("Anything else?").fill(`nojs ${width}`);
      await page.getByRole("button", { name: "Next" }).click();
      await page.getByLabel("Your email").fill("linus@example.com");
      await page.getByRole("button", { name: "Submit" }).click();
      await page.getByRole("heading", { name: "Thank you!" }).waitFor();
      await context.close();
      const stored = (await completed(`nojs ${width}`)).answers;
      assert.deepEqual([stored.name.value, stored.plan.value, stored.company?.value ?? null, stored.email.value], ["Linus", "o_free", null, "linus@example.com"]);
    }
  });

  it("a single-use link carries on from question to question and completes once, with and without JavaScript", async () => {
    const created = await owner.call("POST", "/forms", {
      workspaceId: owner.workspace.id,
      name: "By link",
      document: { ...document, blocks: document.blocks.filter((b) => b.id !== "b_email") },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id;
    const set = await owner.call("PATCH", `/forms/${id}`, { settings: { oneQuestionAtATime: true, requireSingleUseLink: true } });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.equal((await owner.call("POST", `/forms/${id}/publish`)).status, 200);
    const minted = await owner.call("POST", `/forms/${id}/links`, { count: 2 });
    assert.equal(minted.status, 201, JSON.stringify(minted.body));
    const tokens: string[] = minted.body.items.map((link: { url: string }) => new URL(link.url).searchParams.get("t"));
    for (const [token, script] of [
      [tokens[0], false],
      [tokens[1], true],
    ] as const) {
      const context = await browser.newContext({ javaScriptEnabled: script, viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      await page.goto(`${sys.url}/f/${id}?t=${token}`);
      await page.getByLabel("Your name").fill(script ? "Link JS" : "Link");
      await page.getByRole("button", { name: "Next" }).click();
      await page.getByLabel("Free", { exact: true }).check();
      await page.getByRole("button", { name: "Next" }).click();
      await page.getByLabel("Anything else?").fill(`by link ${script}`);
      await page.getByRole("button", { name: "Submit" }).click();
      await page.getByRole("heading", { name: "Thank you!" }).waitFor();
      const again = await page.goto(`${sys.url}/f/${id}?t=${token}`);
      assert.equal(again?.status(), 403, "the link is used up");
      await context.close();
    }
    const list = await owner.call("GET", `/forms/${id}/submissions?filter=completed&limit=100`);
    assert.deepEqual(list.body.items.map((s: any) => s.answers.note.value).sort(), ["by link false", "by link true"]);
  });

  it("with reduced motion: no transition; axe finds nothing serious at 390 px", async () => {
    // Without the page's CSP for axe's own script.
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, reducedMotion: "reduce", bypassCSP: true });
    const page = await context.newPage();
    const problems = watchPage(page, []);
    await page.goto(`${sys.url}/f/${formId}`);
    await page.getByLabel("Your name").fill("Barbara");
    await page.keyboard.press("Enter");
    await page.getByText("Which plan, Barbara?").waitFor();
    assert.equal(await animationOf(page), "none");
    await page.addScriptTag({ content: axe.source });
    const violations = await page.evaluate(async () => {
      const result = await (window as unknown as { axe: typeof axe }).axe.run(window.document);
      return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.help}`);
    });
    assert.deepEqual(violations, []);
    assert.deepEqual(problems, []);
    await context.close();
  });
});
