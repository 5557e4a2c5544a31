// What the hosted form page needs to know about a (normalized) v1 form document: its pages, its
// questions, turning the fields of a plain HTML form post into checked answers, and showing the
// problems a service names by key next to their questions. Pure functions; the browser script
// (form-page.js) mirrors the last.
import {
  evaluateLogic,
  hasLogic,
  isInputBlock,
  maxInt32,
  questionTypes,
  takesUploads,
  validateAnswers,
  type Block,
  type FormDocument,
  type InputBlock,
  type LogicState,
} from "@formsvc/form-document";
import { pageTexts, type PageTexts } from "./page-messages.ts";

const englishTexts = pageTexts();

/** Field names of the plain HTML form that are not answers. Keys start with a letter, so these never clash. */
export const versionField = "_version";
export const hiddenFieldPrefix = "_hidden.";
/** The language the respondent answers in (settings.language or one of settings.languages). */
export const languageField = "_language";
/** The honeypot: a field people never see (settings.honeypot); whoever fills it is a bot. */
export const honeypotField = "_website";

/** The posted field of a matrix's row: `<key>.<rowId>` (keys have no dots, so these never clash). */
export const matrixField = (key: string, rowId: string) => `${key}.${rowId}`;

/** A value of a posted field: one string, or several for repeated names (checkboxes). */
export type FieldValue = string | string[];
export type FieldValues = Record<string, FieldValue>;

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
export function questionsOf(doc: FormDocument): InputBlock[] {
  return doc.blocks.filter((b): b is InputBlock => isInputBlock(b) && typeof b.key === "string" && b.key !== "");
}

/** Whether the form needs the browser script to be answered (file uploads, signatures). */
export function needsScript(doc: FormDocument): boolean {
  return questionsOf(doc).some((q) => takesUploads(q.type));
}

/** A posted field's first value ("" when absent). */
export function first(value: FieldValue | undefined): string {
  return Array.isArray(value) ? (value[0] ?? "") : (value ?? "");
}

/** A posted field's values, the empty ones left out. */
export function all(value: FieldValue | undefined): string[] {
  return (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter((v) => v !== "");
}

interface PostedForm {
  /** By question key: the JSON values of DESIGN.md. */
  answers: Record<string, string | number | boolean | string[] | Record<string, string | string[]>>;
  /** Hidden field values, by name (only names the document declares). */
  hidden: Record<string, string>;
  /** The version the respondent loaded; 0 when unknown. */
  version: number;
  /** Problems found before asking the service, by question key. */
  errors: Record<string, string>;
}

/** A problem as shown next to its question: `must be a number` reads "Must be a number". */
export function shownProblem(message: string): string {
  return message.charAt(0).toUpperCase() + message.slice(1);
}

/** What the rules make of posted fields, worked out once per post (its checks, its next page and its page all ask). */
const logicStates = new WeakMap<FieldValues, { doc: FormDocument; state: LogicState }>();

export function logicStateOf(doc: FormDocument, fields: FieldValues): LogicState {
  const known = logicStates.get(fields);
  if (known?.doc === doc) return known.state;
  const state = evaluateLogic(doc, readAnswers(doc, fields).answers);
  logicStates.set(fields, { doc, state });
  return state;
}

/**
 * Answers from the fields of the plain (urlencoded) HTML form: text as given, numbers as numbers,
 * choices as option ids, checkboxes as arrays of option ids, a ticked consent as true. Empty fields are no answer. The answers
 * are checked here too, by submissions' own rules (validateAnswers), so that a respondent without
 * JavaScript sees every problem at once; questions that take uploads cannot be answered this way.
 */
export function answersFromFields(doc: FormDocument, fields: FieldValues, texts: PageTexts = englishTexts): PostedForm {
  const { answers, errors } = readAnswers(doc, fields, texts);
  const checked = validateAnswers(doc, answers, { completed: true });
  for (const problem of checked.ok ? [] : checked.problems) {
    // A field that could not be read is already named, for what was wrong with it.
    if (problem.key === undefined || errors[problem.key] !== undefined) continue;
    errors[problem.key] = problem.missing ? texts.text("questionRequired") : shownProblem(problem.message);
  }
  // A question the logic hides takes no answer, so nothing about it is a problem (submissions drops it).
  if (hasLogic(doc)) {
    const { hidden } = logicStateOf(doc, fields);
    for (const block of questionsOf(doc)) if (hidden.has(block.id ?? "")) delete errors[block.key!];
  }
  const hidden: Record<string, string> = {};
  for (const { name } of doc.hiddenFields ?? []) {
    const value = first(fields[hiddenFieldPrefix + name]);
    if (value !== "") hidden[name] = value;
  }
  const version = Number(first(fields[versionField]));
  return { answers, hidden, version: Number.isInteger(version) && version > 0 && version <= maxInt32 ? version : 0, errors };
}

/** The answers the fields carry, read by each question's answer shape, and the fields that could not be read (in the page's language). */
export function readAnswers(doc: FormDocument, fields: FieldValues, texts: PageTexts = englishTexts): Pick<PostedForm, "answers" | "errors"> {
  const answers: PostedForm["answers"] = {};
  const errors: PostedForm["errors"] = {};
  for (const block of questionsOf(doc)) {
    const key = block.key!;
    const raw = fields[key];
    switch (questionTypes[block.type].answer) {
      case "uploads":
        if (block.required) errors[key] = texts.text("questionNeedsScript");
        break;
      case "options":
      case "ranking": {
        // A ranking posts one select per place, in place order.
        const ids = all(raw);
        if (ids.length > 0) answers[key] = ids;
        break;
      }
      case "number":
      case "steps": {
        const text = first(raw).trim();
        if (text === "") break;
        const n = Number(text);
        if (!Number.isFinite(n)) errors[key] = texts.text("enterNumber");
        else answers[key] = n;
        break;
      }
      case "grid": {
        if (block.type !== "MATRIX") break;
        const rows: Record<string, string | string[]> = {};
        for (const row of block.rows) {
          const ids = all(fields[matrixField(key, row.id ?? "")]);
          if (ids.length > 0) rows[row.id ?? ""] = block.multiple ? ids : ids[0];
        }
        if (Object.keys(rows).length > 0) answers[key] = rows;
        break;
      }
      case "consent":
        // The ticked box posts "true"; an unticked one posts nothing.
        if (first(raw) === "true") answers[key] = true;
        break;
      case "text":
      case "option": {
        const text = first(raw).trim();
        if (text !== "") answers[key] = text;
      }
    }
  }
  return { answers, errors };
}

/** The problems a service named by key (its field violations), by the key of the question each is shown next to. */
export function problemsByQuestion(doc: FormDocument, problems: readonly { key: string; message: string }[]): Record<string, string> {
  const keys = new Set(questionsOf(doc).map((q) => q.key!));
  const errors: Record<string, string> = {};
  for (const { key, message } of problems) if (keys.has(key) && errors[key] === undefined) errors[key] = shownProblem(message);
  return errors;
}
