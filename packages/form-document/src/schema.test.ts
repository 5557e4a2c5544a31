import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { describeZodError, formatPath } from "./errors.ts";
import { choiceBlockTypes, formDocumentExample, formDocumentSchema, inputBlockTypes, limits } from "./schema.ts";

const designExample = {
  ...formDocumentExample,
  // DESIGN.md writes the expression as "..."; a real one, since expressions must parse.
  calculatedFields: [{ name: "score", type: "NUMBER", expression: "1 + 1" }],
};

function errorOf(doc: unknown): string {
  const result = formDocumentSchema.safeParse(doc);
  assert.equal(result.success, false, "expected the document to be refused");
  return describeZodError(result.error!, "document");
}

test("the design's example document is valid and parses unchanged", () => {
  const parsed = formDocumentSchema.parse(designExample);
  assert.deepEqual(parsed, designExample);
});

test("every input type is accepted with its required fields", () => {
  for (const type of inputBlockTypes) {
    const block: Record<string, unknown> = { type, question: `A ${type} question` };
    if (choiceBlockTypes.includes(type as never)) block.options = [{ text: "One" }];
    if (type === "CONSENT") block.text = "I agree";
    if (type === "MATRIX") Object.assign(block, { rows: [{ text: "Row" }], columns: [{ text: "Column" }] });
    assert.equal(formDocumentSchema.safeParse({ blocks: [block] }).success, true, type);
  }
  assert.equal(formDocumentSchema.safeParse({ blocks: [] }).success, true);
});

test("an empty question names its path", () => {
  const message = errorOf({ blocks: [{ type: "SHORT_TEXT", question: "" }] });
  assert.match(message, /^document\.blocks\[0\]\.question: /);
});

test("a blank question is refused", () => {
  assert.match(errorOf({ blocks: [{ type: "SHORT_TEXT", question: "   " }] }), /^document\.blocks\[0\]\.question: must not be blank/);
});

test("a choice block without options names the options path", () => {
  const doc = { blocks: [{ type: "HEADING", text: "x" }, { type: "PAGE_BREAK" }, { type: "DROPDOWN", question: "Pick", options: [] }] };
  assert.match(errorOf(doc), /^document\.blocks\[2\]\.options: needs at least one option/);
  const missing = { blocks: [{ type: "CHECKBOXES", question: "Pick" }] };
  assert.match(errorOf(missing), /^document\.blocks\[0\]\.options: is required/);
});

test("an option without text is refused", () => {
  const doc = { blocks: [{ type: "MULTIPLE_CHOICE", question: "Pick", options: [{ text: "a" }, { id: "o2" }] }] };
  assert.match(errorOf(doc), /^document\.blocks\[0\]\.options\[1\]\.text: is required/);
});

test("unknown properties are errors that name the path", () => {
  assert.equal(errorOf({ blocks: [{ type: "EMAIL", question: "Mail", colour: "red" }] }), "document.blocks[0].colour: unknown property");
  assert.equal(errorOf({ blocks: [], theme: "dark" }), "document.theme: unknown property");
  assert.match(errorOf({ blocks: [{ type: "PAGE_BREAK", question: "no" }] }), /^document\.blocks\[0\]\.question: unknown property/);
  assert.match(errorOf({ blocks: [{ type: "HEADING", text: "x", key: "k" }] }), /^document\.blocks\[0\]\.key: unknown property/);
  // options are only for choice types
  assert.match(errorOf({ blocks: [{ type: "SHORT_TEXT", question: "q", options: [] }] }), /^document\.blocks\[0\]\.options: unknown property/);
});

test("an unknown block type lists the valid ones", () => {
  const message = errorOf({ blocks: [{ type: "SLIDER", question: "How much?" }] });
  assert.match(message, /^document\.blocks\[0\]\.type: must be one of SHORT_TEXT, LONG_TEXT/);
  assert.match(message, /PAGE_BREAK/);
  assert.match(errorOf({ blocks: [{ question: "no type" }] }), /^document\.blocks\[0\]\.type: must be one of/);
});

test("blocks is required and must be an array", () => {
  assert.match(errorOf({}), /^document\.blocks: is required/);
  assert.match(errorOf({ blocks: {} }), /^document\.blocks: /);
  assert.match(errorOf(null), /^document: /);
  assert.match(errorOf({ blocks: ["SHORT_TEXT"] }), /^document\.blocks\[0\]: /);
});

test("RATING max is an integer from 2 to 10", () => {
  const rating = (max: unknown) => ({ blocks: [{ type: "RATING", question: "Stars", max }] });
  assert.equal(formDocumentSchema.safeParse(rating(2)).success, true);
  assert.equal(formDocumentSchema.safeParse(rating(10)).success, true);
  assert.match(errorOf(rating(1)), /^document\.blocks\[0\]\.max: /);
  assert.match(errorOf(rating(11)), /^document\.blocks\[0\]\.max: /);
  assert.match(errorOf(rating(4.5)), /^document\.blocks\[0\]\.max: /);
  assert.equal(formDocumentSchema.safeParse({ blocks: [{ type: "RATING", question: "Stars" }] }).success, true);
});

