// Recall on the hosted page (what `{{name}}` means: packages/form-document/src/recall.ts). The server fills
// each recalling text in from the answers it has: those posted so far (the page a respondent without
// JavaScript posts on to), and on the thank-you page the response's. It marks such a text with its own
// words (data-recall), and the page carries what recall needs of the questions (config.recall), so
// form-page.js fills the text in again as answers change, with the same code (form-logic.js). What is
// recalled is escaped like any other text: an answer never becomes markup.
import {
  documentPages,
  fillRecall,
  hasRecall,
  recallingThankYouTexts,
  recallsIn,
  recallsOf,
  recallValues,
  type FormDocument,
  type FormSettings,
  type RecallBlock,
} from "@formsvc/form-document";
import { readAnswers, type FieldValues } from "./form-fields.ts";
import { escapeHtml, multiline } from "./html-text.ts";

/** The values the page's texts recall, by name; empty before anything is answered. */
export type RecallValues = Record<string, string>;

/** A text as HTML: escaped, and when it recalls, filled in and marked for the script (line breaks kept with `lines`). */
export function recalledHtml(text: string, values: RecallValues = {}, lines = false): string {
  const html = lines ? multiline : escapeHtml;
  if (!hasRecall(text)) return html(text);
  return `<span data-recall="${escapeHtml(text)}">${html(fillRecall(text, values))}</span>`;
}

/** A text as plain words, filled in (for attributes and the error summary). */
export function recalledText(text: string, values: RecallValues = {}): string {
  return hasRecall(text) ? fillRecall(text, values) : text;
}

/** The texts of the blocks that may recall answers. */
function blockTexts(doc: FormDocument): string[] {
  return doc.blocks.flatMap((block) => Object.entries(block).filter(([property, value]) => typeof value === "string" && recallsIn(block, property)).map(([, value]) => value as string));
}

/** The values recalled from the fields posted so far (the pages before, carried along) and the hidden fields. */
export function postedRecallValues(doc: FormDocument, fields: FieldValues | undefined, hidden: Record<string, string>): RecallValues {
  return recallValues(doc.blocks, fields ? readAnswers(doc, fields).answers : {}, hidden);
}

/**
 * What the page's script needs to fill recalls in: the questions recalled (key, type, the texts of their
 * options). null when the page recalls nothing.
 */
export function recallConfig(doc: FormDocument, settings: FormSettings): { blocks: RecallBlock[] } | null {
  const texts = [...blockTexts(doc), ...recallingThankYouTexts.map((property) => settings.thankYou[property])];
  const names = new Set(texts.flatMap((text) => recallsOf(text).map((r) => r.name)));
  if (names.size === 0) return null;
  const blocks = doc.blocks.flatMap((block) => {
    if (!("key" in block) || !block.key || !names.has(block.key)) return [];
    const { key, type } = block;
    const lists = Object.fromEntries((["options", "rows", "columns"] as const).filter((list) => list in block).map((list) => [list, (block as Record<string, unknown>)[list]]));
    return [{ key, type, ...lists } as RecallBlock];
  });
  return { blocks };
}

/**
 * Of a completion's calculated fields (by name), those the thank-you screen recalls in any of the form's
 * languages: the only ones a respondent is told (others may be what they are not to see).
 */
export function thankYouCalculated(settings: FormSettings, calculated: Record<string, unknown>): Record<string, unknown> {
  const texts = [
    ...recallingThankYouTexts.map((property) => settings.thankYou[property]),
    ...settings.languages.flatMap((l) => recallingThankYouTexts.map((property) => l.texts[`thankYou.${property}`] ?? "")),
  ];
  const names = new Set(texts.flatMap((text) => recallsOf(text).map((r) => r.name)));
  return Object.fromEntries(Object.entries(calculated).filter(([name]) => names.has(name)));
}

/** What the thank-you page after a plain post recalls: the response's answers, hidden fields and the calculated fields it names. */
export function thankYouRecallValues(
  doc: FormDocument,
  settings: FormSettings,
  answers: Record<string, unknown>,
  hidden: Record<string, string>,
  calculated: Record<string, unknown> = {},
): RecallValues {
  return recallValues(doc.blocks, answers, hidden, thankYouCalculated(settings, calculated));
}

/**
 * Whether the form's pages go one at a time without JavaScript (logic-steps.ts) for recall's sake: its
 * blocks recall answers over several pages, and a later page can show an earlier one's answers only once
 * they were posted.
 */
export function recallNeedsSteps(doc: FormDocument): boolean {
  return documentPages(doc).length > 1 && blockTexts(doc).some(hasRecall);
}
