// Conditional logic: the operators each question type offers (data), and the one evaluator of a
// document's `logic` rules over a respondent's answers. Pure and zod-free, with no runtime import but
// question-types.ts, so the same code runs in submissions (validateAnswers), in the gateway's
// no-JavaScript pages and in the browser: gateway/src/hosted/form-logic.js is generated from this file
// (`node gateway/src/hosted/form-logic-build.ts`; a test fails while it is stale) and loaded before form-page.js.
//
// Rules act forwards only (checked at save, logic-check.ts): a rule's targets come after every question
// its conditions ask about, and a jump goes to a later page than theirs. So one pass over the pages in
// order decides everything, and no rule can depend on itself.
import { questionTypeOf, takesNumber, type AnswerShape, type JsonValue } from "./question-types.ts";

/** The comparisons a condition may make. */
export const logicOperators = [
  "EQUALS",
  "NOT_EQUALS",
  "CONTAINS",
  "IS_ANSWERED",
  "IS_NOT_ANSWERED",
  "GREATER_THAN",
  "LESS_THAN",
  "ANY_OF",
] as const;
export type LogicOperator = (typeof logicOperators)[number];

/** What a rule may do. */
export const logicActions = ["SHOW", "HIDE", "JUMP", "REQUIRE", "SET"] as const;
export type LogicActionType = (typeof logicActions)[number];

/** One comparison: the question (a block id), how, and with what (none for IS_ANSWERED, IS_NOT_ANSWERED). */
export interface LogicCondition {
  question: string;
  operator: LogicOperator;
  value?: string | number | string[];
}

/**
 * What a rule does when its conditions hold: show, hide or require a block (by id), jump to a page (from
 * 1), or set a calculated field (by name) to a value, in place of its expression's.
 */
export type LogicAction =
  | { action: "SHOW" | "HIDE" | "REQUIRE"; block: string }
  | { action: "JUMP"; page: number }
  | { action: "SET"; field: string; value: string | number };

/** "When <conditions> (all of them, or any) then <actions>". */
export interface LogicRule {
  when: { match?: "all" | "any"; conditions: LogicCondition[] };
  then: LogicAction[];
}

/** What the rules need of a block (the document's blocks are these and more). */
export interface LogicBlock {
  id?: string;
  type: string;
  key?: string;
  required?: boolean;
  /** A PAGE_BREAK that starts a screen, not one of the owner's pages (a form shown one question at a time). */
  screen?: boolean;
}

/** What the rules need of a document. */
export interface LogicDocument {
  blocks: readonly LogicBlock[];
  calculatedFields?: readonly { name: string; type: string }[];
  logic?: readonly LogicRule[];
}

/** Operators that compare with no value. */
export const valuelessOperators: readonly LogicOperator[] = ["IS_ANSWERED", "IS_NOT_ANSWERED"];

/**
 * The operators a question offers, by the shape of its answers: text is compared without regard to case
 * or surrounding spaces; numbers and rating steps by value; one option by its id (ANY_OF: one of a list
 * of ids); checkboxes by whether they include an option (CONTAINS) or any of a list (ANY_OF); uploads
 * rankings, matrices and consents only by whether there are any. Dates and times (text of `ordered` types) are also
 * ordered (GREATER_THAN: later than).
 */
const operatorsByAnswer: Record<AnswerShape, readonly LogicOperator[]> = {
  text: ["EQUALS", "NOT_EQUALS", "CONTAINS", "IS_ANSWERED", "IS_NOT_ANSWERED"],
  number: ["EQUALS", "NOT_EQUALS", "GREATER_THAN", "LESS_THAN", "IS_ANSWERED", "IS_NOT_ANSWERED"],
  steps: ["EQUALS", "NOT_EQUALS", "GREATER_THAN", "LESS_THAN", "IS_ANSWERED", "IS_NOT_ANSWERED"],
  option: ["EQUALS", "NOT_EQUALS", "ANY_OF", "IS_ANSWERED", "IS_NOT_ANSWERED"],
  options: ["CONTAINS", "ANY_OF", "IS_ANSWERED", "IS_NOT_ANSWERED"],
  uploads: ["IS_ANSWERED", "IS_NOT_ANSWERED"],
  consent: ["IS_ANSWERED", "IS_NOT_ANSWERED"],
  ranking: ["IS_ANSWERED", "IS_NOT_ANSWERED"],
  grid: ["IS_ANSWERED", "IS_NOT_ANSWERED"],
};

/** The operators a question of `type` offers; none for layout blocks and unknown types. */
export function operatorsFor(type: string): readonly LogicOperator[] {
  const questionType = questionTypeOf(type);
  if (!questionType) return [];
  const operators = operatorsByAnswer[questionType.answer];
  return "ordered" in questionType && questionType.ordered ? [...operators, "GREATER_THAN", "LESS_THAN"] : operators;
}

/** Whether the document has logic rules (a form without them is shown and checked whole). */
export function hasLogic(doc: Pick<LogicDocument, "logic">): boolean {
  return (doc.logic?.length ?? 0) > 0;
}

