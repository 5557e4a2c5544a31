import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parse } from "@bufbuild/cel";
import { expressionLimits } from "./block-types.ts";
import { describeZodError } from "./errors.ts";
import { calculatedFieldProblems, expressionCost, expressionProblem } from "./expression-cost.ts";
import { formDocumentSchema } from "./schema.ts";

/** `depth` comprehensions, each inside the step of the one before: `l.all(x0, l.all(x1, ... true))`. */
function nestedAll(depth: number): string {
  let expression = "true";
  for (let i = depth - 1; i >= 0; i--) expression = `tags.all(x${i}, ${expression})`;
  return expression;
}

/** The message with which a document holding `expression` as its first calculated field is refused. */
function saveError(expression: string): string {
  const result = formDocumentSchema.safeParse({ blocks: [], calculatedFields: [{ name: "score", type: "NUMBER", expression }] });
  assert.equal(result.success, false, `expected ${JSON.stringify(expression.slice(0, 60))} to be refused`);
  return describeZodError(result.error!, "document");
}

describe("calculated field expressions: the save check", () => {
  it("accepts ordinary expressions, one comprehension inside another included", () => {
    for (const expression of [
      "age * 2.0 + double(stars)",
      "q_name + ' (' + hidden.utm_source + ')'",
      "size(tags.filter(t, t != 'a').map(t, t + '!')) > 1 ? 'many' : 'few'",
      "tags.exists(t, ['a', 'b'].exists(o, o == t))",
      "has(answers.skipped) ? answers['calculated:x'] : {'a': 1}['a']",
    ]) {
      assert.equal(expressionProblem(expression), undefined, expression);
      assert.equal(formDocumentSchema.safeParse({ blocks: [], calculatedFields: [{ name: "s", type: "TEXT", expression }] }).success, true);
    }
  });

  it("measures the expanded tree: nodes, depth, comprehensions and how deep they nest", () => {
    assert.deepEqual(expressionCost(parse("1").expr), { nodes: 1, depth: 1, comprehensions: 0, nestedComprehensions: 0 });
    assert.deepEqual(expressionCost(parse("a + b * c").expr), { nodes: 5, depth: 3, comprehensions: 0, nestedComprehensions: 0 });
    // Chained: the filter is map's range, run once, so not nested.
    assert.equal(expressionCost(parse("l.filter(x, x > 1).map(y, y * 2)").expr).nestedComprehensions, 1);
    const nested = expressionCost(parse(nestedAll(3)).expr);
    assert.equal(nested.comprehensions, 3);
    assert.equal(nested.nestedComprehensions, 3);
  });

  it("refuses deep nesting, naming the field", () => {
    const deep = Array.from({ length: expressionLimits.depth + 5 }, (_, i) => `q${i}`).join(" + ");
    assert.match(saveError(deep), new RegExp(`^document\\.calculatedFields\\[0\\]\\.expression: nests ${expressionLimits.depth + 5} levels deep; at most ${expressionLimits.depth}$`));
    // Deeper than the parser's stack: refused as too deep, never a crash.
    assert.match(saveError(`${"(".repeat(490)}1${")".repeat(490)}`), /^document\.calculatedFields\[0\]\.expression: nests too deeply to parse/);
  });

  it("refuses many comprehensions, naming the field", () => {
    const many = Array.from({ length: expressionLimits.comprehensions + 1 }, (_, i) => `tags.exists(t, t == 'o${i}')`).join(" || ");
    assert.match(saveError(many), /^document\.calculatedFields\[0\]\.expression: has 9 comprehensions \(all, exists, exists_one, map, filter\); at most 8$/);
  });

  it("refuses comprehensions nested deeper than the limit, naming the field", () => {
    assert.equal(expressionProblem(nestedAll(expressionLimits.nestedComprehensions)), undefined);
    assert.match(saveError(nestedAll(expressionLimits.nestedComprehensions + 1)), /^document\.calculatedFields\[0\]\.expression: runs 3 comprehensions inside one another; at most 2$/);
  });

  it("refuses over-long expressions, by characters and by nodes, naming the field", () => {
    assert.match(saveError(`1${" + 1".repeat(expressionLimits.chars / 4)}`), /^document\.calculatedFields\[0\]\.expression: Too big: expected string to have <=1000 characters$/);
    assert.match(expressionProblem("1".repeat(expressionLimits.chars + 1))!, /^is 1001 characters long; at most 1000$/);
    const list = `size([${Array.from({ length: expressionLimits.nodes }, (_, i) => i % 10).join(",")}])`;
    assert.ok(list.length <= expressionLimits.chars);
    assert.match(saveError(list), /^document\.calculatedFields\[0\]\.expression: has 302 parts \(nodes of its parsed tree\); at most 300$/);
  });

  it("refuses what does not parse, and empty expressions, naming the field and the position", () => {
    assert.equal(saveError("age * ("), "document.calculatedFields[0].expression: does not parse: 1:5: found * but expecting end of input");
    assert.equal(saveError("  "), "document.calculatedFields[0].expression: is empty");
  });

  it("bounds the document's expressions together, reporting the field that goes over", () => {
    const long = `'${"x".repeat(expressionLimits.chars - 2)}'`;
    const fields = Array.from({ length: expressionLimits.totalChars / expressionLimits.chars + 1 }, () => ({ expression: long }));
    assert.deepEqual(calculatedFieldProblems(fields), [
      { index: 10, message: "takes the document's expressions over 10000 characters together" },
    ]);
    assert.deepEqual(calculatedFieldProblems(fields.slice(1)), []);
  });

  it("names the second field when it is the costly one", () => {
    const result = formDocumentSchema.safeParse({
      blocks: [],
      calculatedFields: [
        { name: "fine", type: "NUMBER", expression: "1" },
        { name: "slow", type: "NUMBER", expression: nestedAll(4) },
      ],
    });
    assert.equal(result.success, false);
    assert.match(describeZodError(result.error!, "body.document"), /^body\.document\.calculatedFields\[1\]\.expression: runs 4 comprehensions inside one another/);
  });
});
