// The pauses of a loop that follows the outbox (the Kafka relay, the notifier): between passes it waits
// for work, and a completion of this process ends that wait at once; after a failure it backs off, and
// only stop() ends that.
import type { CompletionNotifier } from "./completion-notifier.ts";

export interface OutboxPauses {
  /** Whether the loop should go on (false once stopped). */
  readonly running: boolean;
  /** Called at the start of each pass: completions from now on end the next pause for work. */
  beginPass(): void;
  /** Waits `ms`: a pause for work ends on a completion (or at once if one came since beginPass). */
  sleep(ms: number, forWork: boolean): Promise<void>;
  /** Ends any pause and every later one at once. */
  stop(): void;
}

export function outboxPauses(completions: CompletionNotifier | undefined): OutboxPauses {
  let running = true;
  /** Set by a completion of this process: look again before sleeping. */
  let pending = true;
  let pause: { end: () => void; forWork: boolean } | undefined;
  const unsubscribe = completions?.subscribe(() => {
    pending = true;
    if (pause?.forWork) pause.end();
  });
  return {
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
    stop() {
      running = false;
      unsubscribe?.();
      pause?.end();
    },
  };
}
