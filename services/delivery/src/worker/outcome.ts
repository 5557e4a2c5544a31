// What one attempt's result means for its delivery, as data (spec, "Delivery attempt outcomes").
import type { SendErrorKind, SendResult } from "../sender/http-client.ts";

/** succeeded: done. failed: done, never retried. retry: tried again on schedule, failed once it is used up. */
export type Outcome = "succeeded" | "failed" | "retry";

/** Outcomes of HTTP answers by status range; any status in none of them (1xx, 5xx, odd codes) is retried. */
export const statusOutcomes: readonly { from: number; to: number; outcome: Outcome; why: string }[] = [
  { from: 200, to: 299, outcome: "succeeded", why: "the receiver took it" },
  // Redirects are not followed (a POST must not wander off to another address); the receiver has to
  // be given its final URL. Like a 4xx, a redirect answers the same way every time: not retried.
  { from: 300, to: 399, outcome: "failed", why: "redirects are not followed" },
  { from: 400, to: 499, outcome: "failed", why: "the receiver refused it" },
];

/** Outcomes when no HTTP answer came. */
export const errorOutcomes: Readonly<Record<SendErrorKind, Outcome>> = {
  timeout: "retry",
  refused: "retry",
  network: "retry",
  // The URL reaches a private address while those are not allowed, or is not usable at all: trying
  // again would end the same way.
  blocked: "failed",
  invalid: "failed",
};

export function classify(result: Pick<SendResult, "statusCode" | "errorKind">): Outcome {
  if (result.errorKind) return errorOutcomes[result.errorKind];
  const rule = statusOutcomes.find((r) => result.statusCode >= r.from && result.statusCode <= r.to);
  return rule?.outcome ?? "retry";
}

/** The last_error of a delivery after an attempt; empty after a success. */
export function describeResult(result: SendResult): string {
  if (result.error) return result.error;
  const code = result.statusCode;
  if (code >= 200 && code <= 299) return "";
  if (code >= 300 && code <= 399) return `the receiver answered ${code}; redirects are not followed`;
  return `the receiver answered ${code}`;
}
