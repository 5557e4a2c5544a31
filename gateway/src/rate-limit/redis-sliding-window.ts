import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import type { RateDecision, RateLimitStore } from "./sliding-window.ts";

// One atomic step on a sorted set of admission times. Redis's own clock is used, so every
// gateway replica sees the same window whatever its local clock says.
const slidingWindowScript = `
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count < limit then
  redis.call('ZADD', key, now, ARGV[3])
  redis.call('PEXPIRE', key, window)
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  return {1, limit - count - 1, tonumber(oldest[2]) + window - now}
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return {0, 0, tonumber(oldest[2]) + window - now}
`;

/** Counters shared by every gateway replica through Redis. */
export class RedisSlidingWindow implements RateLimitStore {
  private readonly redis: Redis;
  private readonly prefix: string;

  constructor(url: string, prefix = "formsvc:ratelimit:") {
    this.redis = new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false });
    this.prefix = prefix;
    this.redis.defineCommand("slidingWindowHit", { numberOfKeys: 1, lua: slidingWindowScript });
  }

  async hit(key: string, limit: number, windowMs: number): Promise<RateDecision> {
    const [allowed, remaining, resetMs] = (await (this.redis as any).slidingWindowHit(
      this.prefix + key,
      limit,
      windowMs,
      randomUUID(),
    )) as [number, number, number];
    return { allowed: allowed === 1, limit, remaining, resetMs };
  }

  async close(): Promise<void> {
    await this.redis.quit();
  }
}
