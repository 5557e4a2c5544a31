// Sealing: what a service must store and read back but nobody reading its tables may read (an idempotent
// request's answer, a TOTP secret). AES-256-GCM under a key derived from SECRET_KEY per purpose, bound to
// what the sealed bytes belong to (a sealed value moved to another row does not open).
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

export interface Sealer {
  seal(plain: Uint8Array | string, bound: string): Buffer;
  /** The plain bytes; throws when the bytes were not sealed by this sealer for `bound`. */
  open(sealed: Uint8Array, bound: string): Buffer;
}

/** A sealer for one purpose (its own derived key): "formsvc idempotency answers", "formsvc totp secrets" ... */
export function sealer(secretKey: string, purpose: string): Sealer {
  const key = Buffer.from(hkdfSync("sha256", secretKey, "", purpose, 32));
  return {
    seal(plain, bound) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv).setAAD(Buffer.from(bound));
      const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), sealed]);
    },
    open(sealed, bound) {
      const data = Buffer.from(sealed);
      const decipher = createDecipheriv("aes-256-gcm", key, data.subarray(0, 12)).setAAD(Buffer.from(bound));
      decipher.setAuthTag(data.subarray(12, 28));
      return Buffer.concat([decipher.update(data.subarray(28)), decipher.final()]);
    },
  };
}
