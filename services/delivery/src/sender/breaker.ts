// One opossum circuit breaker per receiver origin (scheme://host:port), so a receiver that is down is
// left alone for a while instead of being hammered by every due delivery, and a healthy one is never
// held back by it.
//
// - It opens once its rolling window (60 s) holds at least 10 calls and more than 50 % of them failed
//   (opossum compares `failures / calls * 100 > errorThresholdPercentage`; calls still in flight
//   count as calls). Only retryable results (5xx, time-out, refused, network) are failures: a 4xx,
//   3xx or a refused address means the receiver, or its URL, answered, and is filtered out by
//   `errorFilter`.
// - While open (resetTimeout, 30 s) nothing is sent to that origin: the worker pushes those deliveries
//   back to the moment it half-opens, without counting an attempt. Half-open lets one call through:
//   success closes it, failure opens it again for another resetTimeout.
// - Breakers with no call for 10 minutes are dropped (their state is forgotten with them).
// Each delivery process has its own breakers.
import CircuitBreaker from "opossum";
import type { Logger } from "@formsvc/platform/logger.ts";
import { classify, type Outcome, type SendResult } from "./send-result.ts";

export interface BreakerOptions {
  volumeThreshold?: number;
  errorThresholdPercentage?: number;
  /** How long a breaker stays open before letting one call through. */
  resetTimeoutMs?: number;
  rollingWindowMs?: number;
  /** A breaker unused for this long is dropped. */
  idleMs?: number;
  /** How long deliveries wait while a half-open breaker's one call is still in flight. */
  probeWaitMs?: number;
  now?: () => number;
  logger?: Logger;
}

const defaultBreakerOptions = {
  volumeThreshold: 10,
  errorThresholdPercentage: 50,
  resetTimeoutMs: 30_000,
  rollingWindowMs: 60_000,
  idleMs: 10 * 60_000,
  probeWaitMs: 1_000,
} as const;

/** A result that is not a success, carried through opossum as a rejection. */
class ReceiverFailure extends Error {
  readonly result: SendResult;
  readonly outcome: Outcome;
  constructor(result: SendResult, outcome: Outcome) {
    super(`receiver failure (${outcome})`);
    this.result = result;
    this.outcome = outcome;
  }
}

type Send = () => Promise<SendResult>;

interface Entry {
  breaker: CircuitBreaker<[Send], SendResult>;
  openedAt: number;
  lastUsedAt: number;
}

/** What became of a call: sent (whatever the answer), or not sent because the origin's breaker is open. */
export type BreakerVerdict = { kind: "sent"; result: SendResult } | { kind: "open"; retryAt: Date };

/** The origin a URL's requests go to ("invalid" when it has none: such requests fail before connecting). */
export function originOf(url: string): string {
  try {
    const origin = new URL(url).origin;
    return origin === "null" ? "invalid" : origin;
  } catch {
    return "invalid";
  }
}

export class OriginBreakers {
  private readonly entries = new Map<string, Entry>();
  private readonly options: Required<Omit<BreakerOptions, "logger">>;
  private readonly logger: Logger | undefined;
  private lastSweep = 0;

  constructor(options: BreakerOptions = {}) {
    this.options = { ...defaultBreakerOptions, now: Date.now, ...stripUndefined(options) } as Required<Omit<BreakerOptions, "logger">>;
    this.logger = options.logger;
  }

  /** Breakers currently kept. */
  get size(): number {
    return this.entries.size;
  }

  /** How many breakers are in each state, for metrics. */
  states(): { closed: number; open: number; half_open: number } {
    const counts = { closed: 0, open: 0, half_open: 0 };
    for (const { breaker } of this.entries.values()) {
      if (breaker.opened) counts.open++;
      else if (breaker.halfOpen) counts.half_open++;
      else counts.closed++;
    }
    return counts;
  }

  /** When the origin's breaker lets a call through again; undefined when it does now. */
  blockedUntil(origin: string): Date | undefined {
    const entry = this.entries.get(origin);
    if (!entry) return undefined;
    const now = this.options.now();
    if (entry.breaker.opened) return new Date(Math.max(entry.openedAt + this.options.resetTimeoutMs, now));
    // Half-open and its one call already taken.
    if (entry.breaker.halfOpen && !entry.breaker.pendingClose) return new Date(now + this.options.probeWaitMs);
    return undefined;
  }

  /** Sends through the origin's breaker, unless it is open. */
  async run(origin: string, send: Send): Promise<BreakerVerdict> {
    this.sweep();
    const entry = this.entry(origin);
    entry.lastUsedAt = this.options.now();
    const until = this.blockedUntil(origin);
    if (until) return { kind: "open", retryAt: until };
    try {
      return { kind: "sent", result: await entry.breaker.fire(send) };
    } catch (err) {
      if (err instanceof ReceiverFailure) return { kind: "sent", result: err.result };
      if ((err as NodeJS.ErrnoException).code === "EOPENBREAKER") {
        return { kind: "open", retryAt: this.blockedUntil(origin) ?? new Date(this.options.now() + this.options.probeWaitMs) };
      }
      throw err;
    }
  }

  /** Drops breakers unused for idleMs (at most once a minute). */
  sweep(): void {
    const now = this.options.now();
    if (now - this.lastSweep < Math.min(60_000, this.options.idleMs)) return;
    this.lastSweep = now;
    for (const [origin, entry] of this.entries) {
      if (now - entry.lastUsedAt >= this.options.idleMs) {
        entry.breaker.shutdown();
        this.entries.delete(origin);
      }
    }
  }

  /** Stops every breaker (their timers) and forgets them. */
  shutdown(): void {
    for (const entry of this.entries.values()) entry.breaker.shutdown();
    this.entries.clear();
  }

  private entry(origin: string): Entry {
    let entry = this.entries.get(origin);
    if (entry) return entry;
    const breaker = new CircuitBreaker<[Send], SendResult>(
      async (send: Send) => {
        const result = await send();
        const outcome = classify(result);
        if (outcome !== "succeeded") throw new ReceiverFailure(result, outcome);
        return result;
      },
      {
        name: origin,
        // The HTTP client enforces the 10 s limit itself.
        timeout: false,
        volumeThreshold: this.options.volumeThreshold,
        errorThresholdPercentage: this.options.errorThresholdPercentage,
        resetTimeout: this.options.resetTimeoutMs,
        rollingCountTimeout: this.options.rollingWindowMs,
        rollingCountBuckets: 6,
        // Only retryable results count as failures.
        errorFilter: (err: unknown) => err instanceof ReceiverFailure && err.outcome !== "retry",
      },
    );
    const created: Entry = { breaker, openedAt: 0, lastUsedAt: this.options.now() };
    breaker.on("open", () => {
      created.openedAt = this.options.now();
      this.logger?.warn({ origin, resetTimeoutMs: this.options.resetTimeoutMs }, "receiver failing: breaker open");
    });
    breaker.on("close", () => this.logger?.info({ origin }, "receiver recovered: breaker closed"));
    this.entries.set(origin, created);
    entry = created;
    return entry;
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
