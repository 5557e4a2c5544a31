import { test } from "node:test";
import assert from "node:assert/strict";
import { DocumentError } from "./errors.ts";
import { normalizeDocument } from "./normalize.ts";
import { formDocumentSchema, idPattern, isInputBlock, type Block, type FormDocument } from "./schema.ts";

const parse = (doc: unknown): FormDocument => formDocumentSchema.parse(doc);
const generatedKey = /^q_[a-z0-9]{8}$/;

function inputBlocks(doc: FormDocument) {
  return doc.blocks.filter(isInputBlock);
}

test("every block and option without an id gets one; every input block gets a key", () => {
  const doc = parse({
    blocks: [
      { type: "HEADING", text: "Hi" },
      { type: "SHORT_TEXT", question: "Name" },
      { type: "CHECKBOXES", question: "Pick", options: [{ id: "o1", text: "A" }, { text: "B" }, { text: "C" }] },
      { type: "PAGE_BREAK" },
    ],
  });
  const { document, blockKeys } = normalizeDocument(doc, {});
  const ids = document.blocks.map((b) => b.id!);
  for (const id of ids) assert.match(id, idPattern);
  assert.equal(new Set(ids).size, 4);
  assert.equal("key" in document.blocks[0], false, "layout blocks have no key");
  assert.equal("key" in document.blocks[3], false);
  const [name, pick] = inputBlocks(document);
  assert.match(name.key!, generatedKey);
  assert.match(pick.key!, generatedKey);
  assert.notEqual(name.key, pick.key);
  assert.ok(pick.type === "CHECKBOXES");
  assert.equal(pick.options[0].id, "o1");
  assert.match(pick.options[1].id!, idPattern);
  assert.notEqual(pick.options[1].id, pick.options[2].id);
  assert.deepEqual(blockKeys, { [name.id!]: name.key, [pick.id!]: pick.key });
  // the rest of the block is untouched
  assert.equal(name.question, "Name");
  assert.deepEqual(pick.options.map((o) => o.text), ["A", "B", "C"]);
});

test("the input document is not modified", () => {
  const doc = parse({ title: "T", blocks: [{ type: "EMAIL", question: "Mail" }], hiddenFields: [{ name: "h" }] });
  const copy = structuredClone(doc);
  const { document } = normalizeDocument(doc, {});
  assert.deepEqual(doc, copy);
  assert.equal(document.title, "T");
  assert.deepEqual(document.hiddenFields, [{ name: "h" }]);
});

test("a client key is kept when valid and free", () => {
  const doc = parse({ blocks: [{ id: "b1", key: "q_name", type: "SHORT_TEXT", question: "Name" }] });
  const { document, blockKeys } = normalizeDocument(doc, {});
  assert.equal(inputBlocks(document)[0].key, "q_name");
  assert.deepEqual(blockKeys, { b1: "q_name" });
});

test("keys stay across renames, and a different key sent later is ignored", () => {
  const first = normalizeDocument(parse({ blocks: [{ id: "b1", type: "SHORT_TEXT", question: "Name" }] }), {});
  const key = inputBlocks(first.document)[0].key!;
  const renamed = parse({ blocks: [{ id: "b1", key: "q_other", type: "SHORT_TEXT", question: "Full name", fieldName: "name" }] });
  const second = normalizeDocument(renamed, first.blockKeys);
  assert.equal(inputBlocks(second.document)[0].key, key);
  assert.equal(inputBlocks(second.document)[0].question, "Full name");
  assert.deepEqual(second.blockKeys, { b1: key });
  // and a type change keeps it too
  const retyped = normalizeDocument(parse({ blocks: [{ id: "b1", type: "LONG_TEXT", question: "Bio" }] }), second.blockKeys);
  assert.equal(inputBlocks(retyped.document)[0].key, key);
});

test("a removed block id that comes back gets its old key", () => {
  const v1 = normalizeDocument(
    parse({ blocks: [{ id: "a", key: "q_a", type: "EMAIL", question: "Mail" }, { id: "b", type: "DATE", question: "When" }] }),
    {},
  );
  const v2 = normalizeDocument(parse({ blocks: [{ id: "b", type: "DATE", question: "When" }] }), v1.blockKeys);
  assert.deepEqual(Object.keys(v2.blockKeys).sort(), ["a", "b"], "keys of removed blocks are remembered");
  const v3 = normalizeDocument(parse({ blocks: [{ id: "a", type: "EMAIL", question: "Email again" }] }), v2.blockKeys);
  assert.equal(inputBlocks(v3.document)[0].key, "q_a");
});

