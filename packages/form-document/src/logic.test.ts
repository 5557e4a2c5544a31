import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { validateAnswers } from "./answers.ts";
import { DocumentError } from "./errors.ts";
import { conditionHolds, evaluateLogic, nextPageOf, operatorsFor, previousPageOf, type LogicRule } from "./logic.ts";
import { logicProblems } from "./logic-check.ts";
import { normalizeDocument } from "./normalize.ts";
import { formDocumentSchema, type FormDocument } from "./schema.ts";

/** Page 1: plan (Free/Pro), company (shown for Pro), heading; page 2: team size; page 3: rating, comment. */
const blocks: FormDocument["blocks"] = [
  { id: "b_plan", key: "plan", type: "MULTIPLE_CHOICE", question: "Plan", required: true, options: [{ id: "o_free", text: "Free" }, { id: "o_pro", text: "Pro" }] },
  { id: "b_company", key: "company", type: "SHORT_TEXT", question: "Company", required: true },
  { id: "b_vat", key: "vat", type: "SHORT_TEXT", question: "VAT number" },
  { id: "pb1", type: "PAGE_BREAK" },
  { id: "b_team", key: "team", type: "NUMBER", question: "Team size", required: true },
  { id: "pb2", type: "PAGE_BREAK" },
  { id: "b_stars", key: "stars", type: "RATING", question: "Stars" },
  { id: "b_why", key: "why", type: "LONG_TEXT", question: "Why?" },
];
const rules: LogicRule[] = [
  // A choice that reveals a follow-up question.
  { when: { conditions: [{ question: "b_plan", operator: "EQUALS", value: "o_pro" }] }, then: [{ action: "SHOW", block: "b_company" }] },
  // Free plans skip the team page.
  { when: { conditions: [{ question: "b_plan", operator: "EQUALS", value: "o_free" }] }, then: [{ action: "JUMP", page: 3 }] },
  // A company name containing "gmbh" asks for the VAT number.
  { when: { conditions: [{ question: "b_company", operator: "CONTAINS", value: "GmbH" }] }, then: [{ action: "REQUIRE", block: "b_vat" }] },
  // Low ratings must say why; high ones hide the question.
  { when: { match: "any", conditions: [{ question: "b_stars", operator: "LESS_THAN", value: 3 }] }, then: [{ action: "REQUIRE", block: "b_why" }] },
  { when: { conditions: [{ question: "b_stars", operator: "GREATER_THAN", value: 4 }] }, then: [{ action: "HIDE", block: "b_why" }] },
];
const doc: FormDocument = { blocks, logic: rules };

