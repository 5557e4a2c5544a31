// Passwords: hashed with scrypt (@formsvc/platform/password-hash.ts, shared with forms' form passwords).
// A new password must also be hard to guess: zxcvbn (common passwords, keyboard patterns, sequences,
// dates, the person's own name and email) must score it at least 3 of 4, i.e. more than 10^8 guesses.
// At least 8 characters rather than 10 at score 2: score 3 is what holds against an offline attack on a
// stolen scrypt hash, and length alone says little ("aaaaaaaaaa" is long); passphrases pass easily.
import { randomBytes } from "node:crypto";
import { hashPassword, verifyPassword } from "@formsvc/platform/password-hash.ts";
import type { TranslationKeys, ZxcvbnFactory } from "@zxcvbn-ts/core";

export { hashPassword, verifyPassword };

const minPasswordLength = 8;
const maxPasswordLength = 200;
/** zxcvbn's score (0-4) a new password needs: 3 is "safely unguessable", over 10^8 guesses. */
export const minPasswordScore = 3;
/** Characters of a password zxcvbn looks at (and l33t substitutions it tries): its time grows fast with both. */
const checkedLength = 64;

/**
 * What is wrong with a new password (too short or long, common, or easy to guess, with zxcvbn's reason),
 * or undefined when it is acceptable. `personal`: the person's email and name, which it must not lean on.
 */
export async function passwordProblem(password: string, personal: string[] = []): Promise<string | undefined> {
  const length = [...password].length;
  if (length < minPasswordLength) return `password must be at least ${minPasswordLength} characters`;
  if (length > maxPasswordLength) return `password must be at most ${maxPasswordLength} characters`;
  const personalWords = personal.flatMap((value) => value.toLowerCase().split(/[^\p{L}\p{N}]+/u)).filter((w) => w.length >= 3);
  const { score, feedback } = (await strengthChecker()).check(password, [...personal, ...personalWords]);
  if (score >= minPasswordScore) return undefined;
  const reason = [feedback.warning, ...feedback.suggestions].filter(Boolean).join(" ") || feedbackText.suggestions.anotherWord;
  return `password is too easy to guess: ${reason}`;
}

/**
 * zxcvbn with the common-password and keyboard dictionaries: built once, on the first password checked
 * (the dictionaries take ~150 ms and some megabytes to load, which the service's start does not wait for).
 */
let checker: Promise<ZxcvbnFactory> | undefined;
function strengthChecker(): Promise<ZxcvbnFactory> {
  checker ??= Promise.all([import("@zxcvbn-ts/core"), import("@zxcvbn-ts/language-common")]).then(
    ([{ ZxcvbnFactory }, common]) =>
      new ZxcvbnFactory({ dictionary: common.dictionary, graphs: common.adjacencyGraphs, translations: feedbackText, maxLength: checkedLength, l33tMaxSubstitutions: 16 }),
  );
  // A failed load is tried again by the next check, not kept.
  checker.catch(() => (checker = undefined));
  return checker;
}

/** zxcvbn's feedback in English (the package ships keys only; its language-en package is not used). */
const feedbackText: TranslationKeys = {
  warnings: {
    straightRow: "Straight rows of keys on the keyboard are easy to guess.",
    keyPattern: "Short keyboard patterns are easy to guess.",
    simpleRepeat: 'Repeated characters like "aaa" are easy to guess.',
    extendedRepeat: 'Repeated patterns like "abcabcabc" are easy to guess.',
    sequences: 'Sequences like "abc" or "1234" are easy to guess.',
    recentYears: "Recent years are easy to guess.",
    dates: "Dates are easy to guess.",
    topTen: "This is one of the ten most used passwords.",
    topHundred: "This is one of the hundred most used passwords.",
    common: "This is a commonly used password.",
    similarToCommon: "This is similar to a commonly used password.",
    wordByItself: "A single word is easy to guess.",
    namesByThemselves: "Names on their own are easy to guess.",
    commonNames: "Common names are easy to guess.",
    userInputs: "It should not contain your name or email.",
    pwned: "This password has appeared in a data breach.",
  },
  suggestions: {
    l33t: 'Predictable substitutions like "@" for "a" do not help much.',
    reverseWords: "Reversed common words do not help much.",
    allUppercase: "Capitalise some, not all, letters.",
    capitalization: "Capitalise more than the first letter.",
    dates: "Avoid dates and years that are linked to you.",
    recentYears: "Avoid recent years.",
    associatedYears: "Avoid years that are linked to you.",
    sequences: "Avoid common sequences of characters.",
    repeated: "Avoid repeated words and characters.",
    longerKeyboardPattern: "Use longer keyboard patterns and change direction several times.",
    anotherWord: "Add another word or two; uncommon words are better.",
    useWords: "Use several words, avoiding common phrases.",
    noNeed: "Strong passwords need no symbols, digits or capitals.",
    pwned: "If you use this password elsewhere, change it there too.",
  },
  timeEstimation: {
    ltSecond: "less than a second",
    second: "{base} second",
    seconds: "{base} seconds",
    minute: "{base} minute",
    minutes: "{base} minutes",
    hour: "{base} hour",
    hours: "{base} hours",
    day: "{base} day",
    days: "{base} days",
    month: "{base} month",
    months: "{base} months",
    year: "{base} year",
    years: "{base} years",
    centuries: "centuries",
  },
};

/** A hash that matches no password, checked when a user has none so that timing does not tell. */
let decoyHash: Promise<string> | undefined;
export function decoyPasswordHash(): Promise<string> {
  decoyHash ??= hashPassword(randomBytes(24).toString("base64url"));
  return decoyHash;
}

