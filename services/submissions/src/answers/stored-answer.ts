import type { JsonValue } from "@bufbuild/protobuf";

/** A file attached to a FILE or SIGNATURE answer: a copy of its upload's metadata. */
export interface StoredFile {
  /** The upload id, which is also the id `ReadFile` takes. */
  id: string;
  name: string;
  contentType: string;
  size: number;
}

/**
 * One answer of a response, as stored (by key) in `responses.answers`: the question as it was in the
 * version the respondent saw, so a response stays readable after the question is renamed or removed.
 */
export interface StoredAnswer {
  questionId: string;
  /** The block type, or HIDDEN_FIELDS, RESPONDENT_COUNTRY, CALCULATED_FIELD. */
  type: string;
  /** The column label of that version: the field name where one was given, otherwise the question text. */
  label: string;
  /** The JSON value of DESIGN.md; for FILE and SIGNATURE the upload ids. */
  value: JsonValue;
  /** For FILE and SIGNATURE answers, in the order of `value`. */
  files?: StoredFile[];
}

export type StoredAnswers = Record<string, StoredAnswer>;
