// Calculated fields: a CEL expression (https://cel.dev) over the answers, evaluated when a response is
// completed. A failing expression stores null; it never fails the submission. This module runs in the
// worker threads of calculated-fields-pool.ts: it loads CEL and the question types' zod-free entry and
// nothing else (no zod), to start fast.
import type { JsonValue } from "@bufbuild/protobuf";
import { celEnv, isCelError, isCelUint, parse, plan, type CelInput, type CelResult } from "@bufbuild/cel";
import { answerCelValue, jsonCelValue } from "@formsvc/form-document/block-types";
import type { StoredAnswers } from "./answers/stored-answer.ts";

/** A calculated field as evaluated: the key its answer is stored under, its type and its expression. */
export interface CalculationField {
  key: string;
  type: "NUMBER" | "TEXT";
  expression: string;
  /** The value a logic rule SET gives it (evaluateLogic), taken in place of the expression's. */
  set?: string | number;
}

/** What one response's calculated fields need; sent to a worker thread as it is. */
export interface Calculation {
  fields: CalculationField[];
  /** The keys of the version's questions, each a variable (null when unanswered). */
  questionKeys: string[];
  answers: StoredAnswers;
}

type Program = (bindings: Record<string, CelInput>) => CelResult;

const env = celEnv();
/** Planned programs by expression text (a version's expressions never change); null when it does not parse. */
const programs = new Map<string, Program | null>();
const maxPrograms = 1_000;

function programOf(expression: string): Program | null {
  let program = programs.get(expression);
  if (program !== undefined) return program;
  try {
    program = plan(env, parse(expression)) as Program;
  } catch {
    program = null;
  }
  if (programs.size >= maxPrograms) programs.clear();
  programs.set(expression, program);
  return program;
}

/** The stored value of a result, by the field's type; null when it has no such value. */
function resultValue(field: CalculationField, result: CelResult): JsonValue {
  if (isCelError(result)) return null;
  let number: number | undefined;
  if (typeof result === "number") number = result;
  else if (typeof result === "bigint") number = Number(result);
  else if (isCelUint(result)) number = Number(result.value);
  if (field.type === "NUMBER") return number !== undefined && Number.isFinite(number) ? number : null;
  if (typeof result === "string") return result;
  if (number !== undefined) return Number.isFinite(number) ? String(number) : null;
  if (typeof result === "boolean") return String(result);
  return null;
}

/**
 * Evaluates the fields of `calculation`, in order, over its answers (the response's stored answers:
 * questions, hidden fields and country), telling `onValue` each field's value as it is known. The
 * variables of an expression are:
 * - each question of the document by its key: its value, or null when unanswered;
 * - `answers`: a map of every stored answer's value by key (`answers["hidden:utm_source"]`,
 *   `answers["meta:country"]`, and `answers["calculated:<name>"]` of the fields evaluated before);
 * - `hidden`: a map of the hidden fields' values by name.
 *
 * A field a logic rule sets (`set`) takes that value and its expression is not run; the fields after it
 * see that value. A NUMBER field gives a number and a TEXT field a string (numbers and booleans are written out). An
 * expression that does not parse, fails (unknown variable, wrong types, division by zero) or gives a
 * value of another kind gives null.
 */
export function evaluateCalculation({ fields, questionKeys, answers }: Calculation, onValue: (value: JsonValue) => void): void {
  const questions = new Set(questionKeys);
  const bindings: Record<string, CelInput> = Object.create(null);
  for (const key of questions) bindings[key] = null;
  const byKey = new Map<string, CelInput>();
  const hidden = new Map<string, CelInput>();
  for (const [key, answer] of Object.entries(answers)) {
    const value = answerCelValue(answer.type, answer.value);
    byKey.set(key, value);
    if (questions.has(key)) bindings[key] = value;
    if (answer.type === "HIDDEN_FIELDS") hidden.set(answer.label, value);
  }
  // These two names win over questions keyed `answers` or `hidden` (still reachable through `answers`).
  bindings.answers = byKey;
  bindings.hidden = hidden;

  for (const field of fields) {
    const program = field.set === undefined ? programOf(field.expression) : null;
    let value: JsonValue = field.set === undefined ? null : resultValue(field, field.set);
    if (program) {
      try {
        value = resultValue(field, program(bindings));
      } catch {
        value = null;
      }
    }
    byKey.set(field.key, jsonCelValue(value));
    onValue(value);
  }
}
