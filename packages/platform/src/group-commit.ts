/**
 * Group commit: writes that arrive while one is under way wait for it and go together in the next, so a burst
 * costs one statement (one round trip, one transaction, one WAL flush) per batch instead of one each, and a
 * write that comes alone waits for nothing. `write` stores a batch in one statement and returns each item's
 * result in the batch's order. When a batch of several fails, each of its items is written again alone, so one
 * bad item fails only its own caller (`splitOnFailure: false`: a write whose items cannot fail it alone, where a
 * failure is the store's, fails every item at once instead).
 */
interface Waiting<Item, Result> {
  item: Item;
  resolve(result: Result): void;
  reject(err: unknown): void;
}

export class GroupCommit<Item, Result> {
  readonly #write: (items: Item[]) => Promise<Result[]>;
  readonly #maxBatch: number;
  readonly #keyOf: ((item: Item) => string) | undefined;
  readonly #splitOnFailure: boolean;
  #waiting: Waiting<Item, Result>[] = [];
  #writing = false;

  /**
   * `keyOf`: items with the same key never share a batch (a statement that would touch one row twice);
   * the later waits for the next.
   */
  constructor(write: (items: Item[]) => Promise<Result[]>, options: { maxBatch?: number; keyOf?: (item: Item) => string; splitOnFailure?: boolean } = {}) {
    this.#write = write;
    this.#maxBatch = options.maxBatch ?? 128;
    this.#keyOf = options.keyOf;
    this.#splitOnFailure = options.splitOnFailure ?? true;
  }

  add(item: Item): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject });
      if (!this.#writing) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#writing = true;
    while (this.#waiting.length > 0) {
      const batch: Waiting<Item, Result>[] = [];
      const later: Waiting<Item, Result>[] = [];
      const keys = new Set<string>();
      for (const waiting of this.#waiting) {
        const key = this.#keyOf?.(waiting.item);
        if (batch.length >= this.#maxBatch || (key !== undefined && keys.has(key))) later.push(waiting);
        else {
          if (key !== undefined) keys.add(key);
          batch.push(waiting);
        }
      }
      this.#waiting = later;
      try {
        const results = await this.#write(batch.map((waiting) => waiting.item));
        batch.forEach((waiting, i) => waiting.resolve(results[i]));
      } catch (err) {
        if (batch.length === 1 || !this.#splitOnFailure) for (const waiting of batch) waiting.reject(err);
        else
          await Promise.all(
            batch.map((waiting) =>
              this.#write([waiting.item]).then(
                ([result]) => waiting.resolve(result),
                (alone: unknown) => waiting.reject(alone),
              ),
            ),
          );
      }
    }
    this.#writing = false;
  }
}
