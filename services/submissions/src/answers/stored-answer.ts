import type { CheckedAnswer } from "@formsvc/form-document";

/** A file attached to an upload answer (FILE, SIGNATURE): a copy of its upload's metadata. */
export interface StoredFile {
  /** The upload id, which is also the id `ReadFile` takes. */
  id: string;
  name: string;
  contentType: string;
  size: number;
}

/**
 * One answer of a response, as stored (by key) in `responses.answers`: the answer as checked (the
 * question as it was in the version the respondent saw, so a response stays readable after the question
 * is renamed or removed), and the files of an upload answer.
 */
export interface StoredAnswer extends CheckedAnswer {
  /** For answers that take uploads, in the order of `value` (the upload ids). */
  files?: StoredFile[];
}

export type StoredAnswers = Record<string, StoredAnswer>;
