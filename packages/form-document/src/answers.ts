// Checking a respondent's answers against the version of the form they loaded, by the rules of each
// question type (question-types.ts): the check submissions makes before storing them, and the one the
// hosted form's plain HTML post makes to show every problem at once. Pure: no I/O.
import { formatPath } from "./errors.ts";
import { isRecordId, jsonInputProblem, maxAnswerDepth, textProblem } from "./input-safety.ts";
import { hiddenFieldKey, listQuestions } from "./questions.ts";
import { questionTypes, scaleOf, type JsonValue, type QuestionType } from "./block-types.ts";
import { isInputBlock } from "./block-types.ts";
import type { ChoiceBlock, FormDocument, InputBlock } from "./schema.ts";

type MatrixBlock = Extract<InputBlock, { type: "MATRIX" }>;
import { evaluateLogic, hasLogic } from "./logic.ts";

/** Characters of a hidden field's value. */
export const maxHiddenValueLength = 2_000;

/** An answer as checked: the question as it is in the version the respondent saw, and the value to store. */
export interface CheckedAnswer {
  questionId: string;
  /** The block type, or HIDDEN_FIELDS. */
  type: string;
  /** The column label of that version: the field name where one was given, otherwise the question text. */
  label: string;
  value: JsonValue;
}

/** What is wrong with one answer (or, without a key, with the answers as a whole). */
export interface AnswerProblem {
  /** Where the answer is filed in a submission: the question's key, `hidden:<name>` for a hidden field. */
  key?: string;
  /** What is wrong: `must be an email address`, `is required`. */
  message: string;
  /** The problem in one line naming its answer: `answers.q_name (Your full name): is required`. */
  line: string;
  /** A required question left without an answer (which the pages word their own way). */
  missing?: true;
}

export type ValidationResult = { ok: true; answers: Record<string, CheckedAnswer> } | { ok: false; problems: AnswerProblem[] };

/** `answers.q_name` (or `answers["odd key"]`): where a question's answer is in a request. */
export function answerPath(key: string): string {
  return formatPath("answers", [key]);
}

/** A problem with the answer under `key`, naming the question's text when there is one. */
export function answerProblem(key: string, message: string, question?: string): AnswerProblem {
  const where = question === undefined ? answerPath(key) : `${answerPath(key)} (${question})`;
  return { key, message, line: `${where}: ${message}` };
}

/** Every problem as one line: the first few, and how many more. */
export function describeProblems(problems: readonly AnswerProblem[], shown = 5): string {
  const more = problems.length - shown;
  return problems.slice(0, shown).map((p) => p.line).join("; ") + (more > 0 ? ` (and ${more} more)` : "");
}

/** A trimmed string that is blank counts as no answer. */
function isBlank(value: string): boolean {
  return value.trim() === "";
}

function describe(value: JsonValue): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

type Checked = { value: JsonValue | undefined } | { problem: string };

/**
 * The value to store for one answer, `undefined` when the value means "no answer" (null, a blank
 * string, an empty list), or what is wrong with it, by the rules of its question type.
 */
