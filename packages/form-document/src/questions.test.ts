import { test } from "node:test";
import assert from "node:assert/strict";
import { normalizeDocument } from "./normalize.ts";
import { listQuestions } from "./questions.ts";
import { formDocumentSchema } from "./schema.ts";

test("questions: input blocks in order, then hidden fields, respondent country, calculated fields", () => {
  const { document } = normalizeDocument(
    formDocumentSchema.parse({
      blocks: [
        { type: "HEADING", text: "Welcome" },
        { id: "b1", key: "q_name", type: "SHORT_TEXT", question: "Your full name" },
        { id: "b2", key: "q_mail", type: "EMAIL", question: "Email address", fieldName: "email" },
        { type: "PAGE_BREAK" },
        { id: "b3", key: "q_cv", type: "FILE", question: "Upload your CV", fieldName: "  " },
        { type: "PARAGRAPH", text: "Thanks" },
      ],
      hiddenFields: [{ name: "utm_source" }, { name: "ref" }],
      calculatedFields: [{ name: "score", type: "NUMBER", expression: "1 + 1" }],
    }),
    {},
  );
  assert.deepEqual(listQuestions(document), [
    { id: "b1", type: "SHORT_TEXT", label: "Your full name", key: "q_name" },
    { id: "b2", type: "EMAIL", label: "email", key: "q_mail" },
    { id: "b3", type: "FILE", label: "Upload your CV", key: "q_cv" },
    { id: "hidden:utm_source", type: "HIDDEN_FIELDS", label: "utm_source", key: "hidden:utm_source" },
    { id: "hidden:ref", type: "HIDDEN_FIELDS", label: "ref", key: "hidden:ref" },
    { id: "meta:country", type: "RESPONDENT_COUNTRY", label: "Respondent country", key: "meta:country" },
    { id: "calculated:score", type: "CALCULATED_FIELD", label: "score", key: "calculated:score" },
  ]);
});

test("an empty document still has the respondent country column", () => {
  assert.deepEqual(listQuestions({ blocks: [] }), [
    { id: "meta:country", type: "RESPONDENT_COUNTRY", label: "Respondent country", key: "meta:country" },
  ]);
});

test("a renamed question keeps its key and id; only the label follows the name", () => {
  const first = normalizeDocument(formDocumentSchema.parse({ blocks: [{ id: "b", type: "PHONE", question: "Phone" }] }), {});
  const renamed = normalizeDocument(
    formDocumentSchema.parse({ blocks: [{ id: "b", type: "PHONE", question: "Mobile", fieldName: "mobile" }] }),
    first.blockKeys,
  );
  const [before] = listQuestions(first.document);
  const [after] = listQuestions(renamed.document);
  assert.equal(after.key, before.key);
  assert.equal(after.id, "b");
  assert.equal(before.label, "Phone");
  assert.equal(after.label, "mobile");
});
