import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import type { RateDecision, RateLimitStore } from "./sliding-window.ts";

// One atomic step on a sorted set of admission times (members "<unique id>:<weight>"; a member
// without a weight weighs 1) and a running sum of the weights beside it, kept for as long as the set
// lives. Redis's own clock is used, so every gateway replica sees the same window whatever its local
// clock says. See sliding-window.ts for what a weighted hit means.
const slidingWindowScript = `
local key, sumKey = KEYS[1], KEYS[2]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local weight = tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function weightOf(member)
  local w = string.match(member, ':(%d+)$')
  return w and tonumber(w) or 1
end
local total = tonumber(redis.call('GET', sumKey))
if total then
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', key, '-inf', now - window)) do total = total - weightOf(member) end
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
else
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  total = 0
  for _, member in ipairs(redis.call('ZRANGE', key, 0, -1)) do total = total + weightOf(member) end
end
local allowed = total + weight <= limit
if allowed and weight > 0 then
  redis.call('ZADD', key, now, ARGV[3] .. ':' .. weight)
  redis.call('PEXPIRE', key, window)
  total = total + weight
end
local ttl = redis.call('PTTL', key)
if ttl > 0 then redis.call('SET', sumKey, total, 'PX', ttl) else redis.call('DEL', sumKey) end
local remaining = math.max(0, limit - total)
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
if allowed then
  return {1, remaining, oldest[2] and (tonumber(oldest[2]) + window - now) or 0}
end
if weight <= limit then
  local left = total
  local members = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
  for i = 1, #members, 2 do
    left = left - weightOf(members[i])
    if left + weight <= limit then return {0, remaining, tonumber(members[i + 1]) + window - now} end
  end
end
return {0, remaining, window}
`;

/** Counters shared by every gateway replica through Redis. */
export class RedisSlidingWindow implements RateLimitStore {
  private readonly redis: Redis;
  private readonly prefix: string;

  constructor(url: string, prefix = "formsvc:ratelimit:") {
    this.redis = new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false });
    this.prefix = prefix;
    this.redis.defineCommand("slidingWindowHit", { numberOfKeys: 2, lua: slidingWindowScript });
  }

  async hit(key: string, limit: number, windowMs: number, weight = 1): Promise<RateDecision> {
    // One hash tag for both keys, so a Redis Cluster keeps them on one node.
    const base = `${this.prefix}{${key}}`;
    const [allowed, remaining, resetMs] = (await (this.redis as any).slidingWindowHit(
      base,
      `${base}:sum`,
      limit,
      windowMs,
      randomUUID(),
      Math.max(0, Math.round(weight)),
    )) as [number, number, number];
    return { allowed: allowed === 1, limit, remaining, resetMs };
  }

  async close(): Promise<void> {
    await this.redis.quit();
  }
}
