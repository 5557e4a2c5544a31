import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { describeProblems, maxHiddenValueLength, validateAnswers, validateHidden, type ValidationResult } from "./answers.ts";
import { questionTypes, type JsonValue } from "./question-types.ts";
import type { FormDocument } from "./schema.ts";

type JsonObject = { [key: string]: JsonValue };

const document: FormDocument = {
  title: "Everything",
  blocks: [
    { id: "h", type: "HEADING", text: "Welcome" },
    { id: "b_name", key: "q_name", type: "SHORT_TEXT", question: "Your full name", required: true },
    { id: "b_bio", key: "bio", type: "LONG_TEXT", question: "About you" },
    { id: "b_email", key: "email", type: "EMAIL", question: "Email address", fieldName: "email_col" },
    { id: "b_age", key: "age", type: "NUMBER", question: "Age", min: 0, max: 150 },
    { id: "b_free", key: "free", type: "NUMBER", question: "Any number" },
    { id: "b_phone", key: "phone", type: "PHONE", question: "Phone" },
    { id: "b_site", key: "site", type: "URL", question: "Website" },
    { id: "b_when", key: "when", type: "DATE", question: "When" },
    { id: "b_plan", key: "plan", type: "MULTIPLE_CHOICE", question: "Plan", options: [{ id: "free", text: "Free" }, { id: "pro", text: "Pro" }] },
    { id: "b_tags", key: "tags", type: "CHECKBOXES", question: "Tags", options: [{ id: "a", text: "A" }, { id: "b", text: "B" }] },
    { id: "b_size", key: "size", type: "DROPDOWN", question: "Size", options: [{ id: "s", text: "S" }, { id: "m", text: "M" }] },
    { id: "b_stars", key: "stars", type: "RATING", question: "Stars", max: 10 },
    { id: "b_five", key: "five", type: "RATING", question: "Default scale" },
    { id: "b_cv", key: "cv", type: "FILE", question: "Upload your CV" },
    { id: "b_sig", key: "sig", type: "SIGNATURE", question: "Sign here", required: true },
    { id: "pb", type: "PAGE_BREAK" },
  ],
  hiddenFields: [{ name: "utm_source" }, { name: "ref" }],
};

function ok(result: ValidationResult) {
  assert.ok(result.ok, `expected valid, got ${result.ok ? "" : describeProblems(result.problems)}`);
  return result.answers;
}

/** The problems' lines. */
function errors(result: ValidationResult): string[] {
  assert.ok(!result.ok, "expected errors");
  return result.problems.map((p) => p.line);
}

/** The one error of a partial save of `answers`. */
function errorOf(answers: JsonObject): string {
  const list = errors(validateAnswers(document, answers, { completed: false }));
  assert.equal(list.length, 1, list.join("; "));
  return list[0];
}

const accepts = (answers: JsonObject) => ok(validateAnswers(document, answers, { completed: false }));

