// How the app shows an answer in the Responses table and the CSV export: option ids become their text
// in the version the respondent saw; lists are joined; files are named.
import type { JsonValue } from "@bufbuild/protobuf";

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
    const options = (block as { options?: unknown }).options;
    if (!Array.isArray(options)) continue;
    for (const option of options) {
      const { id, text } = option as { id?: unknown; text?: unknown };
      if (typeof id === "string" && typeof text === "string") texts.set(id, text);
    }
  }
  return texts;
}

const choiceTypes = new Set(["MULTIPLE_CHOICE", "CHECKBOXES", "DROPDOWN"]);

function plain(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return value.map(plain).filter((v) => v !== "").join(", ");
  return JSON.stringify(value as JsonValue);
}

/** The answer as one line of text. */
export function displayValue(answer: AnswerJson, options: Map<string, string>): string {
  if (answer.files) return answer.files.map((f) => f.name).join(", ");
  if (choiceTypes.has(answer.type)) {
    const ids = Array.isArray(answer.value) ? answer.value : [answer.value];
    return ids
      .filter((id) => id !== null && id !== undefined && id !== "")
      .map((id) => options.get(String(id)) ?? String(id))
      .join(", ");
  }
  return plain(answer.value);
}
