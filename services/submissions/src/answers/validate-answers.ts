// Checking a respondent's answers against the version of the form they loaded. Pure: no I/O, so the
// rules can be tested on their own and the handler decides only about storage (uploads, merging).
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import {
  defaultRatingMax,
  formatPath,
  hiddenFieldKey,
  isInputBlock,
  isRecordId,
  jsonInputProblem,
  listQuestions,
  maxAnswerDepth,
  textProblem,
  respondentCountryQuestion,
  type FormDocument,
  type InputBlock,
} from "@formsvc/form-document";
import type { StoredAnswer, StoredAnswers } from "./stored-answer.ts";

/** Sizes an answer may have. */
export const answerLimits = {
  /** Characters of a SHORT_TEXT answer. */
  shortText: 5_000,
  /** Characters of a LONG_TEXT answer. */
  longText: 50_000,
  /** Characters of an EMAIL answer (RFC 5321's path limit). */
  email: 254,
  /** Characters of a URL answer. */
  url: 2_048,
  /** Characters of a PHONE answer. */
  phone: 40,
  /** Uploads in one FILE answer (a SIGNATURE takes one). */
  files: 20,
  /** Characters of a hidden field's value. */
  hiddenValue: 2_000,
} as const;

export type ValidationResult = { ok: true; answers: StoredAnswers } | { ok: false; errors: string[] };

const emailPattern = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;
const phonePattern = /^\+?[0-9 ().\-/]+$/;
const datePattern = /^(\d{4})-(\d{2})-(\d{2})$/;

/** `answers.q_name` (or `answers["odd key"]`), for error messages. */
export function answerPath(key: string): string {
  return formatPath("answers", [key]);
}