describe("validateAnswers: values of every type", () => {
  it("accepts valid values and stores questionId, type, label and value", () => {
    const answers = accepts({
      q_name: "Ada Lovelace",
      bio: "Line one\nline two",
      email: "  ada@example.com ",
      age: 36,
      free: -12.5,
      phone: "+44 (20) 7946-0958",
      site: "https://example.com/path?q=1",
      when: "2024-02-29",
      plan: "pro",
      tags: ["b", "a"],
      size: "m",
      stars: 10,
      five: 1,
      cv: ["up1", "up2"],
      sig: ["sig1"],
    });
    assert.deepEqual(answers.q_name, { questionId: "b_name", type: "SHORT_TEXT", label: "Your full name", value: "Ada Lovelace" });
    // The label is the column label: the field name where one was given.
    assert.deepEqual(answers.email, { questionId: "b_email", type: "EMAIL", label: "email_col", value: "ada@example.com" });
    assert.equal(answers.bio.value, "Line one\nline two");
    assert.equal(answers.age.value, 36);
    assert.equal(answers.free.value, -12.5);
    assert.equal(answers.phone.value, "+44 (20) 7946-0958");
    assert.equal(answers.site.value, "https://example.com/path?q=1");
    assert.equal(answers.when.value, "2024-02-29");
    assert.equal(answers.plan.value, "pro");
    assert.deepEqual(answers.tags.value, ["b", "a"]);
    assert.equal(answers.size.value, "m");
    assert.equal(answers.stars.value, 10);
    assert.equal(answers.five.value, 1);
    assert.deepEqual(answers.cv, { questionId: "b_cv", type: "FILE", label: "Upload your CV", value: ["up1", "up2"] });
    assert.deepEqual(answers.sig.value, ["sig1"]);
    assert.equal(Object.keys(answers).length, 15);
  });

  it("refuses a wrong value of each type, naming the question by key and question text", () => {
    const cases: [JsonObject, string][] = [
      [{ q_name: 42 }, "answers.q_name (Your full name): must be a string, not a number"],
      [{ q_name: "x".repeat(questionTypes.SHORT_TEXT.maxLength + 1) }, `answers.q_name (Your full name): must be at most ${questionTypes.SHORT_TEXT.maxLength} characters`],
      [{ bio: ["a"] }, "answers.bio (About you): must be a string, not an array"],
      [{ email: "not-an-email" }, "answers.email (Email address): must be an email address"],
      [{ email: "a@b" }, "answers.email (Email address): must be an email address"],
      [{ email: "two words@example.com" }, "answers.email (Email address): must be an email address"],
      [{ age: "twelve" }, "answers.age (Age): must be a number, not a string"],
      [{ age: 200 }, "answers.age (Age): must be at most 150"],
      [{ age: -1 }, "answers.age (Age): must be at least 0"],
      [{ phone: "call me maybe" }, "answers.phone (Phone): must be a phone number"],
      [{ phone: "12" }, "answers.phone (Phone): must be a phone number"],
      [{ site: "example.com" }, "answers.site (Website): must be a URL starting with http:// or https://"],
      [{ site: "javascript:alert(1)" }, "answers.site (Website): must be a URL starting with http:// or https://"],
      [{ when: "22/11/2026" }, "answers.when (When): must be a date (YYYY-MM-DD)"],
      [{ when: "2023-02-29" }, "answers.when (When): must be a date (YYYY-MM-DD)"],
      [{ when: "2024-13-01" }, "answers.when (When): must be a date (YYYY-MM-DD)"],
      [{ when: 20240101 }, "answers.when (When): must be a date (YYYY-MM-DD), not a number"],
      [{ plan: "gold" }, 'answers.plan (Plan): "gold" is not an option of this question'],
      [{ plan: ["pro"] }, "answers.plan (Plan): must be the id of an option, not an array"],
      [{ size: "xl" }, 'answers.size (Size): "xl" is not an option of this question'],
      [{ tags: ["a", "zzz"] }, 'answers.tags (Tags): "zzz" is not an option of this question'],
      [{ tags: "a" }, "answers.tags (Tags): must be an array of option ids, not a string"],
      [{ tags: ["a", "a"] }, 'answers.tags (Tags): names option id "a" twice'],
      [{ tags: [1] }, "answers.tags (Tags): must be an array of option ids, not of a numbers"],
      [{ stars: 11 }, "answers.stars (Stars): must be a whole number from 1 to 10"],
      [{ stars: 0 }, "answers.stars (Stars): must be a whole number from 1 to 10"],
      [{ stars: 2.5 }, "answers.stars (Stars): must be a whole number from 1 to 10"],
      [{ five: 6 }, "answers.five (Default scale): must be a whole number from 1 to 5"],
      [{ cv: "up1" }, "answers.cv (Upload your CV): must be an array of upload ids, not a string"],
      [{ cv: ["../etc/passwd"] }, 'answers.cv (Upload your CV): "../etc/passwd" is not an upload id'],
      [{ cv: Array.from({ length: questionTypes.FILE.maxUploads + 1 }, (_, i) => `u${i}`) }, `answers.cv (Upload your CV): takes at most ${questionTypes.FILE.maxUploads} upload ids`],
      [{ sig: ["s1", "s2"] }, "answers.sig (Sign here): takes one upload id"],
    ];
    for (const [answers, expected] of cases) assert.equal(errorOf(answers), expected, JSON.stringify(answers));
  });

  it("refuses keys that are not questions of this version, including hidden and extra columns", () => {
    assert.equal(errorOf({ nope: "x" }), "answers.nope: is not a question of this form");
    assert.equal(errorOf({ "hidden:utm_source": "x" }), 'answers["hidden:utm_source"]: is not a question of this form');
    assert.equal(errorOf({ "meta:country": "DE" }), 'answers["meta:country"]: is not a question of this form');
    assert.equal(errorOf({ h: "heading is no question" }), "answers.h: is not a question of this form");
  });

  it("reports every problem at once", () => {
    const result = validateAnswers(document, { age: "x", nope: 1, plan: "gold" }, { completed: false });
    const list = errors(result);
    assert.equal(list.length, 3);
    assert.equal(describeProblems(result.ok ? [] : result.problems), list.join("; "));
    const lines = ["a", "b", "c"].map((line) => ({ message: line, line }));
    assert.equal(describeProblems(lines, 2), "a; b (and 1 more)");
  });

  it("refuses answers nested deeper than the edge allows, and text Postgres cannot store, before checking values", () => {
    let deep: JsonObject[string] = "x";
    for (let i = 0; i < 50; i++) deep = [deep];
    assert.match(errorOf({ tags: deep }), /^answers\.tags(\[0\])+: must not be nested deeper than 8 levels$/);
    assert.equal(errorOf({ q_name: "Ada\u0000" }), "answers.q_name: must not contain control characters");
    assert.equal(errorOf({ bio: "\uD800 alone" }), "answers.bio: must be valid Unicode (no lone surrogates)");
    accepts({ bio: "two\r\nlines\tand a tab 😀" });
  });

  it("treats null, blank strings and empty lists as no answer", () => {
    const answers = accepts({ q_name: "   ", bio: "", email: null, tags: [], cv: [], plan: "", when: " ", age: null });
    assert.deepEqual(answers, {});
  });
});