describe("evaluateLogic", () => {
  it("reveals the follow-up question for Pro, and goes through every page", () => {
    const state = evaluateLogic(doc, { plan: "o_pro", company: "Acme" });
    assert.ok(!state.hidden.has("b_company"));
    assert.deepEqual(state.path, [0, 1, 2]);
    assert.deepEqual([...state.required].sort(), ["company", "plan", "team"]);
    assert.equal(nextPageOf(doc, state, 0), 1);
    assert.equal(previousPageOf(doc, state, 2), 1);
  });

  it("hides the follow-up question and jumps past page 2 for Free", () => {
    const state = evaluateLogic(doc, { plan: "o_free", company: "stale", team: 4 });
    assert.ok(state.hidden.has("b_company"));
    assert.ok(state.hidden.has("b_team"), "the team page is passed over");
    assert.deepEqual(state.path, [0, 2]);
    assert.equal(nextPageOf(doc, state, 0), 2);
    assert.equal(previousPageOf(doc, state, 2), 0);
    assert.deepEqual(state.answers, { plan: "o_free" }, "answers of hidden questions do not count");
    assert.deepEqual([...state.required], ["plan"]);
  });

  it("shows nothing a SHOW rule targets before its question is answered", () => {
    const state = evaluateLogic(doc, {});
    assert.ok(state.hidden.has("b_company"));
    assert.deepEqual(state.path, [0, 1, 2]);
  });

  it("requires by rule, matching text without regard to case, and lets HIDE win", () => {
    assert.ok(evaluateLogic(doc, { plan: "o_pro", company: " acme gmbh " }).required.has("vat"));
    assert.ok(!evaluateLogic(doc, { plan: "o_pro", company: "Acme Ltd" }).required.has("vat"));
    assert.ok(evaluateLogic(doc, { plan: "o_pro", stars: 2 }).required.has("why"));
    assert.ok(evaluateLogic(doc, { plan: "o_pro", stars: 5 }).hidden.has("b_why"));
  });

  it("compares each answer shape by its operators", () => {
    const holds = (type: string, operator: string, value: unknown, answer: unknown) =>
      conditionHolds({ question: "x", operator: operator as never, value: value as never }, type, answer as never);
    assert.ok(holds("NUMBER", "EQUALS", 3, 3));
    assert.ok(holds("NUMBER", "GREATER_THAN", 3, 3.5));
    assert.ok(!holds("NUMBER", "LESS_THAN", 3, 3));
    assert.ok(holds("CHECKBOXES", "CONTAINS", "a", ["b", "a"]));
    assert.ok(holds("CHECKBOXES", "ANY_OF", ["c", "a"], ["a"]));
    assert.ok(!holds("CHECKBOXES", "ANY_OF", ["c"], ["a"]));
    assert.ok(holds("DROPDOWN", "ANY_OF", ["s", "m"], "m"));
    assert.ok(holds("DATE", "GREATER_THAN", "2026-01-01", "2026-02-01"));
    assert.ok(holds("SHORT_TEXT", "NOT_EQUALS", "x", undefined), "not equal holds when unanswered");
    assert.ok(!holds("SHORT_TEXT", "EQUALS", "x", undefined));
    assert.ok(holds("FILE", "IS_ANSWERED", undefined, ["u1"]));
    assert.ok(holds("SHORT_TEXT", "IS_NOT_ANSWERED", undefined, "  "));
  });

  it("offers operators by question type", () => {
    assert.deepEqual(operatorsFor("CHECKBOXES"), ["CONTAINS", "ANY_OF", "IS_ANSWERED", "IS_NOT_ANSWERED"]);
    assert.ok(operatorsFor("RATING").includes("GREATER_THAN"));
    assert.ok(operatorsFor("DATE").includes("LESS_THAN"));
    assert.ok(!operatorsFor("SHORT_TEXT").includes("GREATER_THAN"));
    assert.deepEqual(operatorsFor("HEADING"), []);
    // The types of issue 31: times are ordered like dates, scales compared like ratings, a multi-select
    // like checkboxes; a consent and a ranking are only answered or not.
    assert.ok(operatorsFor("TIME").includes("GREATER_THAN"));
    assert.deepEqual(operatorsFor("NPS"), operatorsFor("RATING"));
    assert.deepEqual(operatorsFor("LINEAR_SCALE"), operatorsFor("RATING"));
    assert.deepEqual(operatorsFor("MULTI_SELECT"), operatorsFor("CHECKBOXES"));
    assert.deepEqual(operatorsFor("CONSENT"), ["IS_ANSWERED", "IS_NOT_ANSWERED"]);
    assert.deepEqual(operatorsFor("RANKING"), ["IS_ANSWERED", "IS_NOT_ANSWERED"]);
  });

  it("orders times and compares scale steps from 0", () => {
    assert.equal(conditionHolds({ question: "b", operator: "GREATER_THAN", value: "09:30" }, "TIME", "14:00"), true);
    assert.equal(conditionHolds({ question: "b", operator: "LESS_THAN", value: "09:30" }, "TIME", "14:00"), false);
    assert.equal(conditionHolds({ question: "b", operator: "LESS_THAN", value: 7 }, "NPS", 0), true);
    assert.equal(conditionHolds({ question: "b", operator: "IS_ANSWERED" }, "CONSENT", true), true);
  });

  it("checks a condition's value against the new types at save: times, each scale's own steps", () => {
    const newTypes: FormDocument = {
      blocks: [
        { id: "b_at", key: "at", type: "TIME", question: "When?" },
        { id: "b_nps", key: "nps", type: "NPS", question: "Recommend?" },
        { id: "b_scale", key: "scale", type: "LINEAR_SCALE", question: "Agree?", min: 0, max: 3 },
        { id: "b_terms", key: "terms", type: "CONSENT", question: "Terms", text: "I agree" },
        { id: "b_next", key: "next", type: "SHORT_TEXT", question: "Next" },
      ],
      logic: [
        { when: { conditions: [{ question: "b_at", operator: "GREATER_THAN", value: "9:30" }] }, then: [{ action: "SHOW", block: "b_next" }] },
        { when: { conditions: [{ question: "b_nps", operator: "EQUALS", value: 0 }] }, then: [{ action: "SHOW", block: "b_next" }] },
        { when: { conditions: [{ question: "b_scale", operator: "EQUALS", value: 4 }] }, then: [{ action: "SHOW", block: "b_next" }] },
        { when: { conditions: [{ question: "b_terms", operator: "EQUALS", value: "true" }] }, then: [{ action: "SHOW", block: "b_next" }] },
      ],
    };
    assert.deepEqual(
      logicProblems(newTypes).map((p) => `${p.path}: ${p.message}`),
      [
        "logic[0].when.conditions[0].value: needs a time (HH:MM, 24 hours)",
        "logic[2].when.conditions[0].value: needs a whole number from 0 to 3",
        "logic[3].when.conditions[0].operator: EQUALS does not apply to CONSENT questions (IS_ANSWERED, IS_NOT_ANSWERED do)",
      ],
    );
  });
});

