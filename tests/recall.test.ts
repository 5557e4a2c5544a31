import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { ensureAppBuilt } from "@formsvc/launcher/app-build.ts";
import { signedUpPerson } from "./support/app-client.ts";
import { launchBrowser, editorBlock, screenshot, signedInContext, watchPage } from "./support/browser.ts";
import { createUserWithKey, startTestSystem, type TestSystem } from "./support/system.ts";

// Recall against the whole running system: a form whose second question greets the respondent by the
// name just typed, whose second page asks "Why <plan>, <name>?" and whose thank-you screen thanks them by
// name with a calculated code. Answered in Chromium with JavaScript (the texts follow the answers as they
// are typed) and without it (the next page and the thank-you page come filled in by the server); a name
// with markup in it shows as text on both. Saving a recall that names nothing is refused, naming it, by
// the API and in the app (the editor and the Design tab).
// Screenshots: test-output/screenshots/recall-live.png, recall-thanks.png.

let sys: TestSystem;
let browser: Browser;
let ada: Awaited<ReturnType<typeof createUserWithKey>>;
let formId = "";

const name = "<b>Ada</b> & co";
const document = {
  title: "Recall",
  blocks: [
    { id: "b_name", key: "name", type: "SHORT_TEXT", question: "Your name", required: true },
    { id: "b_plan", key: "plan", type: "MULTIPLE_CHOICE", question: "Which plan, {{name|friend}}?", required: true, options: [{ id: "o_free", text: "Free" }, { id: "o_pro", text: "Pro" }] },
    { id: "pb", type: "PAGE_BREAK" },
    { id: "b_why", key: "why", type: "SHORT_TEXT", question: "Why {{plan}}, {{name}}?", description: "You came from {{ref|nowhere}}." },
  ],
  hiddenFields: [{ name: "ref" }],
  calculatedFields: [
    { name: "code", type: "TEXT", expression: '"C-" + why' },
    { name: "secret", type: "TEXT", expression: '"hush"' },
  ],
};
const thankYou = { title: "Thanks, {{name}}!", text: "Your code: {{code}}", buttonLabel: null, buttonUrl: null, redirectSeconds: null };

before(async () => {
  ensureAppBuilt(undefined, { quiet: true });
  [sys, browser] = await Promise.all([startTestSystem("recall"), launchBrowser()]);
  ada = await createUserWithKey(sys, "ada@example.com");
});
after(async () => {
  await browser?.close();
  await sys?.stop();
});

/** The texts of the page's question labels (legends and labels), as shown. */
const labelText = (page: Page, text: RegExp) => page.locator(".hf-label").filter({ hasText: text }).first();

