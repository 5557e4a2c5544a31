export interface NoticeKeptCacheOptions {
  /** Entries kept; the least recently used goes first. */
  maxEntries?: number;
  /** A backstop: an entry is read again this long after it was read (ms), whatever the notices said. */
  ttlMs?: number;
  now?: () => number;
}

interface Entry<V> {
  value: V;
  expiresAt: number;
}

/**
 * Values read from the database (or from the service that owns them), held only while this replica
 * listens for the Postgres notices that invalidate them (see `listenForNotices`). Without the notice
 * connection nothing is held and every caller reads again, so a notice missed while disconnected can never
 * keep a stale value alive. A read that began before an invalidation is not kept either (`generation`).
 */
export class NoticeKeptCache<V> {
  readonly #maxEntries: number;
  readonly #ttlMs: number;
  readonly #now: () => number;
  /** In least-recently-used order (a Map keeps insertion order; a hit is re-inserted). */
  readonly #entries = new Map<string, Entry<V>>();
  #listening = false;
  /** Moves on every invalidation and every loss of the notice connection. */
  #generation = 0;

  constructor(options: NoticeKeptCacheOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 10_000;
    this.#ttlMs = options.ttlMs ?? 5 * 60 * 1000;
    this.#now = options.now ?? Date.now;
  }

  /** Entries held now. */
  get size(): number {
    return this.#entries.size;
  }

  /** To be read before the read whose answer is then offered to `remember`. */
  get generation(): number {
    return this.#generation;
  }

  /** The value under `key` while it is held and fresh. */
  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    if (entry.expiresAt <= this.#now()) return undefined;
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** Keeps a value read at `generation`, unless something was invalidated since or nobody listens. */
  remember(key: string, value: V, generation: number): void {
    if (!this.#listening || generation !== this.#generation) return;
    this.#entries.delete(key);
    this.#entries.set(key, { value, expiresAt: this.#now() + this.#ttlMs });
    if (this.#entries.size > this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
  }

  /**
   * The value under `key`: the held one (unless `fresh`), else what `load` reads (from the database or the
   * owning service), kept when it is not undefined and nothing was invalidated while it was read.
   */
  async read(key: string, load: () => Promise<V | undefined>, options: { fresh?: boolean } = {}): Promise<V | undefined> {
    const held = options.fresh ? undefined : this.get(key);
    if (held !== undefined) return held;
    const generation = this.#generation;
    const value = await load();
    if (value !== undefined) this.remember(key, value, generation);
    return value;
  }

  forget(key: string): void {
    this.#generation++;
    this.#entries.delete(key);
  }

  forgetWhere(matches: (value: V) => boolean): void {
    this.#generation++;
    for (const [key, entry] of this.#entries) if (matches(entry.value)) this.#entries.delete(key);
  }

  forgetAll(): void {
    this.#generation++;
    this.#entries.clear();
  }

  /** The notice connection listens: values may be held from now on. */
  listening(): void {
    this.#generation++;
    this.#listening = true;
  }

  /** The notice connection is gone: notices may be missed, so nothing is held until it listens again. */
  lost(): void {
    this.#listening = false;
    this.forgetAll();
  }
}
