import { getHeapStatistics, setFlagsFromString } from "node:v8";
import { performance } from "node:perf_hooks";
import { runInNewContext } from "node:vm";

// V8 keeps the young generation it grew under load (up to 3 × 16 MiB semi-spaces) and the old space's free
// pages until a memory-reducing collection, which browsers trigger on idle and Node never does. So a process
// that started, or served a burst, then went quiet, holds tens of MiB it does not use: idle, each service held
// ~85 MiB anonymous memory, ~30 of it such garbage and spare pages. This watcher runs that collection when the
// event loop has been idle for a while, no request has come for a while, and the heap has grown since the last
// one. The collection pauses the process 90-200 ms; a service answering a slow trickle of requests (a
// person clicking through the app: 3 % of its loop busy) looked idle by its loop alone and paused in the middle
// of their reads (the p99 of issue 36's insights bench), hence the quiet period since the last request too.

let lastRequestAt = -Infinity;

/** Tells the watcher that the process is serving: called for each request it receives (RPC or HTTP). */
export function noteRequest(): void {
  lastRequestAt = performance.now();
}

type Collect = (options: { type: "major"; execution: "sync"; flavor: "last-resort" }) => void;

/**
 * V8's own `gc` (the memory-reducing "last resort" flavour), taken without `--expose-gc` on the command line:
 * the flag is set only while a throwaway context is made, so no other context (a worker's, a vm's) gets `gc`.
 */
function memoryReducingCollection(): Collect {
  setFlagsFromString("--expose-gc");
  try {
    return runInNewContext("gc") as Collect;
  } finally {
    setFlagsFromString("--no-expose-gc");
  }
}

export interface IdleRelease {
  heapBeforeBytes: number;
  heapAfterBytes: number;
  ms: number;
}

export interface IdleMemoryOptions {
  /** How often the event loop's use is looked at; a window below `idleBelow` counts as idle. */
  checkEveryMs?: number;
  /** Event-loop utilisation (0–1) under which a window is idle. */
  idleBelow?: number;
  /** Growth of V8's heap since the last release that makes another worth its pause. */
  growthBytes?: number;
  /** How long no request (noteRequest) must have come before a release. */
  quietForMs?: number;
  /** The fewest milliseconds between two releases: the cost bound (one pause, 50–80 ms for a service, at most this often). */
  minGapMs?: number;
  onRelease?(release: IdleRelease): void;
}

/** The watcher's settings when none are given (a bench waits `quietForMs` plus two checks to read idle memory). */
export const idleMemoryDefaults = { checkEveryMs: 2_000, idleBelow: 0.05, quietForMs: 10_000, growthBytes: 8 * 2 ** 20, minGapMs: 30_000 } as const;

/**
 * Releases the process's spare heap when it is idle (see above). Call once, at start-up, by the process's owner
 * (before any worker exists). Returns a stop function; the timer never keeps the process alive.
 */
export function releaseMemoryWhenIdle(options: IdleMemoryOptions = {}): () => void {
  const { checkEveryMs, idleBelow, quietForMs, growthBytes, minGapMs, onRelease } = { ...idleMemoryDefaults, ...options };
  const collect = memoryReducingCollection();
  let window = performance.eventLoopUtilization();
  let heapAfterLast = 0;
  let lastAt = -Infinity;
  const timer = setInterval(() => {
    const busy = performance.eventLoopUtilization(window).utilization;
    window = performance.eventLoopUtilization();
    const heapBeforeBytes = getHeapStatistics().total_heap_size;
    const now = performance.now();
    if (busy >= idleBelow || now - lastRequestAt < quietForMs || heapBeforeBytes < heapAfterLast + growthBytes || now - lastAt < minGapMs) return;
    collect({ type: "major", execution: "sync", flavor: "last-resort" });
    lastAt = performance.now();
    heapAfterLast = getHeapStatistics().total_heap_size;
    // The collection's own pause is not the next window's work.
    window = performance.eventLoopUtilization();
    onRelease?.({ heapBeforeBytes, heapAfterBytes: heapAfterLast, ms: lastAt - now });
  }, checkEveryMs);
  timer.unref();
  return () => clearInterval(timer);
}