/** The document's pages: its blocks split at PAGE_BREAK, empty pages dropped; at least one page. */
export function documentPages<B extends LogicBlock>(doc: { blocks: readonly B[] }): B[][] {
  const pages: B[][] = [[]];
  for (const block of doc.blocks) {
    if (block.type === "PAGE_BREAK") pages.push([]);
    else pages[pages.length - 1].push(block);
  }
  const kept = pages.filter((page) => page.length > 0);
  return kept.length > 0 ? kept : [[]];
}

/** Whether a value is an answer: not null, a blank string or an empty list. */
function isAnswered(value: JsonValue | undefined): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === "string") return value.trim() !== "";
  if (Array.isArray(value)) return value.length > 0;
  return true;
}

const folded = (value: unknown) => String(value).trim().toLowerCase();

/** Whether `condition` holds for the answer `value` of a question of `type` (undefined: unanswered). */
export function conditionHolds(condition: LogicCondition, type: string, value: JsonValue | undefined): boolean {
  const answered = isAnswered(value);
  const { operator } = condition;
  if (operator === "IS_ANSWERED") return answered;
  if (operator === "IS_NOT_ANSWERED") return !answered;
  // "Not equal" is everything "equal" is not, an unanswered question included.
  if (operator === "NOT_EQUALS") return !conditionHolds({ ...condition, operator: "EQUALS" }, type, value);
  if (!answered) return false;
  const shape = questionTypeOf(type)?.answer;
  const target = condition.value;
  const targets: JsonValue[] = Array.isArray(target) ? target : target === undefined ? [] : [target];
  switch (operator) {
    case "EQUALS":
      if (takesNumber(type)) return typeof target === "number" && Number(value) === target;
      if (shape === "text") return folded(value) === folded(target);
      return value === target;
    case "CONTAINS":
      if (Array.isArray(value)) return value.includes(target as JsonValue);
      return typeof target === "string" && folded(value).includes(folded(target));
    case "ANY_OF":
      if (Array.isArray(value)) return value.some((v) => targets.includes(v));
      return targets.includes(value!);
    case "GREATER_THAN":
    case "LESS_THAN": {
      const [a, b] = shape === "text" ? [String(value), String(target)] : [Number(value), Number(target)];
      if (typeof a === "number" && (!Number.isFinite(a) || !Number.isFinite(b as number))) return false;
      return operator === "GREATER_THAN" ? a > b : a < b;
    }
  }
  return false;
}

/** What the rules make of a document over some answers. */
export interface LogicState {
  /** Ids of the blocks not shown: hidden by a rule, or on a page a jump passed over. */
  hidden: Set<string>;
  /** Keys of the questions an answer is needed for: shown, and required by the block or by a rule. */
  required: Set<string>;
  /** The pages the respondent goes through, in order (indexes of documentPages). */
  path: number[];
  /** The answers that count: those of questions shown, by key. */
  answers: Record<string, JsonValue>;
  /** The calculated fields SET rules that hold give a value, by name: the last such rule's value (in order). */
  set: Map<string, string | number>;
}

/** The question blocks a rule's conditions ask about, by block id. */
function blocksById(doc: Pick<LogicDocument, "blocks">): Map<string, LogicBlock> {
  const byId = new Map<string, LogicBlock>();
  for (const block of doc.blocks) if (block.id !== undefined) byId.set(block.id, block);
  return byId;
}

/**
 * Evaluates the document's rules over `answers` (by question key, the JSON values of DESIGN.md):
 * which blocks are shown, which questions need an answer, which pages are gone through. A block that
 * a SHOW rule targets is hidden until one of its SHOW rules holds; a HIDE rule that holds hides it
 * whatever a SHOW rule says. On leaving a page, the first JUMP rule (in order) whose conditions are on
 * pages up to this one and hold moves on to its page; the pages between are passed over. Conditions see
 * only the answers of questions shown. SET rules that hold give calculated fields their value (`set`).
 */
