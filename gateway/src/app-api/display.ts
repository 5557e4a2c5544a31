// How the app shows an answer in the Responses table and the CSV export: option ids become their text
// in the version the respondent saw; lists are joined; files are named.
import { answerText } from "@formsvc/form-document";

export interface AnswerJson {
  questionId: string;
  type: string;
  label: string;
  value: unknown;
  files?: { name: string; url: string }[];
}

/** Option id -> text of every choice block of a document. */
export function optionTexts(document: unknown): Map<string, string> {
  const texts = new Map<string, string>();
  const blocks = (document as { blocks?: unknown } | null)?.blocks;
  if (!Array.isArray(blocks)) return texts;
  for (const block of blocks) {
    // A matrix's rows and columns read as texts too.
    for (const list of ["options", "rows", "columns"]) {
      const options = (block as Record<string, unknown>)[list];
      if (!Array.isArray(options)) continue;
      for (const option of options) {
        const { id, text } = option as { id?: unknown; text?: unknown };
        if (typeof id === "string" && typeof text === "string") texts.set(id, text);
      }
    }
  }
  return texts;
}

/** The answer as one line of text. */
export function displayValue(answer: AnswerJson, options: Map<string, string>): string {
  return answerText(answer.type, answer.value, { optionText: (id) => options.get(id), fileNames: answer.files?.map((f) => f.name) });
}
