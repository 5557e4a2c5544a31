import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defaultSettings, documentPages, evaluateLogic, type FormDocument } from "@formsvc/form-document";
import { answersFromFields } from "./form-fields.ts";
import { logicStep, postsPageByPage, stepAfterPost } from "./logic-steps.ts";
import { hasScreens, questionScreens, shownDocument } from "./one-question.ts";
import { pageTexts } from "./page-messages.ts";
import { renderFormPage } from "./render-form.ts";

// Page 1: a heading, plan, company (shown for Pro), a closing paragraph; page 2: team size; page 3: note.
// Free jumps to page 3 from page 1, whose company question must still be asked of Pro.
const doc: FormDocument = {
  blocks: [
    { id: "h1", type: "HEADING", text: "About you" },
    { id: "b_plan", key: "plan", type: "MULTIPLE_CHOICE", question: "Plan", required: true, options: [{ id: "free", text: "Free" }, { id: "pro", text: "Pro" }] },
    { id: "b_name", key: "name", type: "SHORT_TEXT", question: "Hello {{plan}} user, your name?" },
    { id: "b_company", key: "company", type: "SHORT_TEXT", question: "Company", required: true },
    { id: "p1", type: "PARAGRAPH", text: "Thanks." },
    { id: "pb1", type: "PAGE_BREAK" },
    { id: "b_team", key: "team", type: "NUMBER", question: "Team size", required: true },
    { id: "pb2", type: "PAGE_BREAK" },
    { id: "b_note", key: "note", type: "LONG_TEXT", question: "Anything else?" },
  ],
  logic: [
    { when: { conditions: [{ question: "b_plan", operator: "EQUALS", value: "pro" }] }, then: [{ action: "SHOW", block: "b_company" }] },
    { when: { conditions: [{ question: "b_plan", operator: "EQUALS", value: "free" }] }, then: [{ action: "JUMP", page: 3 }] },
  ],
};
const screens = questionScreens(doc);
const ids = (d: FormDocument) => documentPages(d).map((page) => page.map((b) => b.id));

describe("one question at a time: the document in screens", () => {
  it("gives every question a screen, headings with the question after them and a page's last paragraph with its last question", () => {
    assert.deepEqual(ids(screens), [["h1", "b_plan"], ["b_name"], ["b_company", "p1"], ["b_team"], ["b_note"]]);
    assert.equal(hasScreens(screens), true);
    assert.equal(hasScreens(doc), false);
    assert.equal(postsPageByPage(questionScreens({ blocks: doc.blocks.slice(1, 3) })), true, "without rules too, page by page without script");
    assert.equal(shownDocument(doc, defaultSettings), doc);
    assert.deepEqual(shownDocument(doc, { oneQuestionAtATime: true }), screens);
  });

  it("decides as the owner's pages do: a jump leaves after the last screen of its page and lands on the first of the page it names", () => {
    const free = evaluateLogic(screens, { plan: "free", name: "Ada" });
    assert.deepEqual(free.path, [0, 1, 2, 4], "Free still sees its page's name question, then the note");
    assert.deepEqual([...free.hidden].sort(), ["b_company", "b_team"]);
    const pro = evaluateLogic(screens, { plan: "pro", company: "Acme", team: 3 });
    assert.deepEqual(pro.path, [0, 1, 2, 3, 4]);
    assert.deepEqual([...pro.required].sort(), ["company", "plan", "team"]);
    // The same answers over the owner's pages and over the screens: the same blocks hidden and answers kept.
    for (const answers of [{ plan: "free", team: 9 }, { plan: "pro", team: 9 }, {}]) {
      const [own, shown] = [evaluateLogic(doc, answers), evaluateLogic(screens, answers)];
      assert.deepEqual([[...shown.hidden].sort(), shown.answers], [[...own.hidden].sort(), own.answers], JSON.stringify(answers));
    }
  });

  it("without JavaScript, posts question by question: a required answer refused, the branch skipping the team, recall filled in", () => {
    const post = (fields: Record<string, string>) => stepAfterPost(screens, fields, answersFromFields(screens, fields).errors);
    assert.deepEqual(post({ _page: "0", _shown: "h1,b_plan" }), { page: 0, errors: { plan: "This question is required." } });
    assert.deepEqual(post({ _page: "0", _shown: "h1,b_plan", plan: "free" }), { page: 1, errors: {} });
    // The page's closing paragraph still shows, on its own (the company is hidden); then the team is jumped over.
    assert.deepEqual(post({ _page: "1", _shown: "b_name", plan: "free", name: "Ada" }), { page: 2, errors: {} });
    assert.deepEqual(post({ _page: "2", _shown: "p1", plan: "free", name: "Ada" }), { page: 4, errors: {} });
    assert.deepEqual(post({ _page: "4", _shown: "b_note", _nav: "back", plan: "free" }), { page: 2, errors: {} });
    assert.deepEqual(post({ _page: "4", _shown: "b_note", plan: "free", name: "Ada", note: "hi" }), { complete: true });

    const html = renderFormPage({
      formId: "f1",
      name: "Plans",
      version: 1,
      document: screens,
      settings: { ...defaultSettings, oneQuestionAtATime: true },
      showBranding: false,
      hidden: {},
      values: { plan: "free" },
      page: logicStep(screens, { plan: "free" }, 1).page,
      urls: { base: "/f", script: "/f/assets/form-page.js", branding: "/" },
      texts: pageTexts("de"),
    });
    assert.match(html, /<form id="hf-form" class="hf-form hf-one"/);
    assert.match(html, /Hello Free user, your name\?/, "the earlier answer recalled");
    // The progress over the screens of Free's path (plan, name, the paragraph, note), shown without script, in the page's language.
    assert.match(html, /<div class="hf-progress" id="hf-progress">\n<div class="hf-progress-label" id="hf-progress-label" aria-live="polite">Frage 2 von 4<\/div>/);
    assert.match(html, /aria-valuemax="4" aria-valuenow="2"/);
    assert.match(html, /<p class="hf-keys" id="hf-keys" hidden>Mit der Eingabetaste geht es weiter/);
    assert.match(html, /"oneQuestion":true/);
    assert.match(html, /\{"type":"PAGE_BREAK","screen":true\}/, "the script's evaluator tells screens from pages");
  });

  it("a form with pages of its own is unchanged", () => {
    const html = renderFormPage({
      formId: "f1",
      name: "Plans",
      version: 1,
      document: doc,
      settings: { ...defaultSettings },
      showBranding: false,
      hidden: {},
      urls: { base: "/f", script: "/f/assets/form-page.js", branding: "/" },
    });
    assert.match(html, /<form id="hf-form" class="hf-form" method/);
    assert.doesNotMatch(html, /id="hf-keys"/);
    assert.match(html, /"oneQuestion":false/);
  });
});
