import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defaultSettings, type FormDocument } from "@formsvc/form-document";
import { answersFromFields } from "./form-fields.ts";
import { logicStep, pageWithProblems, stepAfterPost } from "./logic-steps.ts";
import { renderFormPage } from "./render-form.ts";

// Page 1: plan (Free/Pro) and company (shown for Pro); page 2: team size; page 3: comment. Free jumps to page 3.
const doc: FormDocument = {
  blocks: [
    { id: "b_plan", key: "plan", type: "MULTIPLE_CHOICE", question: "Plan", required: true, options: [{ id: "free", text: "Free" }, { id: "pro", text: "Pro" }] },
    { id: "b_company", key: "company", type: "SHORT_TEXT", question: "Company", required: true },
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
const after = (fields: Record<string, string>) => stepAfterPost(doc, fields, answersFromFields(doc, fields).errors);
const page = (values: Record<string, string>, at?: number) =>
  renderFormPage({
    formId: "f1",
    name: "Plans",
    version: 1,
    document: doc,
    settings: { ...defaultSettings },
    showBranding: false,
    hidden: {},
    values,
    page: at,
    urls: { base: "/f", script: "/f/assets/form-page.js", branding: "/" },
  });

describe("a form with logic, page by page without JavaScript", () => {
  it("shows the first page without the question its rule has not revealed, and a Next button Enter presses", () => {
    const html = page({});
    assert.match(html, /<section class="hf-page hf-current" data-page="0"/);
    assert.match(html, /<template class="hf-later"><div class="hf-q" id="q-b_company-field"/, "the follow-up waits in a template");
    assert.match(html, /<template class="hf-later"><section class="hf-page" data-page="1"/);
    assert.match(html, /<div class="hf-nav">\n<button type="submit" name="_nav" value="next" class="hf-next" id="hf-next">Next<\/button>/);
    assert.match(html, /name="_shown" value="b_plan"/);
  });

  it("reveals the follow-up on the same page before moving on, then requires it", () => {
    assert.deepEqual(after({ _page: "0", _nav: "next", _shown: "b_plan", plan: "pro" }), { page: 0, errors: {} });
    assert.deepEqual(after({ _page: "0", _nav: "next", _shown: "b_plan,b_company", plan: "pro" }), { page: 0, errors: { company: "This question is required." } });
    assert.deepEqual(after({ _page: "0", _nav: "next", _shown: "b_plan,b_company", plan: "pro", company: "Acme" }), { page: 1, errors: {} });
  });

  it("follows the jump past page 2, and back again", () => {
    assert.deepEqual(after({ _page: "0", _nav: "next", _shown: "b_plan", plan: "free" }), { page: 2, errors: {} });
    assert.deepEqual(after({ _page: "2", _nav: "back", plan: "free" }), { page: 0, errors: {} });
    assert.deepEqual(after({ _page: "2", _shown: "b_note", plan: "free", note: "hi" }), { complete: true });
    const last = page({ plan: "free", _page: "2" }, 2);
    assert.match(last, /<input type="hidden" name="plan" value="free">/, "the other pages' answers travel along");
    assert.match(last, /<button type="submit" class="hf-submit" id="hf-submit">Submit<\/button>/);
  });

  it("does not complete while a page on the way has problems", () => {
    assert.deepEqual(after({ _page: "2", _shown: "b_note", plan: "pro", company: "Acme" }), { page: 1, errors: { team: "This question is required." } });
    // The service's problems after the last page: shown on the page of the first one on the path.
    assert.equal(pageWithProblems(doc, logicStep(doc, { plan: "pro" }).state, { team: "Must be at most 10", note: "x" }), 1);
    assert.equal(pageWithProblems(doc, logicStep(doc, { plan: "free" }).state, { team: "Must be at most 10" }), undefined, "a page passed over has no problems");
  });
});
