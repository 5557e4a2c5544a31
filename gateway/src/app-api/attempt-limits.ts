// Limits on sign-in and sign-up attempts, as data, over the gateway's sliding-window store (in memory
// or Redis). Sign-in is limited per (address, email) pair, so someone guessing from their own address
// runs out of attempts without locking the owner out; a slower per-email ceiling bounds guessing spread
// over many addresses, and a per-address limit bounds one address trying many emails.
import { HttpError } from "../http-errors.ts";
import type { RateLimitStore } from "../rate-limit/sliding-window.ts";

export interface Attempt {
  /** The client's address. */
  address: string;
  /** The email tried, lower-cased ("" for limits that do not look at it). */
  email: string;
}

export interface AttemptLimit {
  /** Names the counter in the store. */
  scope: string;
  limit: number;
  windowMs: number;
  /** The counter an attempt counts in. */
  bucket(attempt: Attempt): string;
}

const minute = 60_000;
const hour = 60 * minute;

/**
 * Checked in this order, and an attempt refused by one is not counted by the later ones: the pair's
 * limits come before the email's, so one address (limited to 30 an hour per email) can never fill the
 * email's ceiling of 100 an hour alone; locking the owner out takes guesses from four addresses or more.
 */
export const signInLimits: AttemptLimit[] = [
  { scope: "signin-pair", limit: 10, windowMs: minute, bucket: (a) => `${a.address}|${a.email}` },
  { scope: "signin-pair-hourly", limit: 30, windowMs: hour, bucket: (a) => `${a.address}|${a.email}` },
  { scope: "signin-address", limit: 30, windowMs: minute, bucket: (a) => a.address },
  { scope: "signin-email", limit: 100, windowMs: hour, bucket: (a) => a.email },
];

export const signUpLimits: AttemptLimit[] = [{ scope: "signup-address", limit: 10, windowMs: minute, bucket: (a) => a.address }];

/**
 * Asking for a password-reset mail: a few an hour per address and email, so nobody can flood someone's inbox,
 * and per address, so one client cannot walk a list of emails. The email's own ceiling is high (20 an hour):
 * at 5 from anywhere, a stranger's five requests locked the owner out of their own reset for an hour; now that
 * takes requests from seven addresses. Using a mailed link counts like a sign-up.
 */
export const passwordResetLimits: AttemptLimit[] = [
  { scope: "reset-address", limit: 10, windowMs: minute, bucket: (a) => a.address },
  { scope: "reset-pair", limit: 3, windowMs: hour, bucket: (a) => `${a.address}|${a.email}` },
  { scope: "reset-email", limit: 20, windowMs: hour, bucket: (a) => a.email },
];

/** Counts an attempt against each limit in turn; the first one full refuses it: 429 with Retry-After. */
export async function admitAttempt(store: RateLimitStore, limits: AttemptLimit[], attempt: Attempt): Promise<void> {
  for (const { scope, limit, windowMs, bucket } of limits) {
    const decision = await store.hit(`${scope}:${bucket(attempt)}`, limit, windowMs);
    if (decision.allowed) continue;
    const seconds = Math.max(1, Math.ceil(decision.resetMs / 1000));
    const wait = seconds <= 60 ? "a minute" : `${Math.ceil(seconds / 60)} minutes`;
    throw new HttpError(429, `too many attempts: wait ${wait} and try again`, { "Retry-After": String(seconds) });
  }
}
