// Every question type and what it means for answers, stated once: the shape of an answer's value (and so
// its schema in the API, how the hosted page posts it and how CEL sees it), whether it takes options or
// uploads, how it reads as text, what a test event carries for it, and the rules its values are checked
// by (answers.ts). Plain data without zod: the browser app and the calculated fields' worker threads load
// it through "@formsvc/form-document/block-types" without the schemas.
//
// A new question type is its entry here, its block in schema.ts, its input in the hosted page
// (gateway/src/hosted/render-form.ts; form-page.js reads answers by shape) and its label and editor in the
// app (app/src/lib/document.ts, app/src/pages/Editor.tsx). Answers' checks, logic operators, the summary,
// exports and test events follow from the facts stated here.
import type { CelInput } from "@bufbuild/cel";

/** A JSON value, as answers are. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * The JSON value of an answer (DESIGN.md): `text` a string; `number` a number; `steps` a whole number of
 * a scale (scaleOf); `option` the id of one option; `options` an array of option ids; `ranking` every
 * option id once, first place first; `grid` a row id → column id map (→ column ids with `multiple`);
 * `uploads` an array of upload ids; `consent` true (agreed).
 */
export type AnswerShape = "text" | "number" | "steps" | "option" | "options" | "ranking" | "grid" | "uploads" | "consent";

/** A scale's ends: the smallest and largest step. */
export interface Scale {
  min: number;
  max: number;
}

/** What a question type means for its answers. */
export interface QuestionType {
  answer: AnswerShape;
  /** Text: at most this many characters (after trimming, when trimmed). */
  maxLength?: number;
  /** Text: the white space around a value is dropped. */
  trimmed?: boolean;
  /** Text: what a value must be when it is not a string at all; `a string` when absent. */
  expected?: string;
  /** Text: the form a value must have, and the problem when it has not. */
  format?: { valid(value: string): boolean; problem: string };
  /** Text: every value is a calendar date (YYYY-MM-DD), so results count answers by day. */
  calendarDates?: true;
  /** Text: values (dates, times) compare in order as strings, so logic offers GREATER_THAN (later) and LESS_THAN. */
  ordered?: true;
  /** Steps: the scale's ends; the block's own `min` and `max` where it has them, unless `fixed`. */
  scale?: Scale & { fixed?: true };
  /**
   * Steps: the summary's Net Promoter Score, the share of answers from `promotersFrom` up minus the share
   * up to `detractorsTo`, in percent.
   */
  promoterScore?: { promotersFrom: number; detractorsTo: number };
  /** Uploads: at most this many in one answer. */
  maxUploads?: number;
  /** The editor offers a placeholder for the empty input (a multi-select's closed list). */
  placeholder?: true;
  /** A test event's answer, where it does not follow from the block (options, scale, range). */
  sample?: string;
}

const emailPattern = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;
const phonePattern = /^\+?[0-9 ().\-/]+$/;
const datePattern = /^(\d{4})-(\d{2})-(\d{2})$/;
const timePattern = /^([01]\d|2[0-3]):[0-5]\d$/;

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

/** The question types (input blocks: they take an answer and have a `key`), in the order the editor offers them. */
export const questionTypes = {
  SHORT_TEXT: { answer: "text", maxLength: 5_000, placeholder: true, sample: "Ada Lovelace" },
  LONG_TEXT: { answer: "text", maxLength: 50_000, placeholder: true, sample: "A sample answer\nover two lines." },
  // 254: RFC 5321's path limit.
  EMAIL: {
    answer: "text",
    maxLength: 254,
    trimmed: true,
    format: { valid: (v) => emailPattern.test(v), problem: "must be an email address" },
    placeholder: true,
    sample: "ada@example.com",
  },
  NUMBER: { answer: "number", placeholder: true },
  PHONE: {
    answer: "text",
    maxLength: 40,
    trimmed: true,
    format: { valid: isValidPhone, problem: "must be a phone number" },
    placeholder: true,
    sample: "+44 20 7946 0958",
  },
  URL: {
    answer: "text",
    maxLength: 2_048,
    trimmed: true,
    format: { valid: isValidUrl, problem: "must be a URL starting with http:// or https://" },
    placeholder: true,
    sample: "https://example.com/",
  },
  DATE: {
    answer: "text",
    expected: "a date (YYYY-MM-DD)",
    format: { valid: isValidDate, problem: "must be a date (YYYY-MM-DD)" },
    calendarDates: true,
    ordered: true,
    sample: "2026-01-15",
  },
  TIME: {
    answer: "text",
    expected: "a time (HH:MM, 24 hours)",
    format: { valid: (v) => timePattern.test(v), problem: "must be a time (HH:MM, 24 hours)" },
    ordered: true,
    sample: "14:30",
  },
  MULTIPLE_CHOICE: { answer: "option" },
  CHECKBOXES: { answer: "options" },
  DROPDOWN: { answer: "option" },
  MULTI_SELECT: { answer: "options", placeholder: true },
  RANKING: { answer: "ranking" },
  MATRIX: { answer: "grid" },
  RATING: { answer: "steps", scale: { min: 1, max: 5 } },
  LINEAR_SCALE: { answer: "steps", scale: { min: 1, max: 5 } },
  NPS: { answer: "steps", scale: { min: 0, max: 10, fixed: true }, promoterScore: { promotersFrom: 9, detractorsTo: 6 } },
  FILE: { answer: "uploads", maxUploads: 20 },
  SIGNATURE: { answer: "uploads", maxUploads: 1 },
  CONSENT: { answer: "consent" },
} as const satisfies Record<string, QuestionType>;

