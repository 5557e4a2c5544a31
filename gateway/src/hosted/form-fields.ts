// What the hosted form page needs to know about a (normalized) v1 form document: its pages, its
// questions, turning the fields of a plain HTML form post into answers, and finding the question a
// server error names. Pure functions; the browser script (form-page.js) mirrors the last two.
import { isInputBlock, maxInt32, type Block, type FormDocument, type InputBlock } from "@formsvc/form-document";

/** Field names of the plain HTML form that are not answers. Keys start with a letter, so these never clash. */
export const versionField = "_version";
export const hiddenFieldPrefix = "_hidden.";

/** A value of a posted field: one string, or several for repeated names (checkboxes). */
export type FieldValue = string | string[];
export type FieldValues = Record<string, FieldValue>;

/** Input types whose answers are files uploaded by the browser script: no plain HTML fallback. */
const uploadTypes: ReadonlySet<string> = new Set(["FILE", "SIGNATURE"]);

/** The document as stored: normalized, but read defensively so an odd document never breaks the page. */
export function documentOf(raw: unknown): FormDocument {
  const doc = raw && typeof raw === "object" ? (raw as Partial<FormDocument>) : {};
  return {
    ...doc,
    blocks: Array.isArray(doc.blocks) ? doc.blocks.filter((b): b is Block => !!b && typeof b === "object" && "type" in b) : [],
    hiddenFields: Array.isArray(doc.hiddenFields) ? doc.hiddenFields : [],
  } as FormDocument;
}

/** Input blocks that can take an answer (they have a key). */
function questionsOf(doc: FormDocument): InputBlock[] {
  return doc.blocks.filter((b): b is InputBlock => isInputBlock(b) && typeof b.key === "string" && b.key !== "");
}

/** The blocks of each page: the document split at PAGE_BREAK, empty pages dropped; at least one page. */
export function pagesOf(doc: FormDocument): Block[][] {
  const pages: Block[][] = [[]];
  for (const block of doc.blocks) {
    if (block.type === "PAGE_BREAK") pages.push([]);
    else pages[pages.length - 1].push(block);
  }
  const kept = pages.filter((page) => page.length > 0);
  return kept.length > 0 ? kept : [[]];
}

/** Whether the form needs the browser script to be answered (file uploads, signatures). */
export function needsScript(doc: FormDocument): boolean {
  return questionsOf(doc).some((q) => uploadTypes.has(q.type));
}

function first(value: FieldValue | undefined): string {
  return Array.isArray(value) ? (value[0] ?? "") : (value ?? "");
}

function all(value: FieldValue | undefined): string[] {
  return (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter((v) => v !== "");
}

interface PostedForm {
  /** By question key: the JSON values of DESIGN.md. */
  answers: Record<string, string | number | string[]>;
  /** Hidden field values, by name (only names the document declares). */
  hidden: Record<string, string>;
  /** The version the respondent loaded; 0 when unknown. */
  version: number;
  /** Problems found before asking the service, by question key. */
  errors: Record<string, string>;
}

/**
 * Answers from the fields of the plain (urlencoded) HTML form: text as given, numbers as numbers,
 * choices as option ids, checkboxes as arrays of option ids. Empty fields are no answer. Required
 * questions are checked here too, so that a respondent without JavaScript sees every problem at once;
 * FILE and SIGNATURE questions cannot be answered this way.
 */
export function answersFromFields(doc: FormDocument, fields: FieldValues): PostedForm {
  const answers: PostedForm["answers"] = {};
  const errors: PostedForm["errors"] = {};
  for (const block of questionsOf(doc)) {
    const key = block.key!;
    const raw = fields[key];
    switch (block.type) {
      case "FILE":
      case "SIGNATURE":
        if (block.required) errors[key] = "This question needs JavaScript: please enable it and try again.";
        continue;
      case "CHECKBOXES": {
        const ids = all(raw);
        if (ids.length > 0) answers[key] = ids;
        break;
      }
      case "NUMBER":
      case "RATING": {
        const text = first(raw).trim();
        if (text === "") break;
        const n = Number(text);
        if (!Number.isFinite(n)) errors[key] = "Enter a number.";
        else answers[key] = n;
        break;
      }
      default: {
        const text = first(raw).trim();
        if (text !== "") answers[key] = text;
      }
    }
    if (block.required && answers[key] === undefined && errors[key] === undefined) errors[key] = "This question is required.";
  }
  const hidden: Record<string, string> = {};
  for (const { name } of doc.hiddenFields ?? []) {
    const value = first(fields[hiddenFieldPrefix + name]);
    if (value !== "") hidden[name] = value;
  }
  const version = Number(first(fields[versionField]));
  return { answers, hidden, version: Number.isInteger(version) && version > 0 && version <= maxInt32 ? version : 0, errors };
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * The question a service error names: by its key (`answers.q_name`, `"q_name"`, or the bare key as a
 * word), else by its question text. Undefined when it names none.
 */
export function questionNamedBy(doc: FormDocument, message: string): InputBlock | undefined {
  const questions = questionsOf(doc);
  const patterns = [
    (k: string) => new RegExp(`answers(\\.${escapeRegExp(k)}|\\[["']${escapeRegExp(k)}["']\\])(?![A-Za-z0-9_])`),
    (k: string) => new RegExp(`["'\`]${escapeRegExp(k)}["'\`]`),
    (k: string) => new RegExp(`(^|[^A-Za-z0-9_])${escapeRegExp(k)}(?![A-Za-z0-9_])`),
  ];
  for (const pattern of patterns) {
    const found = questions.find((q) => pattern(q.key!).test(message));
    if (found) return found;
  }
  return questions.find((q) => q.question.length > 2 && message.includes(q.question));
}

/** A service error as shown next to its question: without the leading `answers.<key>: ` path. */
export function messageForQuestion(message: string, block: InputBlock): string {
  const prefix = new RegExp(`^\\s*answers(\\.${escapeRegExp(block.key!)}|\\[["']${escapeRegExp(block.key!)}["']\\])\\s*:\\s*`);
  const text = message.replace(prefix, "").trim();
  return text ? text.charAt(0).toUpperCase() + text.slice(1) : message;
}
