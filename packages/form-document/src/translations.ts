// A form in several languages: settings.language is the language of the form's own texts, and
// settings.languages gives each further language a translation of every one of them, by where the text is
// (its path: `title`, `<blockId>.question`, `<blockId>.options.<optionId>`, `thankYou.title`, ...). Paths
// name blocks and options by id, never by text, so answers in every language land in the same columns.
// Without zod (types only from the schemas), so the app's Settings tab shows each language's completeness with it.
import { defaultClosedMessage, defaultSubmitLabel, defaultThankYou } from "./page-text-defaults.ts";
import type { Block, FormDocument } from "./schema.ts";
import type { FormSettings } from "./settings.ts";

/** A text of the owner's that a translation gives in another language. */
export interface OwnerText {
  path: string;
  text: string;
}

/** A block's own texts: properties whose value is text. */
const blockTextProperties = ["question", "description", "placeholder", "text"] as const;
/** Settings texts an owner writes; one left at its default is a system text (the page's catalogue has it). */
const settingsTexts = [
  ["submitLabel", (s: FormSettings) => s.submitLabel, defaultSubmitLabel],
  ["closedMessage", (s: FormSettings) => s.closedMessage, defaultClosedMessage],
  ["thankYou.title", (s: FormSettings) => s.thankYou.title, defaultThankYou.title],
  ["thankYou.text", (s: FormSettings) => s.thankYou.text, defaultThankYou.text],
  ["thankYou.buttonLabel", (s: FormSettings) => s.thankYou.buttonLabel ?? "", ""],
] as const;

/** A block's lists of {id, text} items (options, and any other list of labelled items a block type has). */
function itemLists(block: Block): [string, { id?: string; text: string }[]][] {
  return Object.entries(block).filter(
    (entry): entry is [string, { id?: string; text: string }[]] =>
      Array.isArray(entry[1]) && entry[1].every((item) => item && typeof item === "object" && typeof item.text === "string"),
  );
}

/** Every text of the owner's in the form, with its path: what each further language translates. */
export function ownerTexts(doc: FormDocument, settings: FormSettings): OwnerText[] {
  const texts: OwnerText[] = [];
  const add = (path: string, text: string | undefined) => {
    if (text !== undefined && text.trim() !== "") texts.push({ path, text });
  };
  add("title", doc.title);
  for (const block of doc.blocks) {
    if (!block.id) continue;
    const fields = block as Record<string, unknown>;
    for (const property of blockTextProperties) if (typeof fields[property] === "string") add(`${block.id}.${property}`, fields[property]);
    for (const [list, items] of itemLists(block)) for (const item of items) if (item.id) add(`${block.id}.${list}.${item.id}`, item.text);
  }
  for (const [path, read, fallback] of settingsTexts) if (read(settings) !== fallback) add(path, read(settings));
  return texts;
}

/** The languages a form offers: its own first, then those it has translations for. */
export function formLanguages(settings: FormSettings): string[] {
  return [settings.language, ...settings.languages.map((l) => l.language).filter((l) => l.toLowerCase() !== settings.language.toLowerCase())];
}

/** The owner texts each further language lacks a translation of (a blank one counts as none). */
export function missingTranslations(doc: FormDocument, settings: FormSettings): { language: string; missing: OwnerText[] }[] {
  const texts = ownerTexts(doc, settings);
  return settings.languages
    .map(({ language, texts: translated }) => ({ language, missing: texts.filter(({ path }) => !translated[path]?.trim()) }))
    .filter(({ missing }) => missing.length > 0);
}

/** Why a form with missing translations cannot be published, naming what each language misses (the first ten of each). */
export function describeMissingTranslations(missing: ReturnType<typeof missingTranslations>): string {
  return missing
    .map(({ language, missing: texts }) => {
      const named = texts.slice(0, 10).map(({ path, text }) => `${path} (${JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text)})`);
      const more = texts.length > 10 ? ` and ${texts.length - 10} more` : "";
      return `the ${language} translation misses ${texts.length === 1 ? "a text" : `${texts.length} texts`}: ${named.join(", ")}${more}`;
    })
    .join("; ");
}

/**
 * The form's document and settings in `language`: each owner text its translation gives, the form's own
 * where it gives none. The form's own language (or one it does not offer) changes nothing.
 */
export function translateForm(doc: FormDocument, settings: FormSettings, language: string): { document: FormDocument; settings: FormSettings } {
  const translated = settings.languages.find((l) => l.language.toLowerCase() === language.toLowerCase())?.texts;
  if (!translated || language.toLowerCase() === settings.language.toLowerCase()) return { document: doc, settings };
  const text = (path: string, own: string) => translated[path]?.trim() || own;
  const blocks = doc.blocks.map((block) => {
    if (!block.id) return block;
    const copy: Record<string, unknown> = { ...block };
    for (const property of blockTextProperties) if (typeof copy[property] === "string") copy[property] = text(`${block.id}.${property}`, copy[property] as string);
    for (const [list, items] of itemLists(block)) copy[list] = items.map((item) => (item.id ? { ...item, text: text(`${block.id}.${list}.${item.id}`, item.text) } : item));
    return copy as Block;
  });
  const thankYou = settings.thankYou;
  return {
    document: { ...doc, title: doc.title === undefined ? undefined : text("title", doc.title), blocks },
    settings: {
      ...settings,
      submitLabel: text("submitLabel", settings.submitLabel),
      closedMessage: text("closedMessage", settings.closedMessage),
      thankYou: {
        ...thankYou,
        title: text("thankYou.title", thankYou.title),
        text: text("thankYou.text", thankYou.text),
        buttonLabel: thankYou.buttonLabel === null ? null : text("thankYou.buttonLabel", thankYou.buttonLabel),
      },
    },
  };
}
