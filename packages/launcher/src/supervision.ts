// The launcher's restart rule as data and one pure decision, so that the numbers can be read, changed
// and tested without starting a process.

export interface RestartPolicy {
  /** The pause before the first restart after a crash (ms); it doubles with each crash in a row. */
  initialDelayMs: number;
  /** The longest pause between restarts (ms). */
  maxDelayMs: number;
  /** A process that stayed up this long before it crashed starts the doubling afresh (ms). */
  stableAfterMs: number;
  /** This many crashes of one process within `crashLoopWindowMs` stop the whole system. */
  crashLoopCrashes: number;
  crashLoopWindowMs: number;
}

export const defaultRestartPolicy: RestartPolicy = {
  initialDelayMs: 500,
  maxDelayMs: 10_000,
  stableAfterMs: 30_000,
  crashLoopCrashes: 5,
  crashLoopWindowMs: 60_000,
};

/** What the supervisor remembers of one process's crashes. */
export interface CrashHistory {
  /** When each recent crash happened (ms, any monotonic clock), oldest first; older than the window are dropped. */
  crashes: number[];
  /** Crashes in a row without a stable run in between: the exponent of the backoff. */
  streak: number;
}

export const noCrashes: CrashHistory = { crashes: [], streak: 0 };

export type RestartDecision =
  | { action: "restart"; delayMs: number; history: CrashHistory }
  | { action: "give-up"; reason: string; history: CrashHistory };

/**
 * What to do about a process that crashed at `now` after it had run since `startedAt`: restart it after a
 * pause, or give up because it crash-loops.
 */
export function decideRestart(policy: RestartPolicy, history: CrashHistory, startedAt: number, now: number): RestartDecision {
  const crashes = [...history.crashes.filter((at) => now - at < policy.crashLoopWindowMs), now];
  const streak = now - startedAt >= policy.stableAfterMs ? 1 : history.streak + 1;
  const next = { crashes, streak };
  if (crashes.length >= policy.crashLoopCrashes) {
    return {
      action: "give-up",
      reason: `it crashed ${crashes.length} times within ${policy.crashLoopWindowMs / 1000} s`,
      history: next,
    };
  }
  const delayMs = Math.min(policy.initialDelayMs * 2 ** (streak - 1), policy.maxDelayMs);
  return { action: "restart", delayMs, history: next };
}