export type InputBlockType = keyof typeof questionTypes;

/** The types whose answers have one of `shapes`. */
type TypesAnswering<Shapes extends AnswerShape> = {
  [T in InputBlockType]: (typeof questionTypes)[T]["answer"] extends Shapes ? T : never;
}[InputBlockType];
export type ChoiceBlockType = TypesAnswering<"option" | "options" | "ranking">;

export const inputBlockTypes = Object.keys(questionTypes) as InputBlockType[];

/** The question types whose answers have one of `shapes`, in the order of `inputBlockTypes`. */
export function typesAnswering<Shapes extends AnswerShape>(...shapes: Shapes[]): TypesAnswering<Shapes>[] {
  return inputBlockTypes.filter((type) => (shapes as AnswerShape[]).includes(questionTypes[type].answer)) as TypesAnswering<Shapes>[];
}

/** Input types whose answers are option ids. */
export const choiceBlockTypes: ChoiceBlockType[] = typesAnswering("option", "options", "ranking");

/** The question type named `type`, if it is one (answers also carry HIDDEN_FIELDS, RESPONDENT_COUNTRY, CALCULATED_FIELD). */
export function questionTypeOf(type: string | undefined): QuestionType | undefined {
  return type !== undefined && Object.hasOwn(questionTypes, type) ? questionTypes[type as InputBlockType] : undefined;
}

/** Whether answers of `type` are option ids (shown as the options' texts). */
export function takesOptions(type: string): boolean {
  const shape = questionTypeOf(type)?.answer;
  return shape === "option" || shape === "options" || shape === "ranking";
}

/** Whether answers of `type` are numbers (a NUMBER's value, a RATING's steps). */
export function takesNumber(type: string): boolean {
  const shape = questionTypeOf(type)?.answer;
  return shape === "number" || shape === "steps";
}

/** Whether answers of `type` are upload ids (each with its file). */
export function takesUploads(type: string): boolean {
  return questionTypeOf(type)?.answer === "uploads";
}

/** The steps of a `steps` question: its type's scale, with the block's own ends where the type lets it have them. */
export function scaleOf(block: { type: string; min?: number; max?: number }): Scale {
  const scale = questionTypeOf(block.type)?.scale ?? { min: 1, max: 5 };
  if ("fixed" in scale && scale.fixed) return { min: scale.min, max: scale.max };
  return { min: block.min ?? scale.min, max: block.max ?? scale.max };
}

/** Whether the editor offers a placeholder for questions of `type`. */
export function takesPlaceholder(type: string): boolean {
  return questionTypeOf(type)?.placeholder === true;
}

/** The largest upload a respondent may send: 10 MiB. */
export const maxUploadBytes = 10 * 1024 * 1024;

/** A JSON value as a CEL value: lists stay lists, objects become maps. */
export function jsonCelValue(value: JsonValue): CelInput {
  if (Array.isArray(value)) return value.map(jsonCelValue);
  if (value !== null && typeof value === "object") return new Map(Object.entries(value).map(([k, v]) => [k, jsonCelValue(v)]));
  return value;
}

/**
 * An answer's value as calculated fields' CEL expressions see it: `steps` answers are `int` (whole steps,
 * so `q_rating + 1` works), numbers are `double` (write `q_age * 2.0` or `int(q_age) * 2`), lists stay
 * lists, text and option ids are strings.
 */
export function answerCelValue(type: string | undefined, value: JsonValue): CelInput {
  if (questionTypeOf(type)?.answer === "steps" && typeof value === "number" && Number.isInteger(value)) return BigInt(value);
  return jsonCelValue(value);
}

function plainText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return value.map(plainText).filter((v) => v !== "").join(", ");
  return JSON.stringify(value);
}

/**
 * An answer as people read it (the Responses table, the CSV export, notification mails): file names for
 * uploads, the options' texts for choices (the id when the option is gone), `Row: Column; …` for a
 * matrix (its rows' and columns' texts through `optionText`), lists joined with ", ";
 * empty when unanswered.
 */
export function answerText(
  type: string,
  value: unknown,
  context: { optionText(id: string): string | undefined; fileNames?: readonly string[] },
): string {
  if (takesUploads(type)) return (context.fileNames ?? []).join(", ");
  if (questionTypeOf(type)?.answer === "grid" && value !== null && typeof value === "object" && !Array.isArray(value)) {
    // Row: column(s), a row a part; rows and columns read as their texts.
    return Object.entries(value)
      .map(([row, columns]) => `${context.optionText(row) ?? row}: ${answerText("CHECKBOXES", columns, context)}`)
      .join("; ");
  }
  if (takesOptions(type)) {
    const ids = Array.isArray(value) ? value : [value];
    return ids
      .filter((id) => id !== null && id !== undefined && id !== "")
      .map((id) => context.optionText(String(id)) ?? String(id))
      .join(", ");
  }
  return plainText(value);
}