test("NUMBER min and max are numbers and max is not below min", () => {
  const number = (extra: object) => ({ blocks: [{ type: "NUMBER", question: "Age", ...extra }] });
  assert.equal(formDocumentSchema.safeParse(number({ min: 0, max: 120 })).success, true);
  assert.equal(formDocumentSchema.safeParse(number({ min: -5.5 })).success, true);
  assert.match(errorOf(number({ min: 10, max: 1 })), /^document\.blocks\[0\]\.max: must not be less than min/);
  assert.match(errorOf(number({ min: "1" })), /^document\.blocks\[0\]\.min: /);
});

test("ids and keys follow their patterns", () => {
  assert.match(errorOf({ blocks: [{ id: "has space", type: "DATE", question: "When" }] }), /^document\.blocks\[0\]\.id: /);
  assert.match(errorOf({ blocks: [{ key: "1abc", type: "DATE", question: "When" }] }), /^document\.blocks\[0\]\.key: must start with a letter/);
  assert.match(errorOf({ blocks: [{ key: "a".repeat(65), type: "DATE", question: "When" }] }), /^document\.blocks\[0\]\.key: /);
  assert.equal(formDocumentSchema.safeParse({ blocks: [{ key: "A_b9", id: "x-Y_1", type: "DATE", question: "When" }] }).success, true);
});

test("strings and lists are bounded", () => {
  assert.match(errorOf({ blocks: [{ type: "SHORT_TEXT", question: "q".repeat(limits.question + 1) }] }), /^document\.blocks\[0\]\.question: Too big/);
  assert.equal(formDocumentSchema.safeParse({ blocks: [{ type: "SHORT_TEXT", question: "q".repeat(limits.question) }] }).success, true);
  assert.match(errorOf({ blocks: [{ type: "PARAGRAPH", text: "t".repeat(limits.text + 1) }] }), /^document\.blocks\[0\]\.text: Too big/);
  const many = Array.from({ length: limits.blocks + 1 }, () => ({ type: "PAGE_BREAK" }));
  assert.match(errorOf({ blocks: many }), /^document\.blocks: Too big/);
  assert.equal(formDocumentSchema.safeParse({ blocks: many.slice(1) }).success, true);
});

test("hidden and calculated field names are identifiers and unique", () => {
  assert.match(errorOf({ blocks: [], hiddenFields: [{ name: "utm-source" }] }), /^document\.hiddenFields\[0\]\.name: /);
  assert.match(errorOf({ blocks: [], hiddenFields: [{ name: "a" }, { name: "a" }] }), /^document\.hiddenFields\[1\]\.name: duplicate name "a"/);
  assert.match(
    errorOf({ blocks: [], hiddenFields: [{ name: "a" }], calculatedFields: [{ name: "a", type: "TEXT", expression: "'a'" }] }),
    /^document\.calculatedFields\[0\]\.name: duplicate name "a"/,
  );
  assert.match(errorOf({ blocks: [], calculatedFields: [{ name: "s", type: "DATE", expression: "1" }] }), /^document\.calculatedFields\[0\]\.type: /);
  assert.equal(formDocumentSchema.safeParse({ blocks: [], hiddenFields: [{ name: "_x9" }, { name: "b" }] }).success, true);
});

test("describeZodError names at most three problems and counts the rest", () => {
  const doc = { blocks: Array.from({ length: 5 }, () => ({ type: "SHORT_TEXT", question: "" })) };
  const message = errorOf(doc);
  assert.equal(message.split("; ").length, 3);
  assert.match(message, /\(and 2 more\)$/);
});

test("describeZodError works without a root and with odd path segments", () => {
  const result = z.strictObject({ a: z.strictObject({ "b-c": z.string() }) }).safeParse({ a: { "b-c": 1 } });
  assert.match(describeZodError(result.error!), /^a\["b-c"\]: /);
  assert.equal(formatPath("", ["blocks", 2, "options"]), "blocks[2].options");
  assert.equal(formatPath("document", []), "document");
  const top = z.string().safeParse(5);
  assert.match(describeZodError(top.error!), /^Invalid input/);
});

test("the document schema converts to JSON Schema (for the OpenAPI document)", () => {
  // Named (meta id "FormDocument"): the document refers to it once, from wherever it is used.
  const root = z.toJSONSchema(formDocumentSchema) as Record<string, any>;
  assert.equal(root.$ref, "#/$defs/FormDocument");
  const json = root.$defs.FormDocument;
  assert.equal(json.type, "object");
  assert.equal(json.additionalProperties, false);
  assert.deepEqual(json.required, ["blocks"]);
  assert.ok(Array.isArray(json.examples));
  assert.equal(json.properties.blocks.items.oneOf.length, 23);
});
