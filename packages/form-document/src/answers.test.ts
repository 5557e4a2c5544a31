import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import type { FormDocument } from "@formsvc/form-document";
import {
  answerLimits,
  countryAnswer,
  describeErrors,
  normalizeCountry,
  validateAnswers,
  validateHidden,
  type ValidationResult,
} from "./validate-answers.ts";

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
  assert.ok(result.ok, `expected valid, got ${result.ok ? "" : result.errors.join("; ")}`);
  return result.answers;
}

function errors(result: ValidationResult): string[] {
  assert.ok(!result.ok, "expected errors");
  return result.errors;
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
      [{ q_name: "x".repeat(answerLimits.shortText + 1) }, `answers.q_name (Your full name): must be at most ${answerLimits.shortText} characters`],
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
      [{ cv: Array.from({ length: answerLimits.files + 1 }, (_, i) => `u${i}`) }, `answers.cv (Upload your CV): takes at most ${answerLimits.files} upload ids`],
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
    const list = errors(validateAnswers(document, { age: "x", nope: 1, plan: "gold" }, { completed: false }));
    assert.equal(list.length, 3);
    assert.equal(describeErrors(list), list.join("; "));
    assert.equal(describeErrors(["a", "b", "c"], 2), "a; b (and 1 more)");
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
    const result = validateHidden(document, { other: "x", utm_source: "y".repeat(answerLimits.hiddenValue + 1) });
    assert.ok(!result.ok);
    assert.deepEqual(result.errors, [
      "hidden.other: is not a hidden field of this form",
      `hidden.utm_source: must be at most ${answerLimits.hiddenValue} characters`,
    ]);
    const control = validateHidden(document, { ref: "a\u0000b" });
    assert.deepEqual(control.ok ? [] : control.errors, ["hidden.ref: must not contain control characters"]);
    const none = validateHidden({ blocks: [] }, { utm_source: "x" });
    assert.ok(!none.ok);
    assert.deepEqual(none.errors, ["hidden.utm_source: is not a hidden field of this form"]);
  });
});

describe("respondent country", () => {
  it("keeps two-letter codes in capitals; anything else is no country", () => {
    assert.equal(normalizeCountry("gb"), "GB");
    assert.equal(normalizeCountry(" DE "), "DE");
    for (const raw of [undefined, "", "XX", "T1", "GBR", "1"]) assert.equal(normalizeCountry(raw), null, String(raw));
  });

  it("is stored as the RESPONDENT_COUNTRY answer", () => {
    assert.deepEqual(countryAnswer("FR"), { questionId: "meta:country", type: "RESPONDENT_COUNTRY", label: "Respondent country", value: "FR" });
  });
});
