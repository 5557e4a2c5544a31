// Small random identifiers, on the Web Crypto API so the package also runs in a browser.
const alnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const lowerAlnum = "0123456789abcdefghijklmnopqrstuvwxyz";

function randomString(alphabet: string, length: number): string {
  // Rejection sampling keeps every character equally likely.
  const limit = 256 - (256 % alphabet.length);
  let out = "";
  while (out.length < length) {
    for (const byte of globalThis.crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < limit && out.length < length) out += alphabet[byte % alphabet.length];
    }
  }
  return out;
}

/** A random, URL-safe id for a block or an option (16 characters, like the platform's `newId`). */
export function randomId(): string {
  return randomString(alnum, 16);
}

/** A generated question key: `q_` and 8 lowercase letters or digits. */
export function randomKey(): string {
  return `q_${randomString(lowerAlnum, 8)}`;
}
