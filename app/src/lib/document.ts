// Editing the v1 form document in the browser: new blocks of each type, moves, and the small checks the
// editor makes before saving (the server checks everything again).
import { blockTypes, defaultRatingMax, fieldNamePattern, inputBlockTypes, takesOptions, takesPlaceholder } from "@formsvc/form-document/block-types";
import { calculatedFieldProblems } from "@formsvc/form-document/expression-cost";
import type { LogicRule } from "@formsvc/form-document/logic";
import { logicProblems } from "@formsvc/form-document/logic-check";
import { recallProblems } from "@formsvc/form-document/recall-check";
import type { Block, BlockType, CalculatedField, Form, FormDocument, HiddenField } from "../types.ts";
import { labelsOf, t, type MessageKey } from "../i18n/messages.ts";

export { blockTypes };

/** Each block type's name in the language the app speaks (read when shown, so it follows a change of language). */
export const blockTypeLabels = labelsOf(blockTypes, (type) => `blockType.${type}`);

const inputTypeSet: ReadonlySet<string> = new Set(inputBlockTypes);

export const isInputType = (type: string) => inputTypeSet.has(type);
export const isChoiceType = takesOptions;
export { takesPlaceholder };

/** A loosely typed block for the editor: every property any block type may have. */
export interface EditableBlock {
  id?: string;
  key?: string;
  type: BlockType;
  question?: string;
  fieldName?: string;
  description?: string;
  required?: boolean;
  placeholder?: string;
  options?: { id?: string; text: string }[];
  rows?: { id?: string; text: string }[];
  columns?: { id?: string; text: string }[];
  multiple?: boolean;
  min?: number;
  max?: number;
  minLabel?: string;
  maxLabel?: string;
  text?: string;
}

/** The question a new block of a type starts with, in the language the app speaks. */
const defaultQuestions: Partial<Record<BlockType, MessageKey>> = Object.fromEntries(
  (["SHORT_TEXT", "LONG_TEXT", "EMAIL", "NUMBER", "PHONE", "URL", "DATE", "TIME", "MULTIPLE_CHOICE", "CHECKBOXES", "DROPDOWN", "MULTI_SELECT", "RANKING", "MATRIX", "RATING", "LINEAR_SCALE", "NPS", "CONSENT", "FILE", "SIGNATURE"] as const).map((type) => [type, `newBlock.question.${type}` as const]),
);

/** The form being edited: kept by the form page across its tabs, changed by the editor. */
export interface Draft {
  name: string;
  title: string;
  blocks: EditableBlock[];
  hiddenFields: HiddenField[];
  calculatedFields: CalculatedField[];
  /** Conditional logic rules (form-document's logic.ts), naming blocks by id; none when absent. */
  logic?: LogicRule[];
}

/** A draft of the form as stored (copies, so editing never touches the loaded form). */
export function draftOf(form: Form): Draft {
  const doc = form.document;
  return {
    name: form.name,
    title: doc.title ?? "",
    blocks: structuredClone((doc.blocks ?? []) as EditableBlock[]),
    hiddenFields: structuredClone(doc.hiddenFields ?? []),
    calculatedFields: structuredClone(doc.calculatedFields ?? []),
    logic: structuredClone((doc.logic ?? []) as LogicRule[]),
  };
}

/** A random id for a new block or option (the server keeps ids it is given, and assigns keys). */
export function newId(): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let id = "";
  for (let i = 0; i < 12; i++) id += alphabet[Math.floor(Math.random() * alphabet.length)];
  return id;
}

/** A new block of `type` with sensible starting content. */
export function newBlock(type: BlockType): EditableBlock {
  const id = newId();
  if (type === "PAGE_BREAK") return { id, type };
  if (type === "HEADING") return { id, type, text: t("newBlock.heading") };
  if (type === "PARAGRAPH") return { id, type, text: t("newBlock.paragraph") };
  if (type === "CONSENT") return { id, type, question: t(defaultQuestions[type]!), required: true, text: t("newBlock.consent") };
  const question = defaultQuestions[type];
  const block: EditableBlock = { id, type, question: question ? t(question) : t("editor.question"), required: false };
  if (isChoiceType(type)) block.options = [1, 2].map((number) => ({ id: newId(), text: t("options.new", { list: "options", number }) }));
  if (type === "RATING") block.max = defaultRatingMax;
  if (type === "MATRIX") {
    block.rows = [1, 2].map((number) => ({ id: newId(), text: t("options.new", { list: "rows", number }) }));
    block.columns = (["newBlock.disagree", "newBlock.neutral", "newBlock.agree"] as const).map((key) => ({ id: newId(), text: t(key) }));
  }
  return block;
}

