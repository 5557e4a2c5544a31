import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fillRecall, hasRecall, recallsOf, recallValues } from "./recall.ts";
import { recallProblems } from "./recall-check.ts";
import { defaultSettings } from "./settings.ts";

const blocks = [
  { id: "b_name", key: "name", type: "SHORT_TEXT", question: "Your name?" },
  { id: "b_plan", key: "plan", type: "MULTIPLE_CHOICE", question: "Hi {{name}}, which plan?", options: [{ id: "o_free", text: "Free" }, { id: "o_pro", text: "Pro <b>" }] },
  { id: "b_tags", key: "tags", type: "CHECKBOXES", question: "Tags", options: [{ id: "t1", text: "One" }, { id: "t2", text: "Two" }] },
  { id: "b_grid", key: "grid", type: "MATRIX", question: "Rate", rows: [{ id: "r1", text: "Food" }], columns: [{ id: "c1", text: "Good" }] },
  { id: "pb", type: "PAGE_BREAK" },
  { id: "b_head", type: "HEADING", text: "Thanks {{ name | friend }} from {{utm_source}}" },
];

describe("recall: reading and filling in {{name}}", () => {
  it("reads names and fallbacks, trimmed", () => {
    assert.deepEqual(recallsOf("Hi {{ name }}, {{plan|no plan}} {{ x |  }}"), [
      { source: "{{ name }}", name: "name" },
      { source: "{{plan|no plan}}", name: "plan", fallback: "no plan" },
      { source: "{{ x |  }}", name: "x", fallback: "" },
    ]);
    assert.equal(hasRecall("no recall {{two words}}"), false);
    assert.equal(hasRecall("a {{name}}"), true);
  });

  it("fills values in; a missing or empty one shows its fallback or nothing; what names nothing stays as written", () => {
    const text = "Hi {{name}}, {{plan|no plan}}, {{later}}! {{not a name}}";
    assert.equal(fillRecall(text, { name: "Ada", plan: "" }), "Hi Ada, no plan, ! {{not a name}}");
    // Values are text: markup in them stays text (renderers escape it).
    assert.equal(fillRecall("{{name}}", { name: "<i>x</i>" }), "<i>x</i>");
    // An inherited property is no value.
    assert.equal(fillRecall("{{constructor|none}}", {}), "none");
  });

  it("recalls a choice by its option's text (never its id), lists and matrices as people read them, fields by name", () => {
    const values = recallValues(blocks, { name: "Ada", plan: "o_pro", tags: ["t1", "t2"], grid: { r1: "c1" } }, { utm_source: "mail" }, { score: 7, none: null });
    assert.deepEqual(values, { score: "7", utm_source: "mail", name: "Ada", plan: "Pro <b>", tags: "One, Two", grid: "Food: Good" });
    assert.equal(fillRecall(blocks[5].text!, values), "Thanks Ada from mail");
    assert.equal(fillRecall(blocks[5].text!, recallValues(blocks, {})), "Thanks friend from ");
  });
});

describe("recallProblems (at save)", () => {
  const doc = { blocks, hiddenFields: [{ name: "utm_source" }], calculatedFields: [{ name: "score" }] };
  const check = (d: Parameters<typeof recallProblems>[0], settings?: Parameters<typeof recallProblems>[1]) => recallProblems(d, settings).map((p) => `${p.path}: ${p.message}`);

  it("takes earlier questions' keys and hidden fields in block texts", () => {
    assert.deepEqual(check(doc), []);
  });

  it("names an unknown name, a later question, the block's own, a calculated field in a block, a malformed recall and an ambiguous name", () => {
    const bad = {
      ...doc,
      hiddenFields: [{ name: "utm_source" }, { name: "tags" }],
      blocks: [
        { id: "a", key: "first", type: "SHORT_TEXT", question: "{{nmae}} and {{first}}", description: "{{second}} {{score}}" },
        { id: "b", key: "second", type: "SHORT_TEXT", question: "{{two words}} {{tags}}" },
        { id: "c", type: "PARAGRAPH", text: "{{first}}" },
        // A consent's text is not recalled into, so it is not checked either.
        { id: "d", key: "agree", type: "CONSENT", question: "Agree?", text: "{{whatever}}" },
        { id: "e", key: "tags", type: "SHORT_TEXT", question: "Tags" },
      ],
    };
    assert.deepEqual(check(bad), [
      'document.blocks[0].question: {{nmae}}: no question key, hidden field or calculated field is named "nmae"',
      'document.blocks[0].question: {{first}} names question "first", which does not come before this text: recall shows earlier answers',
      'document.blocks[0].description: {{second}} names question "second", which does not come before this text: recall shows earlier answers',
      'document.blocks[0].description: {{score}} names calculated field "score", which is worked out when the response is completed: recall it on the thank-you screen',
      "document.blocks[1].question: {{two words}} is not a recall: name a question's key, a hidden field or a calculated field, as {{name}}",
      'document.blocks[1].question: {{tags}} is ambiguous: "tags" is both a question\'s key and a hidden field\'s name; rename the field',
    ]);
  });

  it("takes any question and calculated fields on the thank-you screen, and checks translations as the texts they translate", () => {
    const settings = {
      ...defaultSettings,
      thankYou: { ...defaultSettings.thankYou, title: "Thanks {{name}}", text: "Your score: {{score}}, tags {{tags}}; {{gone}}" },
      languages: [{ language: "de", texts: { "thankYou.title": "Danke {{score}}", "b_name.question": "Name? {{plan}}", "b_plan.options.o_free": "{{x}}" } }],
    };
    assert.deepEqual(check(doc, settings), [
      'settings.thankYou.text: {{gone}}: no question key, hidden field or calculated field is named "gone"',
      'settings.languages[0].texts["b_name.question"]: {{plan}} names question "plan", which does not come before this text: recall shows earlier answers',
    ]);
  });
});
