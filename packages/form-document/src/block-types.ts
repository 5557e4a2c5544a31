// The document's block types (the question types of question-types.ts and the layout blocks), limits and
// name patterns: plain data without zod, so the browser app can import them (through
// "@formsvc/form-document/block-types") without bundling the schemas.

export * from "./question-types.ts";
import { choiceBlockTypes, inputBlockTypes, scaleOf, type ChoiceBlockType, type InputBlockType } from "./question-types.ts";

/** Blocks that only lay the form out; they take no answer and have no `key`. */
export const layoutBlockTypes = ["HEADING", "PARAGRAPH", "PAGE_BREAK"] as const;
export const blockTypes = [...inputBlockTypes, ...layoutBlockTypes] as const;

export type LayoutBlockType = (typeof layoutBlockTypes)[number];
export type BlockType = (typeof blockTypes)[number];

const inputTypeSet: ReadonlySet<string> = new Set(inputBlockTypes);
const choiceTypeSet: ReadonlySet<string> = new Set(choiceBlockTypes);

// Generic over the block's type so that this module needs nothing of the schema's (and so of zod): for the
// document's Block they narrow to InputBlock and ChoiceBlock.
export function isInputBlock<B extends { type: string }>(block: B): block is Extract<B, { type: InputBlockType }> {
  return inputTypeSet.has(block.type);
}

export function isChoiceBlock<B extends { type: string }>(block: B): block is Extract<B, { type: ChoiceBlockType }> {
  return choiceTypeSet.has(block.type);
}

type Texts = { id: string; text: string }[];

/**
 * The texts an answer's ids stand for, as events carry them beside the value: a choice's options, a
 * matrix's rows and columns (empty lists for other blocks).
 */
export function fieldTexts(block: { type: string; options?: { id?: string; text: string }[]; rows?: { id?: string; text: string }[]; columns?: { id?: string; text: string }[] }): {
  options: Texts;
  rows: Texts;
  columns: Texts;
} {
  const texts = (list: { id?: string; text: string }[] | undefined) => (list ?? []).map((o) => ({ id: o.id ?? "", text: o.text }));
  return {
    options: choiceTypeSet.has(block.type) ? texts(block.options) : [],
    rows: block.type === "MATRIX" ? texts(block.rows) : [],
    columns: block.type === "MATRIX" ? texts(block.columns) : [],
  };
}

/**
 * What calculated fields' CEL expressions may cost, checked when a form is saved (expression-cost.ts):
 * evaluation time grows with the size of the expression and, multiplied by the answers' list sizes,
 * with every comprehension (all, exists, exists_one, map, filter) inside another.
 */
export const expressionLimits = {
  /** Characters of one expression. */
  chars: 1000,
  /** Characters of all the document's expressions together (each save parses them all). */
  totalChars: 10_000,
  /** Nodes of the parsed tree, macros expanded. */
  nodes: 300,
  /** Levels of the parsed tree, macros expanded (`a + b + c` is three deep). */
  depth: 50,
  /** Comprehensions in one expression. */
  comprehensions: 8,
  /** Comprehensions run once per element of another (`l.all(x, m.exists(y, x == y))` is two). */
  nestedComprehensions: 2,
} as const;

export const limits = {
  blocks: 500,
  options: 500,
  hiddenFields: 100,
  calculatedFields: 100,
  title: 200,
  question: 1000,
  fieldName: 200,
  description: 5000,
  placeholder: 500,
  optionText: 1000,
  scaleLabel: 200,
  /** Rows, and columns, of a matrix. */
  matrixLines: 50,
  text: 5000,
  expression: expressionLimits.chars,
} as const;

/** Default of a RATING block's `max`. */
export const defaultRatingMax = scaleOf({ type: "RATING" }).max;

export const idPattern = /^[A-Za-z0-9_-]{1,64}$/;
export const keyPattern = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
export const fieldNamePattern = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
