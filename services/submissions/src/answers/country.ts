// The respondent's country: the RESPONDENT_COUNTRY answer of a response, from what the gateway found.
import { respondentCountryQuestion } from "@formsvc/form-document/questions";
import type { StoredAnswer } from "./stored-answer.ts";

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
