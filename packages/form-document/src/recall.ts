// Recall: an owner's text (a question, a description, a heading or paragraph, the thank-you screen) names
// an earlier answer, a hidden field or a calculated field as `{{name}}` (a question's key, a field's name),
// or `{{name|fallback}}`, and respondents read the answer there. What is recalled is plain text, never
// markup: renderers escape it as any other text. Zod-free, with no runtime import but question-types.ts,
// so the gateway's page (server-rendered), the browser (gateway/src/hosted/form-logic.js is built from
// this file too) and the save-time check in forms all read recall the same way.
import { answerText, questionTypeOf } from "./question-types.ts";

/** A `{{…}}` in a text: what is between the braces, one line without braces. */
const recallPattern = /\{\{([^{}\n]*)\}\}/g;
/** What a recall may name: a question's key or a hidden or calculated field's name. */
export const recallNamePattern = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** One recall of a text: the name (trimmed) and the text shown when it has no value (absent: nothing). */
export interface Recall {
  /** The whole `{{…}}`, as written. */
  source: string;
  name: string;
  fallback?: string;
}

/** The `{{…}}` parts of a text, each read as a recall (its name may not be a valid one: see recallProblems). */
export function recallsOf(text: string): Recall[] {
  return [...text.matchAll(recallPattern)].map(([source, inner]) => {
    const bar = inner.indexOf("|");
    return bar < 0 ? { source, name: inner.trim() } : { source, name: inner.slice(0, bar).trim(), fallback: inner.slice(bar + 1).trim() };
  });
}

/** A block's texts that may recall answers: a question's and its description, a heading's or paragraph's text (not a consent's, nor options). */
export const recallingBlockTexts = ["question", "description", "text"] as const;
/** The thank-you screen's texts that may recall answers (any question's, and calculated fields', which are known by then). */
export const recallingThankYouTexts = ["title", "text"] as const;

/** Whether a block's `property` may recall answers. */
export function recallsIn(block: { type: string }, property: string): boolean {
  if (!(recallingBlockTexts as readonly string[]).includes(property)) return false;
  return property !== "text" || block.type === "HEADING" || block.type === "PARAGRAPH";
}

/** Whether a text recalls anything: only such texts are filled in (and marked for the page's script). */
export function hasRecall(text: string | undefined): boolean {
  return text !== undefined && recallsOf(text).some((r) => recallNamePattern.test(r.name));
}

/**
 * The text with each recall filled in from `values` (by name), or its fallback where the value is
 * missing or empty; a `{{…}}` that names nothing valid stays as written. Plain text in, plain text out.
 */
export function fillRecall(text: string, values: Record<string, string>): string {
  return text.replace(recallPattern, (source: string) => {
    const [recall] = recallsOf(source);
    if (!recallNamePattern.test(recall.name)) return source;
    const value = Object.hasOwn(values, recall.name) ? values[recall.name] : "";
    return value !== "" ? value : (recall.fallback ?? "");
  });
}

/** What recall needs of a block: its key, type, and the texts its answer's ids stand for. */
export interface RecallBlock {
  type: string;
  key?: string;
  options?: readonly { id?: string; text: string }[];
  rows?: readonly { id?: string; text: string }[];
  columns?: readonly { id?: string; text: string }[];
}

/**
 * The values texts recall, by name: each answered question's answer as people read it (a choice's option
 * texts, never its ids; a matrix's `Row: Column`), each hidden field's value and each calculated field's.
 * A question's key wins over a field of the same name (saving refuses recalling such a name).
 */
export function recallValues(
  blocks: readonly RecallBlock[],
  answers: Record<string, unknown>,
  hidden: Record<string, string> = {},
  calculated: Record<string, unknown> = {},
): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(calculated)) if (value !== null && value !== undefined) values[name] = String(value);
  for (const [name, value] of Object.entries(hidden)) values[name] = value;
  for (const block of blocks) {
    if (!block.key || !questionTypeOf(block.type) || !Object.hasOwn(answers, block.key)) continue;
    const texts = new Map<string, string>();
    for (const list of [block.options, block.rows, block.columns]) for (const item of list ?? []) if (item.id) texts.set(item.id, item.text);
    values[block.key] = answerText(block.type, answers[block.key], { optionText: (id) => texts.get(id) });
  }
  return values;
}