function checkValue(block: InputBlock, value: JsonValue): Checked {
  if (value === null) return { value: undefined };
  const list = (itemName: string, max: number, check: (item: string) => string | undefined): Checked => {
    if (!Array.isArray(value)) return { problem: `must be an array of ${itemName}s, not ${describe(value)}` };
    if (value.length === 0) return { value: undefined };
    if (value.length > max) return { problem: max === 1 ? `takes one ${itemName}` : `takes at most ${max} ${itemName}s` };
    const seen = new Set<string>();
    for (const item of value) {
      if (typeof item !== "string") return { problem: `must be an array of ${itemName}s, not of ${describe(item)}s` };
      const problem = check(item);
      if (problem) return { problem };
      if (seen.has(item)) return { problem: `names ${itemName} "${item}" twice` };
      seen.add(item);
    }
    return { value };
  };
  const notAnOption = (id: string) => `"${id}" is not an option of this question`;

  const type: QuestionType = questionTypes[block.type];
  switch (type.answer) {
    case "text": {
      if (typeof value !== "string") return { problem: `must be ${type.expected ?? "a string"}, not ${describe(value)}` };
      if (isBlank(value)) return { value: undefined };
      const stored = type.trimmed ? value.trim() : value;
      if (type.maxLength !== undefined && stored.length > type.maxLength) return { problem: `must be at most ${type.maxLength} characters` };
      if (type.format && !type.format.valid(stored)) return { problem: type.format.problem };
      return { value: stored };
    }
    case "number": {
      const { min, max } = block as { min?: number; max?: number };
      if (typeof value !== "number" || !Number.isFinite(value)) return { problem: `must be a number, not ${describe(value)}` };
      if (min !== undefined && value < min) return { problem: `must be at least ${min}` };
      if (max !== undefined && value > max) return { problem: `must be at most ${max}` };
      return { value };
    }
    case "steps": {
      const { min, max } = scaleOf(block);
      if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
        return { problem: `must be a whole number from ${min} to ${max}` };
      }
      return { value };
    }
    case "consent":
      // An unticked box is no answer (so a required consent stays unanswered), never a refusal to store.
      if (typeof value !== "boolean") return { problem: `must be true (agreed), not ${describe(value)}` };
      return { value: value ? true : undefined };
    case "option": {
      if (typeof value !== "string") return { problem: `must be the id of an option, not ${describe(value)}` };
      if (value === "") return { value: undefined };
      return (block as ChoiceBlock).options.some((o) => o.id === value) ? { value } : { problem: notAnOption(value) };
    }
    case "options": {
      const { options, min, max } = block as ChoiceBlock & { min?: number; max?: number };
      const checked = list("option id", max ?? options.length, (item) => (options.some((o) => o.id === item) ? undefined : notAnOption(item)));
      if (min !== undefined && "value" in checked && Array.isArray(checked.value) && checked.value.length < min) {
        return { problem: `takes at least ${min} option ids` };
      }
      return checked;
    }
    case "ranking": {
      const { options } = block as ChoiceBlock;
      const checked = list("option id", options.length, (item) => (options.some((o) => o.id === item) ? undefined : notAnOption(item)));
      if ("value" in checked && Array.isArray(checked.value) && checked.value.length < options.length) {
        return { problem: `must rank every option (${options.length}), not ${checked.value.length}` };
      }
      return checked;
    }
    case "grid": {
      const { rows, columns, multiple } = block as MatrixBlock;
      if (typeof value !== "object" || Array.isArray(value)) return { problem: `must be an object of row ids to column ids, not ${describe(value)}` };
      const isColumn = (id: JsonValue) => typeof id === "string" && columns.some((c) => c.id === id);
      const answered: Record<string, JsonValue> = {};
      for (const [row, chosen] of Object.entries(value)) {
        if (!rows.some((r) => r.id === row)) return { problem: `"${row}" is not a row of this question` };
        if (chosen === null || chosen === "" || (Array.isArray(chosen) && chosen.length === 0)) continue;
        if (!multiple) {
          if (!isColumn(chosen)) return { problem: `row "${row}": ${JSON.stringify(chosen)} is not a column of this question` };
        } else {
          if (!Array.isArray(chosen)) return { problem: `row "${row}": must be an array of column ids, not ${describe(chosen)}` };
          const stray = chosen.find((id) => !isColumn(id));
          if (stray !== undefined) return { problem: `row "${row}": ${JSON.stringify(stray)} is not a column of this question` };
          if (new Set(chosen).size < chosen.length) return { problem: `row "${row}": names a column twice` };
        }
        answered[row] = chosen;
      }
      return { value: Object.keys(answered).length > 0 ? answered : undefined };
    }
    case "uploads":
      return list("upload id", type.maxUploads ?? Infinity, (item) => (isRecordId(item) ? undefined : `"${item}" is not an upload id`));
  }
}

/**
 * Checks `answers` (by question key, the JSON values of DESIGN.md) against `document`, the version the
 * respondent loaded. Every key must be a question of that version; each value must fit its question;
 * when `completed`, every required question must be answered. A null, a blank string or an empty list
 * is no answer: it is left out of the result (and so clears an earlier answer when merged).
 *
 * With logic rules (logic.ts), a question the rules hide (or that is on a page a jump passes over)
 * neither needs nor takes an answer: whatever was sent for it is dropped, and the result holds it as
 * skipped, with a null value; a question a REQUIRE rule names needs an answer when shown.
 *
 * The answers carry the question's id, type and column label of this version. Upload answers hold
 * upload ids, which only submissions can check. Problems name the question:
 * `answers.q_name (Your full name): is required`.
 */