describe("validateAnswers: times, scales and consents", () => {
  const doc: FormDocument = {
    blocks: [
      { id: "b_at", key: "at", type: "TIME", question: "At what time?" },
      { id: "b_agree", key: "agree", type: "LINEAR_SCALE", question: "Agree?", min: 0, max: 4 },
      { id: "b_nps", key: "nps", type: "NPS", question: "Recommend?" },
      { id: "b_terms", key: "terms", type: "CONSENT", question: "Terms", text: "I agree", required: true },
    ],
  };
  const check = (answers: JsonObject, completed = false) => validateAnswers(doc, answers, { completed });

  it("take HH:MM times, whole steps of each scale and a consent's true", () => {
    const answers = ok(check({ at: "23:59", agree: 0, nps: 10, terms: true }, true));
    assert.deepEqual(Object.fromEntries(Object.entries(answers).map(([k, a]) => [k, a.value])), { at: "23:59", agree: 0, nps: 10, terms: true });
  });

  it("refuse other times and steps outside the scale, naming the question", () => {
    assert.deepEqual(errors(check({ at: "7:30" })), ["answers.at (At what time?): must be a time (HH:MM, 24 hours)"]);
    assert.deepEqual(errors(check({ at: "24:00" })), ["answers.at (At what time?): must be a time (HH:MM, 24 hours)"]);
    assert.deepEqual(errors(check({ at: 730 })), ["answers.at (At what time?): must be a time (HH:MM, 24 hours), not a number"]);
    assert.deepEqual(errors(check({ agree: 5 })), ["answers.agree (Agree?): must be a whole number from 0 to 4"]);
    assert.deepEqual(errors(check({ nps: -1 })), ["answers.nps (Recommend?): must be a whole number from 0 to 10"]);
    assert.deepEqual(errors(check({ nps: 2.5 })), ["answers.nps (Recommend?): must be a whole number from 0 to 10"]);
    assert.deepEqual(errors(check({ terms: "yes" })), ["answers.terms (Terms): must be true (agreed), not a string"]);
  });

  it("take a matrix's answers by row, every row when required", () => {
    const lines = (...ids: string[]) => ids.map((id) => ({ id, text: id.toUpperCase() }));
    const grid: FormDocument = {
      blocks: [
        { id: "b_one", key: "one", type: "MATRIX", question: "One each", required: true, rows: lines("r1", "r2"), columns: lines("c1", "c2") },
        { id: "b_many", key: "many", type: "MATRIX", question: "Several", multiple: true, rows: lines("r1"), columns: lines("c1", "c2") },
      ],
    };
    const check = (answers: JsonObject, completed = false) => validateAnswers(grid, answers, { completed });
    assert.deepEqual(ok(check({ one: { r1: "c2", r2: "c1" }, many: { r1: ["c1", "c2"] } }, true)).many.value, { r1: ["c1", "c2"] });
    assert.deepEqual(errors(check({ one: { r1: "c2" } }, true)), ["answers.one (One each): needs an answer in every row (1 of 2 unanswered)"]);
    assert.deepEqual(errors(check({ one: { r9: "c2" } })), ['answers.one (One each): "r9" is not a row of this question']);
    assert.deepEqual(errors(check({ one: { r1: "c9" } })), ['answers.one (One each): row "r1": "c9" is not a column of this question']);
    assert.deepEqual(errors(check({ one: { r1: ["c1"] } })), ['answers.one (One each): row "r1": ["c1"] is not a column of this question']);
    assert.deepEqual(errors(check({ many: { r1: "c1" } })), ['answers.many (Several): row "r1": must be an array of column ids, not a string']);
    assert.deepEqual(errors(check({ many: { r1: ["c1", "c1"] } })), ['answers.many (Several): row "r1": names a column twice']);
    assert.deepEqual(errors(check({ one: ["c1"] })), ["answers.one (One each): must be an object of row ids to column ids, not an array"]);
    assert.deepEqual(ok(check({ one: { r1: null } })), {}, "rows without an answer are no answer");
  });

  it("take a ranking of every option once", () => {
    const ranking: FormDocument = {
      blocks: [{ id: "b_rank", key: "rank", type: "RANKING", question: "Rank them", options: ["a", "b", "c"].map((id) => ({ id, text: id })) }],
    };
    const check = (value: JsonValue) => validateAnswers(ranking, { rank: value }, { completed: false });
    assert.deepEqual(ok(check(["c", "a", "b"])).rank.value, ["c", "a", "b"]);
    assert.deepEqual(errors(check(["c", "a"])), ["answers.rank (Rank them): must rank every option (3), not 2"]);
    assert.deepEqual(errors(check(["c", "a", "a"])), ['answers.rank (Rank them): names option id "a" twice']);
    assert.deepEqual(errors(check(["c", "a", "b", "d"])), ["answers.rank (Rank them): takes at most 3 option ids"]);
    assert.deepEqual(errors(check(["c", "a", "x"])), ['answers.rank (Rank them): "x" is not an option of this question']);
  });

  it("take between a multi-select's min and max options", () => {
    const multi: FormDocument = {
      blocks: [{ id: "b_langs", key: "langs", type: "MULTI_SELECT", question: "Languages", min: 2, max: 3, options: ["en", "fr", "de", "it"].map((id) => ({ id, text: id })) }],
    };
    const check = (value: JsonValue) => validateAnswers(multi, { langs: value }, { completed: false });
    assert.deepEqual(ok(check(["en", "de"])).langs.value, ["en", "de"]);
    assert.deepEqual(errors(check(["en"])), ["answers.langs (Languages): takes at least 2 option ids"]);
    assert.deepEqual(errors(check(["en", "fr", "de", "it"])), ["answers.langs (Languages): takes at most 3 option ids"]);
    assert.deepEqual(errors(check(["en", "xx"])), ['answers.langs (Languages): "xx" is not an option of this question']);
    assert.deepEqual(errors(check("en")), ["answers.langs (Languages): must be an array of option ids, not a string"]);
    assert.deepEqual(ok(check([])), {}, "an empty list is no answer, whatever min says");
  });

  it("count an unticked consent as no answer, so a required one cannot be completed without it", () => {
    assert.deepEqual(ok(check({ terms: false })), {});
    assert.deepEqual(errors(check({ terms: false }, true)), ["answers.terms (Terms): is required"]);
  });
});

