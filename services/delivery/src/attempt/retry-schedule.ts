// When a delivery is tried again after a retryable failure (record.ts applies it, step by step, in SQL).
// The schedule is data: WEBHOOK_RETRY_SCHEDULE,
// seconds between attempts after the first one (default 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h:
// eight attempts in about 27.5 hours), each delay spread by +-20 % so that the deliveries of one
// outage do not all come back at the same instant.

/** The spread of every delay: a delay d waits between d * 0.8 and d * 1.2. */
export const jitterFraction = 0.2;

/** `seconds` spread by +-20 %; `random` in [0, 1). */
export function withJitter(seconds: number, random: () => number = Math.random): number {
  return seconds * (1 - jitterFraction + 2 * jitterFraction * random());
}

/**
 * The least wait a receiver's `Retry-After` asks for (delta-seconds or an HTTP date, RFC 9110 10.2.3),
 * capped at the schedule's longest step so a receiver cannot park a delivery for ever; 0 when absent
 * or unreadable (the schedule alone decides then).
 */
export function retryAfterSeconds(retryAfter: string | undefined, schedule: readonly number[], now: Date = new Date()): number {
  const raw = retryAfter?.trim();
  if (!raw) return 0;
  // An HTTP date ends in GMT; anything else Date.parse might guess at is not one.
  const seconds = /^\d+$/.test(raw) ? Number(raw) : /GMT$/i.test(raw) ? (Date.parse(raw) - now.getTime()) / 1000 : NaN;
  if (!Number.isFinite(seconds) || seconds <= 0) return 0;
  return Math.min(seconds, Math.max(0, ...schedule));
}
