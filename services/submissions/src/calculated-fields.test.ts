import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { FormDocument } from "@formsvc/form-document";
import type { JsonValue } from "@bufbuild/protobuf";
import type { StoredAnswers } from "./answers/stored-answer.ts";
import { evaluateCalculation } from "./calculated-fields.ts";
import { calculatedAnswers, calculationOf } from "./calculated-fields-pool.ts";

/** What a worker of the pool stores for `document` over `answers`, evaluated here on the test's thread. */
function evaluateCalculatedFields(document: FormDocument, answers: StoredAnswers): StoredAnswers {
  const values: JsonValue[] = [];
  evaluateCalculation(calculationOf(document, answers), (value) => values.push(value));
  return calculatedAnswers(document, values);
}

function documentWith(calculatedFields: FormDocument["calculatedFields"]): FormDocument {
  return {
    blocks: [
      { id: "b1", key: "age", type: "NUMBER", question: "Age" },
      { id: "b2", key: "stars", type: "RATING", question: "Stars" },
      { id: "b3", key: "name", type: "SHORT_TEXT", question: "Name" },
      { id: "b4", key: "tags", type: "CHECKBOXES", question: "Tags", options: [{ id: "a", text: "A" }, { id: "b", text: "B" }] },
      { id: "b5", key: "skipped", type: "NUMBER", question: "Not answered" },
    ],
    hiddenFields: [{ name: "utm_source" }],
    calculatedFields,
  };
}

const answers: StoredAnswers = {
  age: { questionId: "b1", type: "NUMBER", label: "Age", value: 40 },
  stars: { questionId: "b2", type: "RATING", label: "Stars", value: 4 },
  name: { questionId: "b3", type: "SHORT_TEXT", label: "Name", value: "Ada" },
  tags: { questionId: "b4", type: "CHECKBOXES", label: "Tags", value: ["a", "b"] },
  "hidden:utm_source": { questionId: "hidden:utm_source", type: "HIDDEN_FIELDS", label: "utm_source", value: "mail" },
  "meta:country": { questionId: "meta:country", type: "RESPONDENT_COUNTRY", label: "Respondent country", value: "DE" },
};

function values(fields: FormDocument["calculatedFields"]) {
  const results = evaluateCalculatedFields(documentWith(fields), answers);
  return Object.fromEntries(Object.entries(results).map(([k, a]) => [k, a.value]));
}

describe("calculated fields (CEL)", () => {
  it("evaluates expressions over the answers by key and stores CALCULATED_FIELD answers", () => {
    const results = evaluateCalculatedFields(
      documentWith([{ name: "score", type: "NUMBER", expression: "age * 2.0 + double(stars)" }]),
      answers,
    );
    assert.deepEqual(results, {
      "calculated:score": { questionId: "calculated:score", type: "CALCULATED_FIELD", label: "score", value: 84 },
    });
  });

  it("gives RATING answers as int, NUMBER as double, lists as lists, and the answers and hidden maps", () => {
    assert.deepEqual(
      values([
        { name: "next", type: "NUMBER", expression: "stars + 1" },
        { name: "count", type: "NUMBER", expression: "size(tags)" },
        { name: "hasB", type: "TEXT", expression: "'b' in tags" },
        { name: "greeting", type: "TEXT", expression: "'Hello ' + name" },
        { name: "source", type: "TEXT", expression: "hidden.utm_source + '/' + answers['meta:country']" },
        { name: "byMap", type: "NUMBER", expression: "answers.age / 4.0" },
        { name: "unanswered", type: "TEXT", expression: "skipped == null ? 'none' : 'some'" },
        { name: "missing", type: "TEXT", expression: "has(answers.skipped) ? 'yes' : 'no'" },
      ]),
      {
        "calculated:next": 5,
        "calculated:count": 2,
        "calculated:hasB": "true",
        "calculated:greeting": "Hello Ada",
        "calculated:source": "mail/DE",
        "calculated:byMap": 10,
        "calculated:unanswered": "none",
        "calculated:missing": "no",
      },
    );
  });

  it("sees the fields evaluated before it", () => {
    assert.deepEqual(
      values([
        { name: "double_age", type: "NUMBER", expression: "age * 2.0" },
        { name: "plus_one", type: "NUMBER", expression: "answers['calculated:double_age'] + 1.0" },
      ]),
      { "calculated:double_age": 80, "calculated:plus_one": 81 },
    );
  });

  it("stores null when an expression does not parse, fails or gives the wrong kind of value", () => {
    assert.deepEqual(
      values([
        { name: "syntax", type: "NUMBER", expression: "age * (" },
        { name: "mixed", type: "NUMBER", expression: "age * 2" },
        { name: "unknown", type: "NUMBER", expression: "nobody + 1.0" },
        { name: "nullMath", type: "NUMBER", expression: "skipped + 1.0" },
        { name: "divZero", type: "NUMBER", expression: "stars / 0" },
        { name: "infinite", type: "NUMBER", expression: "age / 0.0" },
        { name: "notNumber", type: "NUMBER", expression: "name" },
        { name: "list", type: "TEXT", expression: "tags" },
        { name: "empty", type: "TEXT", expression: "" },
        { name: "fine", type: "NUMBER", expression: "1.5" },
      ]),
      {
        "calculated:syntax": null,
        "calculated:mixed": null,
        "calculated:unknown": null,
        "calculated:nullMath": null,
        "calculated:divZero": null,
        "calculated:infinite": null,
        "calculated:notNumber": null,
        "calculated:list": null,
        "calculated:empty": null,
        "calculated:fine": 1.5,
      },
    );
  });

  it("takes the value a logic rule SETs in place of the expression's, and the fields after it see it", () => {
    const document: FormDocument = {
      ...documentWith([
        { name: "tier", type: "TEXT", expression: "'standard'" },
        { name: "label", type: "TEXT", expression: "answers['calculated:tier'] + ' for ' + name" },
        { name: "bonus", type: "NUMBER", expression: "1.0" },
      ]),
      logic: [
        { when: { conditions: [{ question: "b1", operator: "GREATER_THAN", value: 30 }] }, then: [{ action: "SET", field: "tier", value: "gold" }] },
        { when: { conditions: [{ question: "b1", operator: "LESS_THAN", value: 30 }] }, then: [{ action: "SET", field: "bonus", value: 5 }] },
      ],
    };
    const stored = (results: StoredAnswers) => Object.fromEntries(Object.entries(results).map(([k, a]) => [k, a.value]));
    assert.deepEqual(stored(evaluateCalculatedFields(document, answers)), {
      "calculated:tier": "gold",
      "calculated:label": "gold for Ada",
      "calculated:bonus": 1,
    });
    const young = { ...answers, age: { ...answers.age, value: 20 } };
    assert.deepEqual(stored(evaluateCalculatedFields(document, young)), {
      "calculated:tier": "standard",
      "calculated:label": "standard for Ada",
      "calculated:bonus": 5,
    });
  });

  it("gives nothing for a document without calculated fields", () => {
    assert.deepEqual(evaluateCalculatedFields(documentWith(undefined), answers), {});
  });
});
