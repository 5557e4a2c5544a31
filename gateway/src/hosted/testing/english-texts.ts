// For tests of pages in other languages: which of English's system texts a page shows.
import { readCatalogues, sourceLanguage } from "../page-messages.ts";

/** English's messages without arguments, each matched as a whole word or phrase (so "Form" is not found in "Formular"). */
const englishTexts = Object.values(readCatalogues().get(sourceLanguage)!)
  .filter((message) => !message.includes("{"))
  .map((message) => ({ message, pattern: new RegExp(`(?<!\\p{L})${message.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?!\\p{L})`, "u") }));

/** The English system texts in `text` (a page's HTML or its visible text). */
export function englishTextsIn(text: string): string[] {
  return englishTexts.filter(({ pattern }) => pattern.test(text)).map(({ message }) => message);
}
