import { NoticeKeptCache, type NoticeKeptCacheOptions } from "@formsvc/platform/notice-kept-cache.ts";
import type { User as UserMessage } from "@formsvc/proto/identity/v1/identity_pb.js";

// The Postgres channel identity's triggers notify when a key, or the user a key acts as, changes or goes.
export { apiKeyChangesChannel } from "@formsvc/platform/pg-notices.ts";

/** What AuthenticateApiKey answers for a key, as last read from the database. */
export interface VerifiedApiKey {
  apiKeyId: string;
  /** The stored hash (hex), compared in constant time with the presented key's. */
  keyHash: string;
  user: UserMessage;
  lastUsedAt: Date | null;
}

/**
 * Verified API keys by the hash of the key (hex of its SHA-256), held only while this replica listens for
 * the notices that revoke them: a key's deletion, its user's deletion or change.
 */
export class ApiKeyCache {
  readonly #keys: NoticeKeptCache<VerifiedApiKey>;

  constructor(options: NoticeKeptCacheOptions = {}) {
    this.#keys = new NoticeKeptCache(options);
  }

  /** Entries held now. */
  get size(): number {
    return this.#keys.size;
  }

  /** To be read before the database read whose answer is then offered to `remember`. */
  get generation(): number {
    return this.#keys.generation;
  }

  /** The key of this hash while it is held and fresh. */
  lookup(keyHashHex: string): VerifiedApiKey | undefined {
    return this.#keys.get(keyHashHex);
  }

  /** Keeps a key read at `generation`, unless something was revoked since or nobody listens. */
  remember(key: VerifiedApiKey, generation: number): void {
    this.#keys.remember(key.keyHash, key, generation);
  }

  /** A notice from the channel: `key:<id>` or `user:<id>`. */
  revoke(notice: string): void {
    const separator = notice.indexOf(":");
    const kind = notice.slice(0, separator);
    const id = notice.slice(separator + 1);
    if (kind === "key") this.forgetKey(id);
    else if (kind === "user") this.forgetUser(id);
    // Unknown notices drop everything: a newer replica's trigger must never be ignored by an older one.
    else this.#keys.forgetAll();
  }

  forgetKey(apiKeyId: string): void {
    this.#keys.forgetWhere((key) => key.apiKeyId === apiKeyId);
  }

  forgetUser(userId: string): void {
    this.#keys.forgetWhere((key) => key.user.id === userId);
  }

  /** The notice connection listens: keys may be held from now on. */
  listening(): void {
    this.#keys.listening();
  }

  /** The notice connection is gone: nothing is held until it listens again. */
  lost(): void {
    this.#keys.lost();
  }
}
