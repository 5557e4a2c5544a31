import { randomBytes, randomFillSync } from "node:crypto";

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

// Random bytes drawn 4 KiB at a time and each used once, as crypto.randomUUID does: one call into OpenSSL per
// ~240 ids instead of one per id (a response, an event and a delivery each take one).
const pool = Buffer.alloc(4096);
let used = pool.length;

function randomByte(): number {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  return pool[used++];
}

/** A random, URL-safe, non-sequential identifier (16 characters: about 95 bits). */
export function newId(length = 16): string {
  let id = "";
  while (id.length < length) {
    const byte = randomByte();
    // 248 = 4 * 62: rejecting the top bytes keeps every character equally likely.
    if (byte < 248) id += alphabet[byte % 62];
  }
  return id;
}

/** A secret token of `bytes` random bytes, base64url-encoded. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}
