// The app's own texts, in ICU MessageFormat from the catalogues in messages/ (one JSON file per language,
// named by its BCP 47 tag; en.json is the source every other must match, see check.test.ts); the dates and
// numbers of the app are written in currentLocale() (lib/format.ts). Formatting is intl-messageformat's,
// as the hosted pages' (gateway/src/hosted/page-messages.ts): plurals, numbers and dates through
// Intl/CLDR. `t()` reads the language the app speaks now (I18nProvider sets it; English until then, and
// in unit tests), so helpers outside components format with it too.
import { IntlMessageFormat } from "intl-messageformat";
import de from "./messages/de.json" with { type: "json" };
import en from "./messages/en.json" with { type: "json" };

export type MessageKey = keyof typeof en;
export type MessageValues = Record<string, string | number>;

export const sourceLanguage = "en";

/** The app's catalogues by language tag. Adding a language is its file in messages/ and its line here. */
export const catalogues: Readonly<Record<string, Readonly<Record<string, string>>>> = { en, de };

/** The languages the app speaks, as their catalogues name them. */
export const appLanguages: readonly string[] = Object.keys(catalogues);

let language = sourceLanguage;
let locale = sourceLanguage;

/** The catalogue's language the app speaks now. */
export function currentLanguage(): string {
  return language;
}

/** The locale dates and numbers are written in: the browser's own variant of the language spoken (en-GB for en), else the language. */
export function currentLocale(): string {
  return locale;
}

/**
 * Makes the app speak the catalogue closest to `tag` (see catalogueLanguageOf), writing dates and numbers
 * as the first of `preferred` (the browser's languages) of the same language does.
 */
export function speak(tag: string, preferred: readonly string[] = []): string {
  language = catalogueLanguageOf(tag) ?? sourceLanguage;
  locale = preferred.find((p) => primaryOf(p) === primaryOf(language) && isLocale(p)) ?? language;
  return language;
}

const primaryOf = (tag: string) => tag.toLowerCase().split("-")[0];

function isLocale(tag: string): boolean {
  try {
    return Intl.getCanonicalLocales(tag).length === 1;
  } catch {
    return false;
  }
}

/** The catalogue for a BCP 47 tag: its own, else one of the same language (de-AT reads de); undefined when none. */
export function catalogueLanguageOf(tag: string): string | undefined {
  const wanted = tag.toLowerCase();
  return appLanguages.find((l) => l.toLowerCase() === wanted) ?? appLanguages.find((l) => primaryOf(l) === primaryOf(wanted));
}

/** The first of the browser's languages the app speaks; English when it speaks none of them. */
export function browserLanguage(preferred: readonly string[]): string {
  for (const tag of preferred) {
    const found = catalogueLanguageOf(tag);
    if (found) return found;
  }
  return sourceLanguage;
}

const formatters = new Map<string, IntlMessageFormat>();

/** The formatter of a message in the language spoken now (a key its catalogue lacks reads in English). */
export function formatterOf(key: MessageKey): IntlMessageFormat {
  const id = `${language}\n${locale}\n${key}`;
  let formatter = formatters.get(id);
  if (!formatter) {
    formatter = new IntlMessageFormat(catalogues[language]?.[key] ?? catalogues[sourceLanguage][key] ?? key, locale);
    formatters.set(id, formatter);
  }
  return formatter;
}

/** A message as plain text, in the language spoken now. */
export function t(key: MessageKey, values?: MessageValues): string {
  return String(formatterOf(key).format(values));
}

/** Labels by name, each read in the language spoken when it is shown (so a table of them follows a change of language). */
export function labelsOf<Name extends string>(names: readonly Name[], key: (name: Name) => MessageKey): Readonly<Record<Name, string>> {
  return Object.defineProperties({}, Object.fromEntries(names.map((name) => [name, { get: () => t(key(name)), enumerable: true }]))) as Record<Name, string>;
}