describe("recall: {{key}} in owner texts", () => {
  it("refuses a recall that names nothing, a later question, or a calculated field in a question, naming it", async () => {
    const unknown = structuredClone(document);
    unknown.blocks[3].question = "Why {{plna}}?";
    const res = await ada.api("POST", "/forms", { workspaceId: ada.workspace.id, name: "Recall", document: unknown });
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'document.blocks[3].question: {{plna}}: no question key, hidden field or calculated field is named "plna"');
    assert.deepEqual(res.body.fields, [{ key: "document.blocks[3].question", message: '{{plna}}: no question key, hidden field or calculated field is named "plna"' }]);
    const later = structuredClone(document);
    later.blocks[0].question = "Your name ({{why}}, {{code}})";
    const refused = await ada.api("POST", "/forms", { workspaceId: ada.workspace.id, document: later });
    assert.equal(refused.status, 400);
    assert.deepEqual(
      refused.body.fields.map((f: { message: string }) => f.message),
      [
        '{{why}} names question "why", which does not come before this text: recall shows earlier answers',
        '{{code}} names calculated field "code", which is worked out when the response is completed: recall it on the thank-you screen',
      ],
    );
  });

  it("saves the form, and refuses a thank-you screen (or a translation) naming what the form lacks", async () => {
    const created = await ada.api("POST", "/forms", { workspaceId: ada.workspace.id, name: "Recall", document });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    formId = created.body.id;
    const bad = await ada.api("PATCH", `/forms/${formId}`, { settings: { thankYou: { ...thankYou, text: "Code {{cdoe}}" } } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error, 'settings.thankYou.text: {{cdoe}}: no question key, hidden field or calculated field is named "cdoe"');
    const translation = await ada.api("PATCH", `/forms/${formId}`, { settings: { languages: [{ language: "de", texts: { "b_why.question": "Warum {{plan}}, {{nme}}?" } }] } });
    assert.equal(translation.status, 400);
    assert.equal(translation.body.fields[0].key, 'settings.languages[0].texts["b_why.question"]');
    assert.equal((await ada.api("PATCH", `/forms/${formId}`, { settings: { thankYou } })).status, 200);
    // A document change that takes away what the thank-you screen recalls is refused as well.
    const { calculatedFields: _gone, ...withoutCode } = document;
    const orphaned = await ada.api("PATCH", `/forms/${formId}`, { document: withoutCode });
    assert.equal(orphaned.status, 400);
    assert.match(orphaned.body.error, /^settings\.thankYou\.text: \{\{code\}\}: no question key/);
    await sys.cli("form:publish", "--id", formId);
  });

  it("with JavaScript: texts follow the answers as they are typed, as text; the thank-you screen recalls the answers and the calculated code", async () => {
    const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
    const page = await context.newPage();
    const problems = watchPage(page, []);
    await page.goto(`${sys.url}/f/${formId}?ref=newsletter`);
    await labelText(page, /^Which plan, friend\?/).waitFor();
    await page.getByLabel("Your name").fill(name);
    // The question on the same page names the answer at once; its markup is text, never elements.
    const plan = labelText(page, /^Which plan, /);
    await labelText(page, /^Which plan, <b>Ada<\/b> & co\?/).waitFor();
    assert.equal(await plan.locator("b").count(), 0, "an answer never becomes markup");
    await page.getByLabel("Pro", { exact: true }).check();
    await screenshot(page, "recall-live");
    await page.getByRole("button", { name: "Next" }).click();
    // The next page's question recalls the option's text, not its id, and the description the hidden field.
    await page.getByLabel(`Why Pro, ${name}?`).fill("Speed");
    await page.getByText("You came from newsletter.").waitFor();
    await page.getByRole("button", { name: "Submit" }).click();
    await page.getByRole("heading", { name: `Thanks, ${name}!` }).waitFor();
    await page.getByText("Your code: C-Speed").waitFor();
    assert.equal(await page.locator("#hf-thanks b").count(), 0);
    await screenshot(page, "recall-thanks");
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("the JSON post tells the page only the calculated fields its thank-you screen recalls", async () => {
    const res = await fetch(`${sys.url}/f/${formId}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ answers: { name: "Grace", plan: "o_free", why: "Cost" }, completed: true }),
    });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.deepEqual(body.calculated, { code: "C-Cost" }, "the code is recalled; the secret is not told");
  });

  it("without JavaScript: the next page and the thank-you page come filled in by the server, escaped", async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${sys.url}/f/${formId}`);
    await labelText(page, /^Which plan, friend\?/).waitFor();
    assert.equal(await page.getByLabel(/^Why/).count(), 0, "one page at a time: the next page waits for the answers it recalls");
    await page.getByLabel("Your name").fill(name);
    await page.getByLabel("Free", { exact: true }).check();
    await page.getByRole("button", { name: "Next" }).click();
    await page.getByLabel(`Why Free, ${name}?`).fill("Price");
    assert.equal(await labelText(page, /^Why Free/).locator("b").count(), 0);
    await page.getByText("You came from nowhere.").waitFor();
    await page.getByRole("button", { name: "Submit" }).click();
    await page.getByRole("heading", { name: `Thanks, ${name}!` }).waitFor();
    await page.getByText("Your code: C-Price").waitFor();
    assert.equal(await page.locator("#hf-thanks b").count(), 0);
    await context.close();
    const stored = await ada.api("GET", `/forms/${formId}/submissions?filter=completed&limit=10`);
    const mine = stored.body.items.find((s: { answers: { why?: { value: string } } }) => s.answers.why?.value === "Price");
    assert.equal(mine.answers.name.value, name);
  });

  it("the app names a recall that names nothing: the editor before saving, the Design tab as the server refuses it", async () => {
    // Signing up is not what this tests: the person and the form are made through the app's API.
    const person = await signedUpPerson(sys.url, "recall");
    const context = await signedInContext(browser, sys.url, person.cookies, { viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems = watchPage(page, [400, 401]);
    const created = await person.call("POST", "/forms", { workspaceId: person.workspace.id, name: "Recall", document });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id;
    await page.goto(`${sys.url}/app/forms/${id}/edit`);
    // The selected block's settings name its key, and how to recall its answer.
    await editorBlock(page, 3).getByLabel("Question", { exact: true }).click();
    await editorBlock(page, 3).getByText("{{why}}").waitFor();
    await editorBlock(page, 3).getByLabel("Question", { exact: true }).fill("Why {{plna}}?");
    // Named by the autosave, which stores nothing while it is so.
    await page.getByText('Block 4 (Short text) question: {{plna}}: no question key, hidden field or calculated field is named "plna".').waitFor();

    await page.goto(`${sys.url}/app/forms/${id}/design`);
    await page.getByLabel("Text", { exact: true }).fill("Code {{cdoe}}");
    await page.getByRole("button", { name: "Save design" }).click();
    const problem = page.locator(".error-text").filter({ hasText: '{{cdoe}}: no question key, hidden field or calculated field is named "cdoe"' });
    await problem.waitFor();
    assert.equal(await page.getByLabel("Text", { exact: true }).getAttribute("aria-invalid"), "true");
    assert.deepEqual(problems, []);
    await context.close();
  });
});
