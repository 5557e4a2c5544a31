import { randomBytes } from "node:crypto";

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** A random, URL-safe, non-sequential identifier (16 characters: about 95 bits). */
export function newId(length = 16): string {
  let id = "";
  while (id.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 * 62: rejecting the top bytes keeps every character equally likely.
      if (byte < 248 && id.length < length) id += alphabet[byte % 62];
    }
  }
  return id;
}

/** A secret token of `bytes` random bytes, base64url-encoded. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}
