import { isInputBlock } from "./block-types.ts";
import type { FormDocument } from "./schema.ts";

/** A column of the Submissions table. */
export interface Question {
  id: string;
  /** The block type, or HIDDEN_FIELDS, RESPONDENT_COUNTRY, CALCULATED_FIELD for the extra columns. */
  type: string;
  /** The field name where one was given, otherwise the question text. */
  label: string;
  /** Where the answer is filed in a submission. */
  key: string;
}

export const respondentCountryQuestion: Question = {
  id: "meta:country",
  type: "RESPONDENT_COUNTRY",
  label: "Respondent country",
  key: "meta:country",
};

export const hiddenFieldKey = (name: string) => `hidden:${name}`;
export const calculatedFieldKey = (name: string) => `calculated:${name}`;

/**
 * The questions of a (normalized) document: its input blocks in order, then one HIDDEN_FIELDS entry per
 * hidden field, one RESPONDENT_COUNTRY entry, and one CALCULATED_FIELD entry per calculated field.
 */
export function listQuestions(document: FormDocument): Question[] {
  const questions: Question[] = [];
  for (const block of document.blocks) {
    if (!isInputBlock(block)) continue;
    const fieldName = block.fieldName?.trim();
    questions.push({
      id: block.id ?? "",
      type: block.type,
      label: fieldName ? fieldName : block.question,
      key: block.key ?? "",
    });
  }
  for (const field of document.hiddenFields ?? []) {
    const key = hiddenFieldKey(field.name);
    questions.push({ id: key, type: "HIDDEN_FIELDS", label: field.name, key });
  }
  questions.push({ ...respondentCountryQuestion });
  for (const field of document.calculatedFields ?? []) {
    const key = calculatedFieldKey(field.name);
    questions.push({ id: key, type: "CALCULATED_FIELD", label: field.name, key });
  }
  return questions;
}
