// The save-time check of a document's logic rules: every reference names a block of the document (or, for
// SET, a calculated field, with a value of its type), every condition fits its question's type, and rules
// act forwards only (targets after the questions asked about, jumps to a later page), which is what keeps
// the rules free of cycles. Zod-free, so the app runs
// the same check before saving (through "@formsvc/form-document/logic").
import { questionTypeOf, scaleOf, takesOptions } from "./block-types.ts";
import { documentPages, operatorsFor, valuelessOperators, type LogicBlock, type LogicDocument } from "./logic.ts";

/** Rules a document may have, conditions and actions a rule may have. */
export const logicLimits = { rules: 200, conditions: 20, actions: 20 } as const;

/** One problem of a rule: where (`logic[2].then[0]`) and what. */
export interface LogicProblem {
  path: string;
  message: string;
}

type CheckedBlock = LogicBlock & { options?: readonly { id?: string }[]; min?: number; max?: number };

/** What is wrong with a condition's value for a question, or undefined. */
function valueProblem(block: CheckedBlock, operator: string, value: unknown): string | undefined {
  if (valuelessOperators.includes(operator as never)) {
    return value === undefined ? undefined : `${operator} takes no value`;
  }
  if (value === undefined) return `${operator} needs a value`;
  const type = questionTypeOf(block.type);
  const shape = type?.answer;
  const optionIds = new Set((block.options ?? []).map((o) => o.id));
  const isOption = (v: unknown) => typeof v === "string" && optionIds.has(v);
  if (operator === "ANY_OF") {
    if (!Array.isArray(value) || value.length === 0) return "ANY_OF needs a list of option ids";
    const stray = value.find((v) => !isOption(v));
    return stray === undefined ? undefined : `"${String(stray)}" is not an option of block "${block.id}"`;
  }
  if (takesOptions(block.type)) {
    return isOption(value) ? undefined : `${JSON.stringify(value)} is not an option of block "${block.id}"`;
  }
  if (shape === "number") return typeof value === "number" && Number.isFinite(value) ? undefined : "needs a number";
  if (shape === "steps") {
    const { min, max } = scaleOf(block);
    return typeof value === "number" && Number.isInteger(value) && value >= min && value <= max ? undefined : `needs a whole number from ${min} to ${max}`;
  }
  if (typeof value !== "string") return "needs a text value";
  if ((operator === "GREATER_THAN" || operator === "LESS_THAN") && type?.format && !type.format.valid(value)) return `needs ${type.expected ?? "a valid value"}`;
  return undefined;
}

/**
 * The problems of `doc.logic`, each naming its rule: `logic[2].then[0]: jump target page 7 does not
 * exist (the form has 3 pages)`. Empty when the rules may be saved.
 */
export function logicProblems(doc: LogicDocument): LogicProblem[] {
  const problems: LogicProblem[] = [];
  const rules = doc.logic ?? [];
  const position = new Map<string, number>();
  const byId = new Map<string, CheckedBlock>();
  doc.blocks.forEach((block, i) => {
    if (block.id === undefined) return;
    position.set(block.id, i);
    byId.set(block.id, block as CheckedBlock);
  });
  const pages = documentPages(doc);
  const pageOf = new Map<string, number>();
  pages.forEach((page, i) => page.forEach((block) => block.id !== undefined && pageOf.set(block.id, i)));
  const calculated = new Map((doc.calculatedFields ?? []).map((field) => [field.name, field]));
  const describe = (block: LogicBlock) => `block "${block.id}" (${block.type})`;

  rules.forEach((rule, r) => {
    const at = (path: string, message: string) => problems.push({ path: `logic[${r}]${path}`, message });
    let lastAsked = -1;
    let anchorPage = -1;
    rule.when.conditions.forEach((condition, c) => {
      const where = `.when.conditions[${c}]`;
      const block = byId.get(condition.question);
      if (!block) return at(`${where}.question`, `no block has id "${condition.question}"`);
      const operators = operatorsFor(block.type);
      if (operators.length === 0) return at(`${where}.question`, `${describe(block)} is not a question`);
      if (!operators.includes(condition.operator)) {
        return at(`${where}.operator`, `${condition.operator} does not apply to ${block.type} questions (${operators.join(", ")} do)`);
      }
      const problem = valueProblem(block, condition.operator, condition.value);
      if (problem) return at(`${where}.value`, problem);
      lastAsked = Math.max(lastAsked, position.get(block.id!)!);
      anchorPage = Math.max(anchorPage, pageOf.get(block.id!) ?? -1);
    });
    let jumps = 0;
    rule.then.forEach((action, a) => {
      const where = `.then[${a}]`;
      if (action.action === "SET") {
        // Calculated fields are worked out after every answer, so a SET rule cannot act backwards.
        const field = calculated.get(action.field);
        if (!field) return at(`${where}.field`, `no calculated field is named "${action.field}"`);
        if (field.type === "NUMBER" && (typeof action.value !== "number" || !Number.isFinite(action.value))) {
          return at(`${where}.value`, `calculated field "${field.name}" is a NUMBER: it needs a number`);
        }
        if (field.type === "TEXT" && typeof action.value !== "string") return at(`${where}.value`, `calculated field "${field.name}" is a TEXT: it needs a text value`);
        return;
      }
      if (action.action === "JUMP") {
        jumps += 1;
        if (jumps > 1) return at(where, "a rule jumps to one page only");
        if (action.page > pages.length) {
          return at(where, `jump target page ${action.page} does not exist (the form has ${pages.length} page${pages.length === 1 ? "" : "s"})`);
        }
        if (anchorPage >= 0 && action.page - 1 <= anchorPage) {
          return at(where, `jumps to page ${action.page}, not after page ${anchorPage + 1} of the questions it asks about: jumps go forward only, so they cannot loop`);
        }
        return;
      }
      const block = byId.get(action.block);
      if (!block) return at(`${where}.block`, `no block has id "${action.block}"`);
      if (block.type === "PAGE_BREAK") return at(`${where}.block`, `${describe(block)} cannot be shown or hidden: show or hide its blocks, or jump past its page`);
      if (action.action === "REQUIRE" && operatorsFor(block.type).length === 0) return at(`${where}.block`, `${describe(block)} is not a question, so it cannot be required`);
      if (position.get(block.id!)! <= lastAsked) {
        return at(`${where}.block`, `${describe(block)} does not come after the questions the rule asks about: rules act forwards only, so they cannot loop`);
      }
    });
  });
  return problems;
}