export function evaluateLogic(doc: LogicDocument, answers: Record<string, JsonValue | undefined>): LogicState {
  const pages = documentPages(doc);
  const rules: readonly LogicRule[] = doc.logic ?? [];
  const byId = blocksById(doc);
  const pageOf = new Map<string, number>();
  pages.forEach((page, i) => page.forEach((block) => block.id !== undefined && pageOf.set(block.id, i)));
  const { first, last } = ownerPages(doc.blocks, pages);
  const state: LogicState = { hidden: new Set(), required: new Set(), path: [], answers: {}, set: new Map() };

  const holds = (rule: LogicRule): boolean => {
    const results = rule.when.conditions.map((condition) => {
      const block = byId.get(condition.question);
      const key = block?.key;
      return block !== undefined && conditionHolds(condition, block.type, key === undefined ? undefined : state.answers[key]);
    });
    return rule.when.match === "any" ? results.some(Boolean) : results.every(Boolean);
  };
  // Once per evaluation, not per block: each block's rules by action (in order, each rule once), and the
  // JUMP rules by the page of their conditions (the furthest page they ask about), in order.
  const byTarget = new Map<string, LogicRule[]>();
  const jumpsFrom = new Map<number, { rule: LogicRule; to: number }[]>();
  for (const rule of rules) {
    const targets = new Set<string>();
    for (const a of rule.then) if (a.action !== "JUMP" && "block" in a) targets.add(`${a.action} ${a.block}`);
    for (const target of targets) byTarget.set(target, (byTarget.get(target) ?? []).concat(rule));
    const jump = rule.then.find((a) => a.action === "JUMP");
    if (jump?.action !== "JUMP") continue;
    // Jumps name and leave the owner's pages: from the last screen of a page, to the first of another.
    const anchor = Math.max(...rule.when.conditions.map((c) => last(pageOf.get(c.question) ?? Infinity)));
    jumpsFrom.set(anchor, (jumpsFrom.get(anchor) ?? []).concat({ rule, to: first(jump.page - 1) }));
  }
  const targeting = (action: LogicActionType, blockId: string) => byTarget.get(`${action} ${blockId}`) ?? [];

  let page = 0;
  while (page < pages.length) {
    state.path.push(page);
    for (const block of pages[page]) {
      const id = block.id ?? "";
      const shows = targeting("SHOW", id);
      const shown = (shows.length === 0 || shows.some(holds)) && !targeting("HIDE", id).some(holds);
      if (!shown) {
        state.hidden.add(id);
        continue;
      }
      if (block.key === undefined) continue;
      const value = answers[block.key];
      if (isAnswered(value)) state.answers[block.key] = value!;
      if (block.required || targeting("REQUIRE", id).some(holds)) state.required.add(block.key);
    }
    let next = page + 1;
    const jump = jumpsFrom.get(page)?.find(({ rule }) => holds(rule));
    // A jump to a page that is not after this one (never saved so) is not followed.
    if (jump && jump.to > page) next = jump.to;
    for (let skipped = page + 1; skipped < next && skipped < pages.length; skipped++) {
      for (const block of pages[skipped]) state.hidden.add(block.id ?? "");
    }
    page = next;
  }
  // SET rules decide over every answer shown, once the path is known; a later rule overrides an earlier one.
  for (const rule of rules) {
    const sets = rule.then.filter((a) => a.action === "SET");
    if (sets.length === 0 || !holds(rule)) continue;
    for (const set of sets) if (set.action === "SET") state.set.set(set.field, set.value);
  }
  return state;
}

/**
 * A document shown one question at a time has screens for pages: its own page breaks and those a screen
 * starts (`screen`). The owner's pages are what jumps count: the first screen of owner page n, and the
 * last screen of the owner page screen s is on. Without screen breaks both are the identity.
 */
function ownerPages(blocks: readonly LogicBlock[], screens: readonly LogicBlock[][]) {
  const ownerOf = new Map<LogicBlock, number>();
  let owner = 0;
  let started = false;
  for (const block of blocks) {
    if (block.type !== "PAGE_BREAK") {
      ownerOf.set(block, owner);
      started = true;
    } else if (!block.screen && started) {
      owner += 1;
      started = false;
    }
  }
  const ownerOfScreen = screens.map((screen) => ownerOf.get(screen[0]) ?? 0);
  return {
    // A page that is not there: past the end (or, below 0, not after any page, so never followed).
    first: (page: number) => {
      if (!(page >= 0)) return page;
      const at = ownerOfScreen.indexOf(page);
      return at === -1 ? screens.length : at;
    },
    last: (screen: number) => (Number.isFinite(screen) ? ownerOfScreen.lastIndexOf(ownerOfScreen[screen]) : screen),
  };
}

/** Whether a page of the path shows anything (a page whose every block is hidden is passed over). */
export function pageShows(doc: Pick<LogicDocument, "blocks">, state: LogicState, page: number): boolean {
  return showsAny(documentPages(doc)[page], state);
}

function showsAny(page: readonly LogicBlock[] | undefined, state: LogicState): boolean {
  return (page ?? []).some((block) => !state.hidden.has(block.id ?? ""));
}

/** The page after `page` on the respondent's path that shows anything; undefined when `page` is the last. */
export function nextPageOf(doc: Pick<LogicDocument, "blocks">, state: LogicState, page: number): number | undefined {
  const pages = documentPages(doc);
  const at = state.path.indexOf(page);
  return state.path.slice(at + 1).find((p) => showsAny(pages[p], state));
}

/** The page before `page` on the respondent's path that shows anything; undefined on the first. */
export function previousPageOf(doc: Pick<LogicDocument, "blocks">, state: LogicState, page: number): number | undefined {
  const pages = documentPages(doc);
  const at = state.path.indexOf(page);
  return state.path.slice(0, Math.max(0, at)).reverse().find((p) => showsAny(pages[p], state));
}
