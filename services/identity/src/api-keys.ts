import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** Every API key starts with this. */
export const apiKeyMarker = "fk-";
/** Characters of a key kept in clear text, for recognising it in lists and finding its row. */
export const apiKeyPrefixLength = 12;
/** Random bytes behind a key (43 base64url characters). */
export const apiKeyRandomBytes = 32;

/** The shape of a key: the marker and at least 43 base64url characters. */
export const apiKeyPattern = /^fk-[A-Za-z0-9_-]{43,}$/;

/** A new secret key: `fk-` followed by base64url of 32 random bytes. */
export function generateApiKey(): string {
  return apiKeyMarker + randomBytes(apiKeyRandomBytes).toString("base64url");
}

/** Whether `value` has the shape of a key; says nothing about whether the key exists. */
export function isWellFormedApiKey(value: string): boolean {
  return apiKeyPattern.test(value);
}

/** The display prefix stored beside the hash and indexed: the first 12 characters, e.g. `fk-AbCdEfGhI`. */
export function apiKeyPrefix(key: string): string {
  return key.slice(0, apiKeyPrefixLength);
}

/** SHA-256 digest of a secret (API key or session token) as 32 bytes. */
export function secretDigest(secret: string): Buffer {
  return createHash("sha256").update(secret, "utf8").digest();
}

/** SHA-256 digest of a secret as 64 lower-case hex characters: the form stored in the database. */
export function hashSecret(secret: string): string {
  return secretDigest(secret).toString("hex");
}

/**
 * Compares two digests (raw bytes, or hex strings) in constant time. Inputs of different
 * lengths, or hex strings that do not decode to whole bytes, are simply unequal.
 */
export function digestsEqual(a: Buffer | string, b: Buffer | string): boolean {
  const left = typeof a === "string" ? fromHex(a) : a;
  const right = typeof b === "string" ? fromHex(b) : b;
  if (!left || !right || left.length !== right.length || left.length === 0) return false;
  return timingSafeEqual(left, right);
}

/** Whether `key` hashes to `storedHash` (hex), compared in constant time. */
export function apiKeyMatches(key: string, storedHash: string): boolean {
  return digestsEqual(secretDigest(key), storedHash);
}

function fromHex(hex: string): Buffer | undefined {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) return undefined;
  return Buffer.from(hex, "hex");
}
