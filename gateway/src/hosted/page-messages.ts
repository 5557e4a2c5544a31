// The system texts of hosted form pages (every word a respondent sees that the owner did not type), in
// ICU MessageFormat from the catalogues in messages/: one JSON file per language, named by its BCP 47
// tag, English (en.json) being the source every other must match (catalogue-check.ts). Adding a language
// is adding its file. Formatting is intl-messageformat's (plurals, numbers and dates through Intl/CLDR);
// the page's script gets its few messages already formatted as templates (scriptTemplates), so the page
// ships no formatter of its own.
import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { IntlMessageFormat } from "intl-messageformat";
import { refusals, type RefusalCode } from "@formsvc/form-document/response-rules";
import type english from "./messages/en.json";

export type MessageKey = keyof typeof english;
/** A catalogue: message by key. */
export type Catalogue = Record<string, string>;
export type MessageValues = Record<string, string | number>;

export const sourceLanguage = "en";
export const messagesDir = join(import.meta.dirname, "messages");

/** Every catalogue of `dir` by its language tag (its file name without .json). */
export function readCatalogues(dir: string = messagesDir): Map<string, Catalogue> {
  const catalogues = new Map<string, Catalogue>();
  for (const file of readdirSync(dir).filter((name) => name.endsWith(".json")).sort()) {
    catalogues.set(basename(file, ".json"), JSON.parse(readFileSync(join(dir, file), "utf8")) as Catalogue);
  }
  return catalogues;
}

const catalogues = readCatalogues();

/** The languages the hosted pages speak, as their catalogues name them. */
export const pageLanguages: readonly string[] = [...catalogues.keys()];

/** The messages the page's script shows itself (form-page.js): they take only plain {arguments}. */
export const scriptMessageKeys = [
  "required",
  "pageOf",
  "questionOf",
  "questionRequired",
  "enterNumber",
  "enterEmail",
  "enterUrl",
  "signatureRequired",
  "signatureNotSaved",
  "sendFailed",
  "saveFailed",
  "tooManyAttempts",
  "closed",
  "fileTooLarge",
  "uploadFailed",
  "fileUploaded",
  "uploading",
  "removeFile",
  "removeFileNamed",
  "optionsChosen",
  // Refusals a save may meet (response-rules.ts), shown by their code.
  ...(Object.keys(refusals) as RefusalCode[]),
] as const satisfies readonly MessageKey[];

/** The messages embed.js shows on the embedding site. */
export const embedMessageKeys = ["closeForm", "untitledForm"] as const satisfies readonly MessageKey[];

/**
 * The catalogue for a BCP 47 tag: its own, else one of the same language (de-AT reads de, pt reads pt-BR),
 * else English. Tags are compared without regard to case.
 */
export function catalogueLanguageOf(tag: string): string {
  const wanted = tag.toLowerCase();
  const exact = pageLanguages.find((language) => language.toLowerCase() === wanted);
  if (exact) return exact;
  const primary = wanted.split("-")[0];
  return pageLanguages.find((language) => language.toLowerCase().split("-")[0] === primary) ?? sourceLanguage;
}

/**
 * The first of `offered` that an Accept-Language header asks for, by its weights: a tag the header names,
 * else one of the same language as a named one; undefined when it asks for none of them.
 */
export function negotiateLanguage(header: string | undefined, offered: readonly string[]): string | undefined {
  const asked = (header ?? "")
    .split(",")
    .map((part, order) => {
      const [tag, ...params] = part.trim().split(";");
      const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { tag: tag.trim().toLowerCase(), weight: q === undefined ? 1 : Number(q), order };
    })
    .filter((entry) => entry.tag !== "" && entry.tag !== "*" && entry.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.order - b.order);
  for (const { tag } of asked) {
    const match =
      offered.find((language) => language.toLowerCase() === tag) ??
      offered.find((language) => language.toLowerCase().split("-")[0] === tag.split("-")[0]);
    if (match) return match;
  }
  return undefined;
}