describe("validateAnswers: required questions", () => {
  it("bind on completion only", () => {
    assert.deepEqual(accepts({}), {});
    const list = errors(validateAnswers(document, {}, { completed: true }));
    assert.deepEqual(list, ["answers.q_name (Your full name): is required", "answers.sig (Sign here): is required"]);
    // A blank answer is no answer.
    const blank = errors(validateAnswers(document, { q_name: " ", sig: ["s"] }, { completed: true }));
    assert.deepEqual(blank, ["answers.q_name (Your full name): is required"]);
    ok(validateAnswers(document, { q_name: "Ada", sig: ["s"] }, { completed: true }));
  });

  it("name an invalid required answer once, for its problem", () => {
    const list = errors(validateAnswers(document, { q_name: 1, sig: ["s"] }, { completed: true }));
    assert.deepEqual(list, ["answers.q_name (Your full name): must be a string, not a number"]);
  });
});

describe("problems", () => {
  it("carry the answer's key and what is wrong, for the field violations of an error", () => {
    const result = validateAnswers(document, { email: "not-an-email", nope: 1, sig: ["s"] }, { completed: true });
    assert.ok(!result.ok);
    assert.deepEqual(result.problems, [
      { key: "email", message: "must be an email address", line: "answers.email (Email address): must be an email address" },
      { key: "nope", message: "is not a question of this form", line: "answers.nope: is not a question of this form" },
      { key: "q_name", message: "is required", line: "answers.q_name (Your full name): is required", missing: true },
    ]);
    const hidden = validateHidden(document, { other: "x" });
    assert.ok(!hidden.ok);
    assert.deepEqual(hidden.problems, [{ key: "hidden:other", message: "is not a hidden field of this form", line: "hidden.other: is not a hidden field of this form" }]);
  });
});