/** `list` with the item at `index` moved by `delta` places (clamped); the same list when it cannot move. */
export function moveItem<T>(list: readonly T[], index: number, delta: number): T[] {
  const target = index + delta;
  if (index < 0 || index >= list.length || target < 0 || target >= list.length || delta === 0) return [...list];
  const next = [...list];
  const [item] = next.splice(index, 1);
  next.splice(target, 0, item);
  return next;
}

export function replaceItem<T>(list: readonly T[], index: number, item: T): T[] {
  return list.map((x, i) => (i === index ? item : x));
}

export function removeItem<T>(list: readonly T[], index: number): T[] {
  return list.filter((_, i) => i !== index);
}

/**
 * The block types whose name matches what was typed after `/` in the editor's insert line, best first: a
 * name that starts with it, then a word of a name, then a name that holds it. Each type is found by its
 * name in the app's language and by its English id (`long` finds LONG_TEXT in every language).
 */
export function blockTypesMatching(typed: string): BlockType[] {
  const query = typed.trim().toLowerCase().replace(/[\s_-]+/g, " ");
  if (!query) return [...blockTypes];
  const names = (type: BlockType) => [blockTypeLabels[type].toLowerCase().replace(/[\s_-]+/g, " "), type.toLowerCase().replace(/_/g, " ")];
  const rank = (type: BlockType) => {
    const all = names(type);
    if (all.some((n) => n.startsWith(query))) return 0;
    if (all.some((n) => n.split(/[\s()]+/).some((word) => word.startsWith(query)))) return 1;
    if (all.some((n) => n.includes(query))) return 2;
    return 3;
  };
  return blockTypes
    .map((type) => ({ type, rank: rank(type) }))
    .filter((m) => m.rank < 3)
    .sort((a, b) => a.rank - b.rank)
    .map((m) => m.type);
}

/** A short description of a block for its heading in the editor. */
export function blockSummary(block: EditableBlock): string {
  if (block.type === "PAGE_BREAK") return blockTypeLabels.PAGE_BREAK;
  if (block.type === "HEADING" || block.type === "PARAGRAPH") return block.text?.trim() || blockTypeLabels[block.type];
  return block.question?.trim() || `(${t("newBlock.noQuestion")})`;
}

/**
 * The document to save: properties that mean nothing for a block's type are dropped, blank optional
 * texts are left out, and numbers are numbers.
 */