export function validateAnswers(document: FormDocument, answers: { [key: string]: JsonValue }, options: { completed: boolean }): ValidationResult {
  // The edge's rule again, before anything walks the values: no deep nesting, nothing Postgres refuses.
  const unsafe = jsonInputProblem(answers, "answers", maxAnswerDepth);
  if (unsafe) return { ok: false, problems: [{ message: unsafe, line: unsafe }] };
  const blocks = new Map<string, InputBlock>();
  for (const block of document.blocks) if (isInputBlock(block) && block.key) blocks.set(block.key, block);
  const labels = new Map(listQuestions(document).map((q) => [q.key, q.label]));

  const problems: AnswerProblem[] = [];
  const failed = new Set<string>();
  const checked: Record<string, CheckedAnswer> = {};
  const checkedAnswer = (key: string, block: InputBlock, value: JsonValue): CheckedAnswer => ({
    questionId: block.id ?? key,
    type: block.type,
    label: labels.get(key) ?? block.question,
    value,
  });
  for (const [key, value] of Object.entries(answers)) {
    const block = blocks.get(key);
    if (!block) {
      problems.push(answerProblem(key, "is not a question of this form"));
      continue;
    }
    const result = checkValue(block, value);
    if ("problem" in result) {
      problems.push(answerProblem(key, result.problem, block.question));
      failed.add(key);
      continue;
    }
    if (result.value === undefined) continue;
    checked[key] = checkedAnswer(key, block, result.value);
  }
  // The rules see the answers that passed their checks; an answer that failed counts as none.
  const logic = hasLogic(document) ? evaluateLogic(document, Object.fromEntries(Object.entries(checked).map(([k, a]) => [k, a.value]))) : undefined;
  const hiddenIds = logic?.hidden ?? new Set<string>();
  const skipped = (block: InputBlock) => hiddenIds.has(block.id ?? "");
  for (const [key, block] of blocks) if (skipped(block)) checked[key] = checkedAnswer(key, block, null);
  const shownProblems = problems.filter((p) => p.key === undefined || !blocks.has(p.key) || !skipped(blocks.get(p.key)!));
  if (options.completed) {
    for (const [key, block] of blocks) {
      const required = logic ? logic.required.has(key) : block.required;
      // An answer that failed its check is already reported.
      if (required && checked[key] === undefined && !failed.has(key)) {
        shownProblems.push({ ...answerProblem(key, "is required", block.question), missing: true });
      }
      // A required matrix means every row.
      const value = checked[key]?.value;
      if (required && block.type === "MATRIX" && value && typeof value === "object") {
        const missing = block.rows.length - Object.keys(value).length;
        if (missing > 0) shownProblems.push(answerProblem(key, `needs an answer in every row (${missing} of ${block.rows.length} unanswered)`, block.question));
      }
    }
  }
  return shownProblems.length > 0 ? { ok: false, problems: shownProblems } : { ok: true, answers: checked };
}

/**
 * Checks hidden field values: only names the document declares are taken. The result holds one
 * HIDDEN_FIELDS answer per value, under `hidden:<name>`.
 */
export function validateHidden(document: FormDocument, hidden: Record<string, string>): ValidationResult {
  const declared = new Set((document.hiddenFields ?? []).map((f) => f.name));
  const problems: AnswerProblem[] = [];
  const checked: Record<string, CheckedAnswer> = {};
  for (const [name, value] of Object.entries(hidden)) {
    const key = hiddenFieldKey(name);
    const problemOf = (message: string): AnswerProblem => ({ key, message, line: `${formatPath("hidden", [name])}: ${message}` });
    if (!declared.has(name)) {
      problems.push(problemOf("is not a hidden field of this form"));
      continue;
    }
    const problem = typeof value === "string" ? textProblem(value) : "must be a string";
    if (problem) {
      problems.push(problemOf(problem));
      continue;
    }
    if (value.length > maxHiddenValueLength) {
      problems.push(problemOf(`must be at most ${maxHiddenValueLength} characters`));
      continue;
    }
    checked[key] = { questionId: key, type: "HIDDEN_FIELDS", label: name, value };
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, answers: checked };
}