describe("validateHidden", () => {
  it("takes declared hidden fields, as HIDDEN_FIELDS answers under hidden:<name>", () => {
    const result = validateHidden(document, { utm_source: "newsletter", ref: "" });
    assert.ok(result.ok);
    assert.deepEqual(result.answers, {
      "hidden:utm_source": { questionId: "hidden:utm_source", type: "HIDDEN_FIELDS", label: "utm_source", value: "newsletter" },
      "hidden:ref": { questionId: "hidden:ref", type: "HIDDEN_FIELDS", label: "ref", value: "" },
    });
  });

  it("refuses names the document does not declare, and overlong values", () => {
    const result = validateHidden(document, { other: "x", utm_source: "y".repeat(maxHiddenValueLength + 1) });
    assert.ok(!result.ok);
    assert.deepEqual(errors(result), [
      "hidden.other: is not a hidden field of this form",
      `hidden.utm_source: must be at most ${maxHiddenValueLength} characters`,
    ]);
    const control = validateHidden(document, { ref: "a\u0000b" });
    assert.deepEqual(errors(control), ["hidden.ref: must not contain control characters"]);
    const none = validateHidden({ blocks: [] }, { utm_source: "x" });
    assert.deepEqual(errors(none), ["hidden.utm_source: is not a hidden field of this form"]);
  });
});
