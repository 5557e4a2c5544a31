// The one rule for every input that reaches a service or a database: ids, free text, and the JSON that
// carries them. Postgres refuses NUL in text and both NUL and lone surrogates in jsonb, protobuf
// refuses deep nesting and integers beyond 32 bits: each would otherwise surface as a 500.
import { formatPath } from "./errors.ts";

/**
 * A record id in a path, query or body: the platform makes 16 letters and digits; 64 URL-safe
 * characters leave room for other formats without letting an id carry a payload.
 */
export const recordIdPattern = /^[A-Za-z0-9_-]{1,64}$/;

/** A list's opaque cursor as it arrives: base64url, at most 200 characters (the service decodes it). */
export const cursorPattern = /^[A-Za-z0-9_-]{1,200}$/;

/** Largest integer a page, limit or version may be: protobuf's int32. */
export const maxInt32 = 2 ** 31 - 1;

/** Nesting of a request body (objects and arrays, the body itself counted); documents need about 6. */
export const maxBodyDepth = 16;

/** Nesting of the answers of one response (the answers object counted); answers need 2. */
export const maxAnswerDepth = 8;

export function isRecordId(value: unknown): value is string {
  return typeof value === "string" && recordIdPattern.test(value);
}

// C0 controls but tab, line feed and carriage return, and DEL.
const controlCharacter = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;
// A high surrogate without its low half, or a low one without its high half (UTF-8 cannot encode either).
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why `text` cannot be stored as free text (a control character, a lone surrogate), or undefined. */
export function textProblem(text: string): string | undefined {
  if (controlCharacter.test(text)) return "must not contain control characters";
  if (loneSurrogate.test(text)) return "must be valid Unicode (no lone surrogates)";
  return undefined;
}

/**
 * Keys JSON.parse keeps as plain properties but that an object spread, a schema or a map silently drops or turns
 * into the object's prototype: a field sent under such a key would vanish with a 2xx.
 */
const prototypeKeys = new Set(["__proto__"]);

/**
 * The first problem of a parsed JSON value (or a query object) as `path: problem`, or undefined:
 * nesting deeper than `maxDepth` containers, a key `__proto__`, or a key or string that `textProblem`
 * refuses. Iterative and stops at the bound, so no input can make it recurse deeply.
 */
export function jsonInputProblem(value: unknown, root: string, maxDepth: number): string | undefined {
  const pending: { value: unknown; path: PropertyKey[]; depth: number }[] = [{ value, path: [], depth: 0 }];
  while (pending.length > 0) {
    const { value: current, path, depth } = pending.pop()!;
    if (typeof current === "string") {
      const problem = textProblem(current);
      if (problem) return `${formatPath(root, path)}: ${problem}`;
      continue;
    }
    if (current === null || typeof current !== "object") continue;
    if (depth + 1 > maxDepth) return `${formatPath(root, path)}: must not be nested deeper than ${maxDepth} levels`;
    const entries: [PropertyKey, unknown][] = Array.isArray(current) ? current.map((item, i) => [i, item]) : Object.entries(current);
    for (const [key] of entries) {
      if (typeof key !== "string") continue;
      if (prototypeKeys.has(key)) return `${formatPath(root, path)}: key ${JSON.stringify(key)} is not allowed`;
      const problem = textProblem(key);
      if (problem) return `${formatPath(root, path)}: key ${JSON.stringify(key.slice(0, 40))} ${problem}`;
    }
    // Reversed so that the first problem in document order is the one reported.
    for (let i = entries.length - 1; i >= 0; i--) pending.push({ value: entries[i][1], path: [...path, entries[i][0]], depth: depth + 1 });
  }
  return undefined;
}
