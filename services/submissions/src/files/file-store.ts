/**
 * Where the bytes of uploaded files live: a local directory (the embedded default) or an S3-compatible
 * bucket (`S3_*`). Everything above it (rows, attachment, deletion order, quotas) is the same whichever
 * store is used.
 *
 * Keys are opaque, URL-safe strings chosen by the caller (upload ids): letters, digits, '_' and '-'.
 */
export interface FileStore {
  /**
   * Stores `content` under `key`, replacing what was there, and settles once the bytes are durable. A
   * stream is read chunk by chunk (S3: a multipart upload), never gathered whole. `file` describes it to
   * whoever downloads it straight from the store.
   */
  put(key: string, content: Uint8Array | AsyncIterable<Uint8Array>, file?: StoredFileInfo): Promise<void>;
  /** The bytes stored under `key`, or undefined when there are none. */
  get(key: string): Promise<Uint8Array | undefined>;
  /** Removes what is stored under `key`; removing a missing key is not an error. */
  delete(key: string): Promise<void>;
  /**
   * A URL the file can be fetched from directly for `expiresInSeconds`, as an attachment of type and name
   * `file`; absent when the store serves its bytes through `get` only (the local directory).
   */
  downloadUrl?(key: string, file: StoredFileInfo, expiresInSeconds: number): Promise<string>;
}

export interface StoredFileInfo {
  name: string;
  contentType: string;
}

const storageKeyPattern = /^[A-Za-z0-9_-]{1,128}$/;

function isStorageKey(key: string): boolean {
  return storageKeyPattern.test(key);
}

/** Throws unless `key` is a valid storage key, so no key can name a path outside the store. */
export function assertStorageKey(key: string): void {
  if (!isStorageKey(key)) throw new Error(`invalid storage key ${JSON.stringify(key)}`);
}

/** `attachment; filename*=UTF-8''<name>`: a download under its own name, never shown inline. */
export function attachmentDisposition(name: string): string {
  return `attachment; filename*=UTF-8''${encodeURIComponent(name)}`;
}
