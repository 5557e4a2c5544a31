/**
 * Outbox rows of this process, as they commit (completions, partial saves' events, forwarded form events):
 * what wakes an idle StreamCompletions and the Kafka relay at once instead of at their next poll (rows of
 * other replicas are only found by polling).
 */
export interface CompletionNotifier {
  /** An outbox row has committed. Synchronous and cheap: listeners only set flags. */
  notify(): void;
  /** Calls `listener` on every completion until the returned function is called. */
  subscribe(listener: () => void): () => void;
}

export function createCompletionNotifier(): CompletionNotifier {
  const listeners = new Set<() => void>();
  return {
    notify() {
      for (const listener of [...listeners]) {
        try {
          listener();
        } catch {
          // A listener must never fail the completion that told it.
        }
      }
    },
    subscribe(listener) {
      const entry = () => listener();
      listeners.add(entry);
      return () => void listeners.delete(entry);
    },
  };
}
