/**
 * Sliding-window-log rate limiting: a request is admitted while fewer than `limit` requests were
 * admitted in the last `windowMs`. Unlike clock-aligned windows it never lets twice the limit
 * through around a boundary.
 */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the oldest admitted request leaves the window (a slot frees up). */
  resetMs: number;
}

export interface RateLimitStore {
  hit(key: string, limit: number, windowMs: number): Promise<RateDecision>;
  close(): Promise<void>;
}

/** One gateway's counters, in memory. */
export class MemorySlidingWindow implements RateLimitStore {
  private readonly log = new Map<string, number[]>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly now: () => number;
  private longestWindowMs = 60_000;

  constructor(now: () => number = Date.now) {
    this.now = now;
    // Forget keys whose whole log has aged out, so idle keys cost nothing.
    this.sweeper = setInterval(() => this.sweep(), 30_000).unref();
  }

  async hit(key: string, limit: number, windowMs: number): Promise<RateDecision> {
    this.longestWindowMs = Math.max(this.longestWindowMs, windowMs);
    const now = this.now();
    const times = this.log.get(key) ?? [];
    let expired = 0;
    while (expired < times.length && times[expired] <= now - windowMs) expired++;
    if (expired) times.splice(0, expired);
    if (times.length < limit) {
      times.push(now);
      this.log.set(key, times);
      return { allowed: true, limit, remaining: limit - times.length, resetMs: times[0] + windowMs - now };
    }
    return { allowed: false, limit, remaining: 0, resetMs: times[0] + windowMs - now };
  }

  private sweep(): void {
    const cutoff = this.now() - this.longestWindowMs;
    for (const [key, times] of this.log) {
      if (times.length === 0 || times[times.length - 1] <= cutoff) this.log.delete(key);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }
}
