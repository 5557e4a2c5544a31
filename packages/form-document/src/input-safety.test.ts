import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isRecordId, jsonInputProblem, maxAnswerDepth, textProblem } from "./input-safety.ts";

const nested = (levels: number): unknown => {
  let value: unknown = "deep";
  for (let i = 0; i < levels; i++) value = i % 2 ? { a: value } : [value];
  return value;
};

describe("input safety", () => {
  it("takes URL-safe ids of 1 to 64 characters only", () => {
    assert.equal(isRecordId("Yc1uQ8bN3vKp0sTa"), true);
    assert.equal(isRecordId("a".repeat(64)), true);
    for (const bad of ["", "a".repeat(65), "a\u0000b", "a b", "a/b", "ü", "a%00", 42, undefined]) assert.equal(isRecordId(bad), false, String(bad));
  });

  it("keeps tab, line feed and carriage return in free text but refuses other controls and lone surrogates", () => {
    assert.equal(textProblem("line one\r\n\tline two 😀"), undefined);
    assert.match(textProblem("a\u0000b") ?? "", /control characters/);
    assert.match(textProblem("\u001b[31m") ?? "", /control characters/);
    assert.match(textProblem("\u007f") ?? "", /control characters/);
    assert.match(textProblem("x\uD800") ?? "", /lone surrogates/);
    assert.match(textProblem("\uDC00x") ?? "", /lone surrogates/);
    assert.equal(textProblem("\uD83D\uDE00"), undefined);
  });

  it("names the first bad string or key of a JSON value, in document order", () => {
    assert.equal(jsonInputProblem({ a: ["ok", 1, null, true], b: { c: "fine\n" } }, "body", 8), undefined);
    assert.equal(jsonInputProblem({ a: "ok", b: ["x", "y\u0000"], c: "\u0001" }, "body", 8), "body.b[1]: must not contain control characters");
    assert.equal(jsonInputProblem({ answers: { "q\u0000": 1 } }, "body", 8), 'body.answers: key "q\\u0000" must not contain control characters');
    assert.equal(jsonInputProblem("\uD800", "query.page", 8), "query.page: must be valid Unicode (no lone surrogates)");
  });

  it("refuses a __proto__ key, which a spread or a schema would drop without a word", () => {
    assert.equal(jsonInputProblem(JSON.parse('{"headers": {"__proto__": {"x": "1"}}}'), "body", 8), 'body.headers: key "__proto__" is not allowed');
    assert.equal(jsonInputProblem(JSON.parse('{"answers": [{"__proto__": 1}]}'), "body", 8), 'body.answers[0]: key "__proto__" is not allowed');
    assert.equal(jsonInputProblem(JSON.parse('{"constructor": "fine", "proto": 1}'), "body", 8), undefined);
  });

  it("bounds nesting without recursing, however deep the value", () => {
    assert.equal(jsonInputProblem(nested(maxAnswerDepth), "answers", maxAnswerDepth), undefined);
    assert.match(jsonInputProblem(nested(maxAnswerDepth + 1), "answers", maxAnswerDepth) ?? "", /^answers(\[0\]|\.a)+: must not be nested deeper than 8 levels$/);
    assert.match(jsonInputProblem(nested(100_000), "body", 16) ?? "", /nested deeper than 16 levels/);
  });
});