export function cleanDocument(doc: { title?: string; blocks: EditableBlock[]; hiddenFields?: HiddenField[]; calculatedFields?: CalculatedField[]; logic?: LogicRule[] }): FormDocument {
  const blocks = doc.blocks.map((b): Block => {
    if (b.type === "PAGE_BREAK") return { ...(b.id ? { id: b.id } : {}), type: "PAGE_BREAK" } as Block;
    if (b.type === "HEADING" || b.type === "PARAGRAPH") return { ...(b.id ? { id: b.id } : {}), type: b.type, text: b.text ?? "" } as Block;
    const out: Record<string, unknown> = { type: b.type, question: b.question ?? "" };
    if (b.id) out.id = b.id;
    if (b.key) out.key = b.key;
    if (b.fieldName?.trim()) out.fieldName = b.fieldName.trim();
    if (b.description?.trim()) out.description = b.description;
    if (b.required) out.required = true;
    if (b.placeholder?.trim() && takesPlaceholder(b.type)) out.placeholder = b.placeholder;
    if (isChoiceType(b.type)) out.options = (b.options ?? []).map((o) => (o.id ? { id: o.id, text: o.text } : { text: o.text }));
    if (b.type === "NUMBER") {
      if (typeof b.min === "number" && Number.isFinite(b.min)) out.min = b.min;
      if (typeof b.max === "number" && Number.isFinite(b.max)) out.max = b.max;
    }
    if ((b.type === "RATING" || b.type === "LINEAR_SCALE") && typeof b.max === "number") out.max = b.max;
    if (b.type === "LINEAR_SCALE") {
      if (b.min === 0 || b.min === 1) out.min = b.min;
      if (b.minLabel?.trim()) out.minLabel = b.minLabel.trim();
      if (b.maxLabel?.trim()) out.maxLabel = b.maxLabel.trim();
    }
    if (b.type === "CONSENT") out.text = b.text ?? "";
    if (b.type === "MATRIX") {
      const lines = (list: { id?: string; text: string }[] = []) => list.map((o) => (o.id ? { id: o.id, text: o.text } : { text: o.text }));
      out.rows = lines(b.rows);
      out.columns = lines(b.columns);
      if (b.multiple) out.multiple = true;
    }
    if (b.type === "MULTI_SELECT") {
      if (typeof b.min === "number" && Number.isInteger(b.min)) out.min = b.min;
      if (typeof b.max === "number" && Number.isInteger(b.max)) out.max = b.max;
    }
    return out as Block;
  });
  const result: FormDocument = { blocks };
  if (doc.title?.trim()) result.title = doc.title.trim();
  if (doc.hiddenFields?.length) result.hiddenFields = doc.hiddenFields.map((f) => ({ name: f.name.trim() }));
  if (doc.calculatedFields?.length) {
    result.calculatedFields = doc.calculatedFields.map((f) => ({ name: f.name.trim(), type: f.type, expression: f.expression }));
  }
  // Shared, not copied: a draft is replaced, never changed in place (draftOf copied the rules once).
  if (doc.logic?.length) result.logic = doc.logic;
  return result;
}


/** Problems the editor can see before saving, each naming the block or field. */
export function documentProblems(doc: { blocks: EditableBlock[]; hiddenFields?: HiddenField[]; calculatedFields?: CalculatedField[]; logic?: LogicRule[] }): string[] {
  const problems: string[] = [];
  doc.blocks.forEach((b, i) => {
    const where = { block: i + 1, type: blockTypeLabels[b.type] };
    if (isInputType(b.type) && !b.question?.trim()) problems.push(t("problem.emptyQuestion", where));
    if (b.type === "CONSENT" && !b.text?.trim()) problems.push(t("problem.emptyConsent", where));
    if (isChoiceType(b.type)) {
      if (!b.options?.length) problems.push(t("problem.noOption", where));
      b.options?.forEach((o, j) => {
        if (!o.text.trim()) problems.push(t("problem.emptyOption", { ...where, option: j + 1 }));
      });
    }
    if (b.type === "NUMBER" && typeof b.min === "number" && typeof b.max === "number" && b.max < b.min) {
      problems.push(t("problem.range", where));
    }
  });
  const names = new Set<string>();
  const checkName = (kind: "hidden" | "calculated", name: string, i: number) => {
    if (!fieldNamePattern.test(name.trim())) problems.push(t("problem.fieldName", { kind, number: i + 1 }));
    else if (names.has(name.trim())) problems.push(t("problem.fieldNameTwice", { kind, number: i + 1, name: name.trim() }));
    names.add(name.trim());
  };
  doc.hiddenFields?.forEach((f, i) => checkName("hidden", f.name, i));
  doc.calculatedFields?.forEach((f, i) => checkName("calculated", f.name, i));
  // The server's own check of expressions (parse and cost), so a broken formula is named before saving.
  for (const { index, message } of calculatedFieldProblems(doc.calculatedFields ?? [])) {
    problems.push(t("problem.expression", { number: index + 1, message }));
  }
  // The server's own check of logic rules (targets exist, conditions fit, forwards only).
  for (const { path, message } of logicProblems({ blocks: doc.blocks, calculatedFields: doc.calculatedFields, logic: doc.logic ?? [] })) problems.push(t("problem.logic", { path, message }));
  // The server's own check of recalls ({{key}} in texts): each names an earlier question or a hidden field.
  for (const { path, message } of recallProblems(doc)) {
    const [, index, property] = /^document\.blocks\[(\d+)\]\.(\w+)$/.exec(path) ?? [];
    const block = doc.blocks[Number(index)];
    problems.push(block ? t("problem.recall", { block: Number(index) + 1, type: blockTypeLabels[block.type], property, message }) : t("problem.recallAt", { path, message }));
  }
  return problems;
}