/** Which way a language's script runs, from CLDR (through Intl). */
export function directionOf(language: string): "ltr" | "rtl" {
  try {
    const locale = new Intl.Locale(language) as Intl.Locale & { getTextInfo?: () => { direction: string } };
    return locale.getTextInfo?.().direction === "rtl" ? "rtl" : "ltr";
  } catch {
    return "ltr";
  }
}

/** What an argument whose text is only known in the browser is formatted as (NUL never occurs in a message). */
const scriptArgument = (name: string) => `\u0000${name}\u0000`;

/** The system texts of one page language. */
export interface PageTexts {
  /** The page's language (a form's may be more precise than its catalogue's, e.g. de-CH). */
  language: string;
  dir: "ltr" | "rtl";
  /** A message as plain text. */
  text(key: MessageKey, values?: MessageValues): string;
  /** The messages the page's script shows: templates whose `\0name\0` parts it fills in. */
  scriptTemplates(): Record<string, string>;
}

const formatters = new Map<string, IntlMessageFormat>();

/** A message of `catalogue`, its numbers and plurals as `language` writes them. */
function format(language: string, catalogue: string, key: MessageKey, values?: MessageValues): string {
  const id = `${language}\n${catalogue}\n${key}`;
  let formatter = formatters.get(id);
  if (!formatter) {
    // A key a catalogue lacks reads in English (catalogue-check.ts keeps every catalogue complete).
    const message = catalogues.get(catalogue)?.[key] ?? catalogues.get(sourceLanguage)![key];
    formatter = new IntlMessageFormat(message, language, undefined, { ignoreTag: true });
    formatters.set(id, formatter);
  }
  return String(formatter.format(values));
}

/** A tag as Intl writes it (de-ch reads de-CH); the catalogue's own tag when Intl does not take it. */
function canonicalTag(tag: string, catalogue: string): string {
  try {
    return Intl.getCanonicalLocales(tag)[0] ?? catalogue;
  } catch {
    return catalogue;
  }
}

/** What each of the script's messages is formatted with: its arguments as placeholders (worked out once). */
const scriptArguments = new Map<string, MessageValues>(
  scriptMessageKeys.map((key) => [key, Object.fromEntries(argumentNames(catalogues.get(sourceLanguage)![key]).map((name) => [name, scriptArgument(name)]))]),
);

/** The texts for a BCP 47 tag (a form's language, or one negotiated): those of the catalogue closest to it. */
export function pageTexts(tag: string = sourceLanguage): PageTexts {
  const catalogue = catalogueLanguageOf(tag);
  const language = canonicalTag(tag, catalogue);
  return {
    language,
    dir: directionOf(language),
    text: (key, values) => format(language, catalogue, key, values),
    scriptTemplates: () => Object.fromEntries(scriptMessageKeys.map((key) => [key, format(language, catalogue, key, scriptArguments.get(key))])),
  };
}

/** The arguments a message names, in order of first appearance (nested ones too). */
export function argumentNames(message: string): string[] {
  const names = new Set<string>();
  const walk = (elements: ReturnType<IntlMessageFormat["getAst"]>) => {
    for (const element of elements) {
      if ("value" in element && element.type !== 0 && typeof element.value === "string") names.add(element.value);
      if ("options" in element) for (const option of Object.values(element.options)) walk(option.value);
      if ("children" in element) walk(element.children);
    }
  };
  walk(new IntlMessageFormat(message, sourceLanguage, undefined, { ignoreTag: true }).getAst());
  return [...names];
}

/** The messages embed.js needs, in every language: it picks by the embedding page's language. */
export function embedCatalogues(): Record<string, Record<string, string>> {
  return Object.fromEntries(pageLanguages.map((language) => [language, Object.fromEntries(embedMessageKeys.map((key) => [key, format(language, language, key)]))]));
}