/** `answers.q_name (Your full name)`: the key and the question text the respondent saw. */
function questionName(block: InputBlock): string {
  return `${answerPath(block.key ?? "")} (${block.question})`;
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

function isValidDate(value: string): boolean {
  const match = datePattern.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  // Date.UTC maps years 0-99 to 1900-1999; setting the full year undoes that.
  date.setUTCFullYear(year);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

function isValidUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
}

function isValidPhone(value: string): boolean {
  if (!phonePattern.test(value)) return false;
  const digits = value.replace(/\D/g, "").length;
  return digits >= 4 && digits <= 17;
}

/**
 * The value to store for one answer, `undefined` when the value means "no answer" (null, a blank
 * string, an empty list), or a problem (a string starting with "must"/"is"...) otherwise.
 */
function checkValue(block: InputBlock, value: JsonValue): { value: JsonValue | undefined } | { problem: string } {
  if (value === null) return { value: undefined };
  const text = (max: number, trim: boolean, format?: (v: string) => string | undefined) => {
    if (typeof value !== "string") return { problem: `must be a string, not ${describe(value)}` };
    if (isBlank(value)) return { value: undefined };
    const stored = trim ? value.trim() : value;
    if (stored.length > max) return { problem: `must be at most ${max} characters` };
    const problem = format?.(stored);
    return problem ? { problem } : { value: stored };
  };
  const list = (itemName: string, max: number, check: (item: string) => string | undefined) => {
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

  switch (block.type) {
    case "SHORT_TEXT":
      return text(answerLimits.shortText, false);
    case "LONG_TEXT":
      return text(answerLimits.longText, false);
    case "EMAIL":
      return text(answerLimits.email, true, (v) => (emailPattern.test(v) ? undefined : "must be an email address"));
    case "URL":
      return text(answerLimits.url, true, (v) => (isValidUrl(v) ? undefined : "must be a URL starting with http:// or https://"));
    case "PHONE":
      return text(answerLimits.phone, true, (v) => (isValidPhone(v) ? undefined : "must be a phone number"));
    case "DATE":
      if (typeof value !== "string") return { problem: `must be a date (YYYY-MM-DD), not ${describe(value)}` };
      if (isBlank(value)) return { value: undefined };
      return isValidDate(value) ? { value } : { problem: "must be a date (YYYY-MM-DD)" };
    case "NUMBER": {
      if (typeof value !== "number" || !Number.isFinite(value)) return { problem: `must be a number, not ${describe(value)}` };
      if (block.min !== undefined && value < block.min) return { problem: `must be at least ${block.min}` };
      if (block.max !== undefined && value > block.max) return { problem: `must be at most ${block.max}` };
      return { value };
    }
    case "RATING": {
      const max = block.max ?? defaultRatingMax;
      if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > max) {
        return { problem: `must be a whole number from 1 to ${max}` };
      }
      return { value };
    }
    case "MULTIPLE_CHOICE":
    case "DROPDOWN": {
      if (typeof value !== "string") return { problem: `must be the id of an option, not ${describe(value)}` };
      if (value === "") return { value: undefined };
      return block.options.some((o) => o.id === value) ? { value } : { problem: `"${value}" is not an option of this question` };
    }
    case "CHECKBOXES":
      return list("option id", block.options.length, (item) =>
        block.options.some((o) => o.id === item) ? undefined : `"${item}" is not an option of this question`,
      );
    case "FILE":
    case "SIGNATURE":
      return list("upload id", block.type === "SIGNATURE" ? 1 : answerLimits.files, (item) =>
        isRecordId(item) ? undefined : `"${item}" is not an upload id`,
      );
  }
}

/**
 * Checks `answers` (by question key, the JSON values of DESIGN.md) against `document`, the version the
 * respondent loaded. Every key must be a question of that version; each value must fit its question;
 * when `completed`, every required question must be answered. A null, a blank string or an empty list
 * is no answer: it is left out of the result (and so clears an earlier answer when merged).
 *
 * The stored answers carry the question's id, type and column label of this version. FILE and SIGNATURE
 * answers hold upload ids, which only the caller can check. Errors name the question:
 * `answers.q_name (Your full name): is required`.
 */
export function validateAnswers(document: FormDocument, answers: JsonObject, options: { completed: boolean }): ValidationResult {
  // The edge's rule again, before anything walks the values: no deep nesting, nothing Postgres refuses.
  const unsafe = jsonInputProblem(answers, "answers", maxAnswerDepth);
  if (unsafe) return { ok: false, errors: [unsafe] };
  const blocks = new Map<string, InputBlock>();
  for (const block of document.blocks) if (isInputBlock(block) && block.key) blocks.set(block.key, block);
  const labels = new Map(listQuestions(document).map((q) => [q.key, q.label]));

  const errors: string[] = [];
  const failed = new Set<string>();
  const stored: StoredAnswers = {};
  for (const [key, value] of Object.entries(answers)) {
    const block = blocks.get(key);
    if (!block) {
      errors.push(`${answerPath(key)}: is not a question of this form`);
      continue;
    }
    const checked = checkValue(block, value);
    if ("problem" in checked) {
      errors.push(`${questionName(block)}: ${checked.problem}`);
      failed.add(key);
      continue;
    }
    if (checked.value === undefined) continue;
    stored[key] = { questionId: block.id ?? key, type: block.type, label: labels.get(key) ?? block.question, value: checked.value };
  }
  if (options.completed) {
    for (const [key, block] of blocks) {
      // An answer that failed its check is already reported.
      if (block.required && stored[key] === undefined && !failed.has(key)) {
        errors.push(`${questionName(block)}: is required`);
      }
    }
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, answers: stored };
}

/**
 * Checks hidden field values: only names the document declares are taken. The result holds one
 * HIDDEN_FIELDS answer per value, under `hidden:<name>`.
 */
export function validateHidden(
  document: FormDocument,
  hidden: Record<string, string>,
): { ok: true; answers: StoredAnswers } | { ok: false; errors: string[] } {
  const declared = new Set((document.hiddenFields ?? []).map((f) => f.name));
  const errors: string[] = [];
  const stored: StoredAnswers = {};
  for (const [name, value] of Object.entries(hidden)) {
    const path = formatPath("hidden", [name]);
    if (!declared.has(name)) {
      errors.push(`${path}: is not a hidden field of this form`);
      continue;
    }
    const problem = typeof value === "string" ? textProblem(value) : "must be a string";
    if (problem) {
      errors.push(`${path}: ${problem}`);
      continue;
    }
    if (value.length > answerLimits.hiddenValue) {
      errors.push(`${path}: must be at most ${answerLimits.hiddenValue} characters`);
      continue;
    }
    const key = hiddenFieldKey(name);
    stored[key] = { questionId: key, type: "HIDDEN_FIELDS", label: name, value };
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, answers: stored };
}

/**
 * The respondent's country as stored: a two-letter code in capitals, or null when the gateway gave
 * none or something that is not a country ("XX" and "T1" are what CDNs send for unknown and Tor).
 */
export function normalizeCountry(raw: string | undefined): string | null {
  const code = raw?.trim().toUpperCase() ?? "";
  return /^[A-Z]{2}$/.test(code) && code !== "XX" ? code : null;
}

/** The RESPONDENT_COUNTRY answer, under `meta:country`. */
export function countryAnswer(country: string): StoredAnswer {
  const { id, type, label } = respondentCountryQuestion;
  return { questionId: id, type, label, value: country };
}

/** Every error message as one line for INVALID_ARGUMENT: the first few, and how many more. */
export function describeErrors(errors: string[], shown = 5): string {
  const more = errors.length - shown;
  return errors.slice(0, shown).join("; ") + (more > 0 ? ` (and ${more} more)` : "");
}

/** Whether a block of this type takes uploads as its answer. */
export function takesUploads(type: string): boolean {
  return type === "FILE" || type === "SIGNATURE";
}

