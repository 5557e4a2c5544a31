// The app's language in React: the provider that makes the app speak the person's chosen language (else
// their browser's), and messages with markup (a link or emphasis inside a sentence).
import { cloneElement, Fragment, isValidElement, useEffect, type ReactNode } from "react";
import type { FormatXMLElementFn } from "intl-messageformat";
import { browserLanguage, formatterOf, speak, type MessageKey } from "./messages.ts";

function browserLanguages(): readonly string[] {
  return typeof navigator === "undefined" ? [] : navigator.languages?.length ? navigator.languages : [navigator.language];
}

/**
 * Speaks `locale` (the person's choice, a BCP 47 tag) or, without one, the browser's language. The pages
 * below are mounted afresh when the language changes, so every text and date is written again.
 */
export function I18nProvider({ locale, children }: { locale: string | null | undefined; children: ReactNode }) {
  const preferred = browserLanguages();
  const language = speak(locale || browserLanguage(preferred), preferred);
  useEffect(() => {
    document.documentElement.lang = language;
  }, [language]);
  return <Fragment key={language}>{children}</Fragment>;
}

export type RichValues = Record<string, ReactNode | FormatXMLElementFn<ReactNode>>;

/**
 * A message with markup: each <name>…</name> of it is the value `name`, a function of its content
 * ("Go to <link>your forms</link>" with link: (chunks) => <Link …>{chunks}</Link>).
 */
export function tRich(key: MessageKey, values: RichValues): ReactNode {
  const parts = formatterOf(key).format<ReactNode>(values);
  if (!Array.isArray(parts)) return parts;
  return parts.map((part, index) => (isValidElement(part) ? cloneElement(part, { key: index }) : <Fragment key={index}>{part}</Fragment>));
}
