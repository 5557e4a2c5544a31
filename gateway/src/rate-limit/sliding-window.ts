/**
 * Sliding-window-log rate limiting: a request is admitted while fewer than `limit` requests were
 * admitted in the last `windowMs`. Unlike clock-aligned windows it never lets twice the limit
 * through around a boundary. A hit may weigh more than one (bytes of an upload, say): it is admitted
 * while the weights admitted in the window plus its own stay within `limit`. A hit of weight 0
 * admits nothing and only tells what remains.
 */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /**
   * Admitted: milliseconds until the oldest admitted hit leaves the window (a slot frees up).
   * Refused: until enough has left for this hit to fit (the whole window if it never can).
   */
  resetMs: number;
}

export interface RateLimitStore {
  hit(key: string, limit: number, windowMs: number, weight?: number): Promise<RateDecision>;
  close(): Promise<void>;
}

/** What a key admitted in the window: times (oldest first), their weights, and the weights' sum. */
interface WindowLog {
  times: number[];
  weights: number[];
  total: number;
}

/** One gateway's counters, in memory. */
export class MemorySlidingWindow implements RateLimitStore {
  private readonly log = new Map<string, WindowLog>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly now: () => number;
  private longestWindowMs = 60_000;

  constructor(now: () => number = Date.now) {
    this.now = now;
    // Forget keys whose whole log has aged out, so idle keys cost nothing.
    this.sweeper = setInterval(() => this.sweep(), 30_000).unref();
  }

  async hit(key: string, limit: number, windowMs: number, weight = 1): Promise<RateDecision> {
    this.longestWindowMs = Math.max(this.longestWindowMs, windowMs);
    const now = this.now();
    const log = this.log.get(key) ?? { times: [], weights: [], total: 0 };
    const { times, weights } = log;
    let expired = 0;
    while (expired < times.length && times[expired] <= now - windowMs) log.total -= weights[expired++];
    if (expired) {
      times.splice(0, expired);
      weights.splice(0, expired);
    }
    if (log.total + weight <= limit) {
      if (weight > 0) {
        times.push(now);
        weights.push(weight);
        log.total += weight;
        this.log.set(key, log);
      }
      return { allowed: true, limit, remaining: limit - log.total, resetMs: times.length ? times[0] + windowMs - now : 0 };
    }
    let resetMs = windowMs;
    let left = log.total;
    for (let i = 0; i < times.length && weight <= limit; i++) {
      left -= weights[i];
      if (left + weight <= limit) {
        resetMs = times[i] + windowMs - now;
        break;
      }
    }
    return { allowed: false, limit, remaining: Math.max(0, limit - log.total), resetMs };
  }

  private sweep(): void {
    const cutoff = this.now() - this.longestWindowMs;
    for (const [key, { times }] of this.log) {
      if (times.length === 0 || times[times.length - 1] <= cutoff) this.log.delete(key);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }
}
