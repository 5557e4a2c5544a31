/**
 * Where the bytes of uploaded files live. The local directory is the embedded default; an S3 adapter
 * (presigned links, `S3_*` configuration) implements the same interface at scale. Everything above it
 * (rows, attachment, deletion order) is the same whichever store is used.
 *
 * Keys are opaque, URL-safe strings chosen by the caller (upload ids): letters, digits, '_' and '-'.
 */
export interface FileStore {
  /** Stores `content` under `key`, replacing what was there. Settles once the bytes are durable. */
  put(key: string, content: Uint8Array): Promise<void>;
  /** The bytes stored under `key`, or undefined when there are none. */
  get(key: string): Promise<Uint8Array | undefined>;
  /** Removes what is stored under `key`; removing a missing key is not an error. */
  delete(key: string): Promise<void>;
}

const storageKeyPattern = /^[A-Za-z0-9_-]{1,128}$/;

function isStorageKey(key: string): boolean {
  return storageKeyPattern.test(key);
}

/** Throws unless `key` is a valid storage key, so no key can name a path outside the store. */
export function assertStorageKey(key: string): void {
  if (!isStorageKey(key)) throw new Error(`invalid storage key ${JSON.stringify(key)}`);
}
