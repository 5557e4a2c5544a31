import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { runInNewContext } from "node:vm";
import { defaultSettings, fillRecall, recallValues, type FormDocument, type FormSettings } from "@formsvc/form-document";
import { formLogicFile } from "./form-logic-build.ts";
import { postsPageByPage, stepAfterPost } from "./logic-steps.ts";
import { recallConfig, thankYouCalculated } from "./recall.ts";
import { renderFormPage, renderThankYouPage } from "./render-form.ts";
import { answersFromFields } from "./form-fields.ts";

// Page 1 asks the name and a plan; page 2 greets by both; the thank-you screen recalls them and a score.
const doc: FormDocument = {
  blocks: [
    { id: "b_name", key: "name", type: "SHORT_TEXT", question: "Your name", required: true },
    { id: "b_plan", key: "plan", type: "DROPDOWN", question: "Plan", options: [{ id: "o_free", text: "Free" }, { id: "o_pro", text: "Pro & more" }] },
    { id: "pb", type: "PAGE_BREAK" },
    { id: "b_head", type: "HEADING", text: "Welcome, {{name|friend}}" },
    { id: "b_why", key: "why", type: "LONG_TEXT", question: "Why {{plan}}, {{name}}?", description: "From {{ref}}\nthanks" },
  ],
  hiddenFields: [{ name: "ref" }],
  calculatedFields: [{ name: "score", type: "NUMBER", expression: "1.0" }, { name: "secret", type: "TEXT", expression: "'x'" }],
};
const settings: FormSettings = { ...defaultSettings, thankYou: { ...defaultSettings.thankYou, title: "Thanks, {{name}}", text: "Score {{score}}\nPlan {{plan}}" } };
const urls = { base: "/f", script: "/f/assets/form-page.js", branding: "/" };
const page = (values?: Record<string, string>, at?: number, hidden: Record<string, string> = {}) =>
  renderFormPage({ formId: "f1", name: "Recall", version: 1, document: doc, settings, showBranding: false, hidden, values, page: at, urls });

describe("recall on the hosted page, server-side", () => {
  it("goes page by page without JavaScript when a later page recalls (a one-page form, or one without recall, does not)", () => {
    assert.equal(postsPageByPage(doc), true);
    assert.equal(postsPageByPage({ blocks: doc.blocks.filter((b) => b.type !== "PAGE_BREAK") }), false);
    assert.equal(postsPageByPage({ blocks: [doc.blocks[0], doc.blocks[2], { id: "x", key: "x", type: "SHORT_TEXT", question: "Plain" }] }), false);
  });

  it("fills a later page's texts in from the answers posted, escaped, and marks them with their own words for the script", () => {
    const fields = { name: "<b>Ada</b>", plan: "o_pro", _page: "0", _shown: "b_name,b_plan" };
    const step = stepAfterPost(doc, fields, answersFromFields(doc, fields).errors);
    assert.deepEqual(step, { page: 1, errors: {} });
    const html = page(fields, 1, { ref: "news" });
    assert.match(html, /<h2 data-block="b_head"><span data-recall="Welcome, \{\{name\|friend\}\}">Welcome, &lt;b&gt;Ada&lt;\/b&gt;<\/span><\/h2>/);
    // A choice recalls its option's text, not its id; line breaks are kept; a hidden field's value is there too.
    assert.match(html, /<label class="hf-label" for="q-b_why"><span data-recall="Why \{\{plan\}\}, \{\{name\}\}\?">Why Pro &amp; more, &lt;b&gt;Ada&lt;\/b&gt;\?<\/span>/);
    assert.match(html, /<span data-recall="From \{\{ref\}\}\nthanks">From news<br>thanks<\/span>/);
    assert.doesNotMatch(html, /<b>Ada/, "an answer never becomes markup");
    // The answers travel on to the thank-you screen, which the script fills in after the completion.
    assert.match(html, /<input type="hidden" name="name" value="&lt;b&gt;Ada&lt;\/b&gt;">/);
  });

  it("shows an unanswered recall as its fallback or nothing", () => {
    const html = page(undefined, 1);
    assert.match(html, />Welcome, friend<\/span>/);
    assert.match(html, />Why , \?<\/span>/);
  });

  it("tells the script what the recalled questions are, and the thank-you screen only the calculated fields it names", () => {
    assert.deepEqual(recallConfig(doc, settings), {
      blocks: [
        { key: "name", type: "SHORT_TEXT" },
        { key: "plan", type: "DROPDOWN", options: [{ id: "o_free", text: "Free" }, { id: "o_pro", text: "Pro & more" }] },
      ],
    });
    assert.equal(recallConfig({ blocks: [doc.blocks[0]] }, defaultSettings), null);
    assert.deepEqual(thankYouCalculated(settings, { score: 3, secret: "hush" }), { score: 3 });
    const translated = { ...settings, languages: [{ language: "de", texts: { "thankYou.text": "{{secret}}" } }] };
    assert.deepEqual(thankYouCalculated(translated, { score: 3, secret: "hush" }), { score: 3, secret: "hush" });
  });

  it("renders the thank-you page (no JavaScript) with the response's answers", () => {
    const recall = recallValues(doc.blocks, { name: "Ada <3", plan: "o_free" }, {}, { score: 7 });
    const html = renderThankYouPage({ name: "Recall", document: doc, showBranding: false, brandingUrl: "/", thankYou: settings.thankYou, recall });
    assert.match(html, /<h2 id="hf-thanks-title"><span data-recall="Thanks, \{\{name\}\}">Thanks, Ada &lt;3<\/span><\/h2>/);
    assert.match(html, />Score 7<br>Plan Free<\/span>/);
  });

  it("fills in with the browser's copy (form-logic.js) as the server does", () => {
    const context: { formsvcLogic?: { recallValues: typeof recallValues; fillRecall: typeof fillRecall } } = {};
    runInNewContext(readFileSync(formLogicFile, "utf8"), context);
    const browser = context.formsvcLogic!;
    const answers = { name: "Ada", plan: "o_pro" };
    const text = "Why {{plan}}, {{ name }}? {{ref|no ref}} {{score}}";
    assert.equal(browser.fillRecall(text, browser.recallValues(doc.blocks, answers, { ref: "r" }, { score: 2 })), fillRecall(text, recallValues(doc.blocks, answers, { ref: "r" }, { score: 2 })));
    assert.equal(browser.fillRecall(text, browser.recallValues(doc.blocks, answers)), "Why Pro & more, Ada? no ref ");
  });
});