test("a client key owned by another block id (past or present) is replaced by a generated one", () => {
  const v1 = normalizeDocument(parse({ blocks: [{ id: "a", key: "q_a", type: "EMAIL", question: "Mail" }] }), {});
  // present: a copy of block a without its id
  const copy = normalizeDocument(
    parse({ blocks: [{ id: "a", key: "q_a", type: "EMAIL", question: "Mail" }, { key: "q_a", type: "EMAIL", question: "Mail 2" }] }),
    v1.blockKeys,
  );
  const [a, b] = inputBlocks(copy.document);
  assert.equal(a.key, "q_a");
  assert.match(b.key!, generatedKey);
  // past: block a was removed, a new block asks for its key
  const past = normalizeDocument(parse({ blocks: [{ id: "c", key: "q_a", type: "SHORT_TEXT", question: "Other" }] }), v1.blockKeys);
  assert.match(inputBlocks(past.document)[0].key!, generatedKey);
  assert.equal(past.blockKeys.a, "q_a");
});

test("two new blocks claiming the same key are refused", () => {
  const doc = parse({
    blocks: [
      { key: "q_x", type: "SHORT_TEXT", question: "One" },
      { type: "HEADING", text: "-" },
      { key: "q_x", type: "SHORT_TEXT", question: "Two" },
    ],
  });
  assert.throws(() => normalizeDocument(doc, {}), (err: unknown) => {
    assert.ok(err instanceof DocumentError);
    assert.match(err.message, /^document\.blocks\[2\]\.key: duplicate key "q_x"/);
    return true;
  });
});

test("duplicate block ids are refused, layout blocks included", () => {
  const doc = parse({ blocks: [{ id: "x", type: "PAGE_BREAK" }, { id: "x", type: "SHORT_TEXT", question: "Q" }] });
  assert.throws(() => normalizeDocument(doc, {}), /^DocumentError: document\.blocks\[1\]\.id: duplicate block id "x"/);
});

test("duplicate option ids in a block are refused; the same option id in two blocks is fine", () => {
  const bad = parse({ blocks: [{ type: "DROPDOWN", question: "Q", options: [{ id: "o", text: "A" }, { id: "o", text: "B" }] }] });
  assert.throws(() => normalizeDocument(bad, {}), (err: unknown) => {
    assert.ok(err instanceof DocumentError);
    assert.match(err.message, /^document\.blocks\[0\]\.options\[1\]\.id: duplicate option id "o"/);
    return true;
  });
  const ok = parse({
    blocks: [
      { type: "DROPDOWN", question: "Q", options: [{ id: "o", text: "A" }] },
      { type: "MULTIPLE_CHOICE", question: "R", options: [{ id: "o", text: "A" }] },
    ],
  });
  assert.equal(normalizeDocument(ok, {}).document.blocks.length, 2);
});

test("error paths start at the given root", () => {
  const doc = parse({ blocks: [{ id: "x", type: "PAGE_BREAK" }, { id: "x", type: "PAGE_BREAK" }] });
  assert.throws(() => normalizeDocument(doc, {}, "body.document"), /body\.document\.blocks\[1\]\.id/);
});

test("generated ids never reuse the id of a past block", () => {
  // Every block needs an id, and none may take one from blockKeys (it would inherit that key).
  const past: Record<string, string> = {};
  for (let i = 0; i < 50; i++) past[`p${i}`] = `k${i}`;
  const { document, blockKeys } = normalizeDocument(parse({ blocks: [{ type: "URL", question: "Site" }] }), past);
  const block = inputBlocks(document)[0];
  assert.equal(block.id! in past, false);
  assert.equal(Object.values(past).includes(block.key!), false);
  assert.equal(Object.keys(blockKeys).length, 51);
});

test("normalizing a normalized document changes nothing", () => {
  const once = normalizeDocument(
    parse({ blocks: [{ type: "RATING", question: "Stars", max: 7 }, { type: "MULTIPLE_CHOICE", question: "P", options: [{ text: "x" }] }] }),
    {},
  );
  const twice = normalizeDocument(parse(once.document), once.blockKeys);
  assert.deepEqual(twice, once);
  const block: Block = twice.document.blocks[0];
  assert.deepEqual(Object.keys(block).slice(0, 3), ["id", "key", "type"]);
});
