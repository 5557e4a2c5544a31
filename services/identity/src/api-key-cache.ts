import type { User as UserMessage } from "@formsvc/proto/identity/v1/identity_pb.js";

/** The Postgres channel identity's triggers notify when a key, or the user a key acts as, changes or goes. */
export const apiKeyChangesChannel = "identity_api_key_changes";

/** What AuthenticateApiKey answers for a key, as last read from the database. */
export interface VerifiedApiKey {
  apiKeyId: string;
  /** The stored hash (hex), compared in constant time with the presented key's. */
  keyHash: string;
  user: UserMessage;
  lastUsedAt: Date | null;
}

interface Entry extends VerifiedApiKey {
  expiresAt: number;
}

export interface ApiKeyCacheOptions {
  /** Keys kept; the least recently used goes first. */
  maxEntries?: number;
  /** A backstop: an entry is read again this long after it was read (ms), whatever the notices said. */
  ttlMs?: number;
  now?: () => number;
}

/**
 * Verified API keys by the hash of the key, held only while this replica listens for the notices that
 * revoke them: a key's deletion, its user's deletion or change. Without the notice connection nothing is
 * held and every call reads the database, so a notice missed while disconnected cannot keep a key alive.
 */
export class ApiKeyCache {
  readonly #maxEntries: number;
  readonly #ttlMs: number;
  readonly #now: () => number;
  /** In least-recently-used order (a Map keeps insertion order; a hit is re-inserted). */
  readonly #entries = new Map<string, Entry>();
  #listening = false;
  /**
   * Moves on every revocation and every loss of the notice connection: a database read that began under
   * an earlier generation may have seen a key revoked since, and is not kept.
   */
  #generation = 0;

  constructor(options: ApiKeyCacheOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 10_000;
    this.#ttlMs = options.ttlMs ?? 5 * 60 * 1000;
    this.#now = options.now ?? Date.now;
  }

  /** Entries held now. */
  get size(): number {
    return this.#entries.size;
  }

  /** To be read before the database read whose answer is then offered to `remember`. */
  get generation(): number {
    return this.#generation;
  }

  /** The key of this hash (hex of its SHA-256) while it is held and fresh. */
  lookup(keyHashHex: string): VerifiedApiKey | undefined {
    const entry = this.#entries.get(keyHashHex);
    if (!entry) return undefined;
    this.#entries.delete(keyHashHex);
    if (entry.expiresAt <= this.#now()) return undefined;
    this.#entries.set(keyHashHex, entry);
    return entry;
  }

  /** Keeps a key read at `generation`, unless something was revoked since or nobody listens. */
  remember(key: VerifiedApiKey, generation: number): void {
    if (!this.#listening || generation !== this.#generation) return;
    this.#entries.delete(key.keyHash);
    this.#entries.set(key.keyHash, { ...key, expiresAt: this.#now() + this.#ttlMs });
    if (this.#entries.size > this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
  }

  /** A notice from the channel: `key:<id>` or `user:<id>`. */
  revoke(notice: string): void {
    const separator = notice.indexOf(":");
    const kind = notice.slice(0, separator);
    const id = notice.slice(separator + 1);
    if (kind === "key") this.forgetKey(id);
    else if (kind === "user") this.forgetUser(id);
    // Unknown notices drop everything: a newer replica's trigger must never be ignored by an older one.
    else this.#forgetAll();
  }

  forgetKey(apiKeyId: string): void {
    this.#forget((entry) => entry.apiKeyId === apiKeyId);
  }

  forgetUser(userId: string): void {
    this.#forget((entry) => entry.user.id === userId);
  }

  /** The notice connection listens: keys may be held from now on. */
  listening(): void {
    this.#generation++;
    this.#listening = true;
  }

  /** The notice connection is gone: notices may be missed, so nothing is held until it listens again. */
  lost(): void {
    this.#listening = false;
    this.#forgetAll();
  }

  #forgetAll(): void {
    this.#generation++;
    this.#entries.clear();
  }

  #forget(matches: (entry: Entry) => boolean): void {
    this.#generation++;
    for (const [hash, entry] of this.#entries) if (matches(entry)) this.#entries.delete(hash);
  }
}