describe("SET rules", () => {
  const calculatedFields = [
    { name: "tier", type: "TEXT" as const, expression: '"standard"' },
    { name: "discount", type: "NUMBER" as const, expression: "0" },
  ];
  const setDoc: FormDocument = {
    blocks,
    calculatedFields,
    logic: [
      { when: { conditions: [{ question: "b_plan", operator: "EQUALS", value: "o_pro" }] }, then: [{ action: "SET", field: "tier", value: "gold" }, { action: "SET", field: "discount", value: 10 }] },
      // A later rule that holds overrides an earlier one.
      { when: { conditions: [{ question: "b_team", operator: "GREATER_THAN", value: 50 }] }, then: [{ action: "SET", field: "discount", value: 25 }] },
    ],
  };

  it("give calculated fields the value of the rules that hold, the last one winning", () => {
    assert.deepEqual([...evaluateLogic(setDoc, { plan: "o_pro", company: "Acme", team: 3 }).set], [["tier", "gold"], ["discount", 10]]);
    assert.deepEqual([...evaluateLogic(setDoc, { plan: "o_pro", company: "Acme", team: 80 }).set], [["tier", "gold"], ["discount", 25]]);
    assert.deepEqual([...evaluateLogic(setDoc, { plan: "o_free" }).set], []);
  });

  it("see only answers of questions shown (a page jumped past sets nothing)", () => {
    const freeJump: FormDocument = { ...setDoc, logic: [...rules, ...setDoc.logic!] };
    assert.deepEqual([...evaluateLogic(freeJump, { plan: "o_free", team: 80 }).set], []);
  });

  it("are checked at save: a calculated field of that name, with a value of its type", () => {
    const problems = logicProblems({
      blocks,
      calculatedFields,
      logic: [
        { when: { conditions: [{ question: "b_plan", operator: "IS_ANSWERED" }] }, then: [{ action: "SET", field: "nope", value: 1 }] },
        { when: { conditions: [{ question: "b_plan", operator: "IS_ANSWERED" }] }, then: [{ action: "SET", field: "discount", value: "ten" }, { action: "SET", field: "tier", value: 3 }] },
      ],
    }).map((p) => `${p.path}: ${p.message}`);
    assert.deepEqual(problems, [
      'logic[0].then[0].field: no calculated field is named "nope"',
      'logic[1].then[0].value: calculated field "discount" is a NUMBER: it needs a number',
      'logic[1].then[1].value: calculated field "tier" is a TEXT: it needs a text value',
    ]);
    assert.deepEqual(logicProblems(setDoc), []);
    assert.ok(formDocumentSchema.safeParse(setDoc).success);
    assert.ok(!formDocumentSchema.safeParse({ ...setDoc, logic: [{ ...setDoc.logic![0], then: [{ action: "SET", field: "tier" }] }] }).success, "a SET needs a value");
  });
});

describe("validateAnswers with logic", () => {
  it("stores a hidden question as skipped (null) and does not require it", () => {
    const result = validateAnswers(doc, { plan: "o_free", company: "sent anyway", team: "not a number" }, { completed: true });
    assert.ok(result.ok, JSON.stringify(result));
    assert.equal(result.answers.company.value, null);
    assert.equal(result.answers.team.value, null, "a page passed over is skipped, and its bad answer ignored");
    assert.equal(result.answers.plan.value, "o_free");
    assert.equal(result.answers.vat, undefined, "an unanswered question shown stays unanswered");
  });

  it("requires a revealed question, and one a rule requires", () => {
    const missing = validateAnswers(doc, { plan: "o_pro", team: 3 }, { completed: true });
    assert.ok(!missing.ok);
    assert.deepEqual(missing.problems.map((p) => p.key), ["company"]);
    const vat = validateAnswers(doc, { plan: "o_pro", company: "Acme GmbH", team: 3 }, { completed: true });
    assert.ok(!vat.ok);
    assert.deepEqual(vat.problems.map((p) => p.line), ["answers.vat (VAT number): is required"]);
    assert.ok(validateAnswers(doc, { plan: "o_pro", company: "Acme GmbH", vat: "DE1", team: 3 }, { completed: true }).ok);
  });

  it("leaves documents without rules as they were", () => {
    const result = validateAnswers({ blocks }, { plan: "o_free" }, { completed: false });
    assert.ok(result.ok);
    assert.deepEqual(Object.keys(result.answers), ["plan"]);
  });
});

