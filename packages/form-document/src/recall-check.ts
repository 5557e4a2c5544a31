// The save-time check of recalls (recall.ts): every `{{name}}` of an owner's text names what it may. Zod-free,
// so the app runs the same check before saving (through "@formsvc/form-document/recall-check").
import { questionTypeOf } from "./question-types.ts";
import { recallNamePattern, recallingBlockTexts, recallingThankYouTexts, recallsIn, recallsOf, type Recall, type RecallBlock } from "./recall.ts";

/** One problem of a recall at save: where the text is (`blocks[3].question`) and what. */
export interface RecallProblem {
  path: string;
  message: string;
}

/** What the save-time check needs of a document. */
export interface RecallDocument {
  blocks: readonly (RecallBlock & { id?: string; question?: string; description?: string; text?: string })[];
  hiddenFields?: readonly { name: string }[];
  calculatedFields?: readonly { name: string }[];
}

/** What the save-time check needs of the settings: the thank-you texts and the translations. */
export interface RecallSettings {
  thankYou: { title: string; text: string };
  languages: readonly { language: string; texts: Record<string, string> }[];
}

/**
 * The problems of every recall in the document's texts (and, given the settings, the thank-you screen's
 * and the translations'): a name that is no question key, hidden field or calculated field; a name both
 * a question's key and a field's; in a block's text, a question that does not come before the block
 * (recall shows earlier answers), or a calculated field (worked out only when the response is completed,
 * so only the thank-you screen has it). Empty when every recall may be saved.
 */
export function recallProblems(doc: RecallDocument, settings?: RecallSettings, root = { document: "document", settings: "settings" }): RecallProblem[] {
  const problems: RecallProblem[] = [];
  const position = new Map<string, number>();
  doc.blocks.forEach((block, i) => block.key && questionTypeOf(block.type) && position.set(block.key, i));
  const hidden = new Set((doc.hiddenFields ?? []).map((f) => f.name));
  const calculated = new Set((doc.calculatedFields ?? []).map((f) => f.name));

  /** The problem of one recall in a text at `blockIndex` (undefined: the thank-you screen). */
  const problemOf = ({ source, name }: Recall, blockIndex: number | undefined): string | undefined => {
    if (!recallNamePattern.test(name)) return `${source} is not a recall: name a question's key, a hidden field or a calculated field, as {{name}}`;
    const isField = hidden.has(name) || calculated.has(name);
    const at = position.get(name);
    if (at !== undefined && isField) return `${source} is ambiguous: "${name}" is both a question's key and a ${hidden.has(name) ? "hidden" : "calculated"} field's name; rename the field`;
    if (at !== undefined) return blockIndex === undefined || at < blockIndex ? undefined : `${source} names question "${name}", which does not come before this text: recall shows earlier answers`;
    if (hidden.has(name)) return undefined;
    if (calculated.has(name)) {
      return blockIndex === undefined ? undefined : `${source} names calculated field "${name}", which is worked out when the response is completed: recall it on the thank-you screen`;
    }
    return `${source}: no question key, hidden field or calculated field is named "${name}"`;
  };
  const check = (path: string, text: unknown, blockIndex: number | undefined) => {
    if (typeof text !== "string") return;
    for (const recall of recallsOf(text)) {
      const message = problemOf(recall, blockIndex);
      if (message) problems.push({ path, message });
    }
  };

  const blockIndex = new Map<string, number>();
  doc.blocks.forEach((block, i) => {
    if (block.id) blockIndex.set(block.id, i);
    for (const property of recallingBlockTexts) if (recallsIn(block, property)) check(`${root.document}.blocks[${i}].${property}`, block[property], i);
  });
  if (!settings) return problems;
  for (const property of recallingThankYouTexts) check(`${root.settings}.thankYou.${property}`, settings.thankYou[property], undefined);
  // A translation's text recalls as the text it translates (its path: `<blockId>.question`, `thankYou.text`).
  settings.languages.forEach(({ texts }, l) => {
    for (const [path, text] of Object.entries(texts)) {
      const [owner, property] = path.split(".");
      const where = `${root.settings}.languages[${l}].texts[${JSON.stringify(path)}]`;
      if (owner === "thankYou" && (recallingThankYouTexts as readonly string[]).includes(property)) check(where, text, undefined);
      const index = blockIndex.get(owner);
      if (index !== undefined && recallsIn(doc.blocks[index], property)) check(where, text, index);
    }
  });
  return problems;
}
