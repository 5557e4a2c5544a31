// The loops that follow the outbox (StreamCompletions, the Kafka relay, the notifier, the response count pusher) and their
// pauses: between passes each waits for work, and a completion of this process ends that wait at once;
// after a failure it backs off, and only stop() ends that.
import type { CompletionNotifier } from "./completion-notifier.ts";

/**
 * What a pass of the outbox found after its rows: more at once; nothing more yet; or committed rows an older
 * transaction still running holds back (its end wakes nobody here: it may be another service's).
 */
export type OutboxRead = "more" | "caught up" | "held back";

export interface OutboxPauses {
  /** Whether the loop should go on (false once stopped). */
  readonly running: boolean;
  /** Called at the start of each pass: completions from now on end the next pause for work. */
  beginPass(): void;
  /** Waits `ms`: a pause for work ends on a completion (or at once if one came since beginPass). */
  sleep(ms: number, forWork: boolean): Promise<void>;
  /**
   * The pause for work after a pass: none after "more", `pollMs` after "caught up", and after "held back" 10 ms,
   * doubling with each pass in a row that finds rows still held (a long transaction), up to `pollMs`.
   */
  afterPass(read: OutboxRead, pollMs: number): Promise<void>;
  /**
   * After a pass woken by work that found `count` rows of at most `batch`: when that was a small batch (under a
   * quarter), `lingerMs` for more to commit (as a producer's linger.ms), so that under load a pass (a query,
   * a send, an update) carries tens of rows rather than one or two. Stop ends it.
   */
  linger(count: number, batch: number): Promise<void>;
  /** Ends any pause and every later one at once. */
  stop(): void;
}

/** How long a pass after a small batch waits for more (`linger`): 5 ms of lag against a goal of 250 (Kafka). */
export const lingerMs = 5;

export function outboxPauses(completions: CompletionNotifier | undefined): OutboxPauses {
  let running = true;
  /** Set by a completion of this process: look again before sleeping. */
  let pending = true;
  let pause: { end: () => void; forWork: boolean } | undefined;
  let heldInARow = 0;
  const unsubscribe = completions?.subscribe(() => {
    pending = true;
    if (pause?.forWork) pause.end();
  });
  const pauses: OutboxPauses = {
    get running() {
      return running;
    },
    beginPass() {
      pending = false;
    },
    sleep: (ms, forWork) =>
      new Promise<void>((resolve) => {
        if (!running || (forWork && pending)) return resolve();
        const end = () => {
          clearTimeout(timer);
          pause = undefined;
          resolve();
        };
        const timer = setTimeout(end, ms);
        pause = { end, forWork };
      }),
    afterPass(read, pollMs) {
      heldInARow = read === "held back" ? heldInARow + 1 : 0;
      if (read === "more") return Promise.resolve();
      return pauses.sleep(read === "held back" ? Math.min(10 * 2 ** Math.min(heldInARow - 1, 16), pollMs) : pollMs, true);
    },
    linger(count, batch) {
      return count > 0 && count < batch / 4 ? pauses.sleep(lingerMs, false) : Promise.resolve();
    },
    stop() {
      running = false;
      unsubscribe?.();
      pause?.end();
    },
  };
  return pauses;
}

/**
 * The loop of an outbox follower: `turn` over and over (it pauses for work itself) until stopped. After a
 * failure, `failed` hears of it (to log it, or to reset a client) and the loop pauses `retryInMs`, which
 * doubles from `minMs` with each failure in a row up to `maxMs`; a turn that succeeds starts it over.
 * `turn` is told how many turns had failed in a row before it (to log a recovery).
 */
export async function followOutbox(
  pauses: OutboxPauses,
  backoff: { minMs: number; maxMs: number },
  turn: (failuresBefore: number) => Promise<void>,
  failed: (err: unknown, retry: { failures: number; retryInMs: number }) => void | Promise<void>,
): Promise<void> {
  let failures = 0;
  while (pauses.running) {
    pauses.beginPass();
    try {
      await turn(failures);
      failures = 0;
    } catch (err) {
      if (!pauses.running) break;
      failures++;
      const retryInMs = Math.min(backoff.minMs * 2 ** Math.min(failures - 1, 30), backoff.maxMs);
      await failed(err, { failures, retryInMs });
      await pauses.sleep(retryInMs, false);
    }
  }
}