describe("logicProblems (at save)", () => {
  const check = (logic: unknown[]) => logicProblems({ blocks, logic: logic as LogicRule[] }).map((p) => `${p.path}: ${p.message}`);

  it("accepts the rules above", () => {
    assert.deepEqual(logicProblems(doc), []);
  });

  it("names unknown targets and jumps to pages that do not exist", () => {
    assert.deepEqual(check([{ when: { conditions: [{ question: "nope", operator: "IS_ANSWERED" }] }, then: [{ action: "SHOW", block: "b_why" }] }]), [
      'logic[0].when.conditions[0].question: no block has id "nope"',
    ]);
    assert.deepEqual(
      check([rules[0], { when: { conditions: [{ question: "b_plan", operator: "IS_ANSWERED" }] }, then: [{ action: "JUMP", page: 7 }, { action: "HIDE", block: "gone" }] }]),
      ["logic[1].then[0]: jump target page 7 does not exist (the form has 3 pages)", 'logic[1].then[1].block: no block has id "gone"'],
    );
  });

  it("refuses rules acting backwards (which could loop)", () => {
    const [back] = check([{ when: { conditions: [{ question: "b_team", operator: "IS_ANSWERED" }] }, then: [{ action: "JUMP", page: 1 }] }]);
    assert.match(back, /^logic\[0\]\.then\[0\]: jumps to page 1, not after page 2 .*forward only/);
    const [earlier] = check([{ when: { conditions: [{ question: "b_why", operator: "IS_ANSWERED" }] }, then: [{ action: "HIDE", block: "b_stars" }] }]);
    assert.match(earlier, /^logic\[0\]\.then\[0\]\.block: block "b_stars" \(RATING\) does not come after/);
    const [self] = check([{ when: { conditions: [{ question: "b_vat", operator: "IS_ANSWERED" }] }, then: [{ action: "HIDE", block: "b_vat" }] }]);
    assert.match(self, /does not come after/);
  });

  it("refuses conditions that do not fit the question's type", () => {
    assert.deepEqual(
      check([
        { when: { conditions: [{ question: "b_plan", operator: "GREATER_THAN", value: 1 }] }, then: [{ action: "SHOW", block: "b_why" }] },
        { when: { conditions: [{ question: "b_plan", operator: "EQUALS", value: "o_gold" }] }, then: [{ action: "SHOW", block: "b_why" }] },
        { when: { conditions: [{ question: "b_stars", operator: "EQUALS", value: 11 }] }, then: [{ action: "SHOW", block: "b_why" }] },
        { when: { conditions: [{ question: "pb1", operator: "IS_ANSWERED" }] }, then: [{ action: "SHOW", block: "b_why" }] },
        { when: { conditions: [{ question: "b_team", operator: "EQUALS", value: "3" }] }, then: [{ action: "REQUIRE", block: "pb2" }] },
      ]),
      [
        "logic[0].when.conditions[0].operator: GREATER_THAN does not apply to MULTIPLE_CHOICE questions (EQUALS, NOT_EQUALS, ANY_OF, IS_ANSWERED, IS_NOT_ANSWERED do)",
        'logic[1].when.conditions[0].value: "o_gold" is not an option of block "b_plan"',
        "logic[2].when.conditions[0].value: needs a whole number from 1 to 5",
        'logic[3].when.conditions[0].question: block "pb1" (PAGE_BREAK) is not a question',
        "logic[4].when.conditions[0].value: needs a number",
        'logic[4].then[0].block: block "pb2" (PAGE_BREAK) cannot be shown or hidden: show or hide its blocks, or jump past its page',
      ],
    );
  });

  it("is checked when a document is normalized, each problem by its path", () => {
    const parsed = formDocumentSchema.parse({ blocks, logic: [rules[0], { when: { conditions: [{ question: "b_plan", operator: "IS_ANSWERED" }] }, then: [{ action: "JUMP", page: 7 }] }] });
    assert.throws(
      () => normalizeDocument(parsed),
      (err: unknown) =>
        err instanceof DocumentError &&
        err.message === "document.logic[1].then[0]: jump target page 7 does not exist (the form has 3 pages)" &&
        err.problems.length === 1 &&
        err.problems[0].path === "document.logic[1].then[0]",
    );
  });

  it("has its shape checked by the schema", () => {
    const result = formDocumentSchema.safeParse({ blocks, logic: [{ when: { conditions: [] }, then: [{ action: "EXPLODE" }] }] });
    assert.ok(!result.success);
  });
});
