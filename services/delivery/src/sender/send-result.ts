// What one send of a webhook request ended with (SendResult, as http-client.ts returns it) and what that
// means for its delivery, as data (spec, "Delivery attempt outcomes"), with the few answers Standard
// Webhooks and Svix treat on their own (statusExceptions). The sender, the breaker and the attempt all
// read results here; this module depends on none of them.

/** Why no HTTP answer came. */
export type SendErrorKind = "timeout" | "refused" | "network" | "blocked" | "invalid";

export interface SendResult {
  /** 0 when no HTTP answer came. */
  statusCode: number;
  durationMs: number;
  /** At most maxResponseBytes (http-client.ts) of the answer, as UTF-8 text. */
  responseBody: string;
  /** Set when no HTTP answer came. */
  errorKind?: SendErrorKind;
  error?: string;
  /** The answer's Retry-After header as sent (seconds or an HTTP date), for 429 and 408 (honouredRetryAfter). */
  retryAfter?: string;
}

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

/**
 * Answers with a rule of their own, looked up before the ranges: the receiver asks to be tried later
 * (429, 408: retried on the schedule, no sooner than its Retry-After), or says the endpoint is gone for
 * good (410: failed, and the webhook is disabled at once).
 */
export const statusExceptions: readonly { status: number; outcome: Outcome; honoursRetryAfter?: true; disablesWebhook?: string; why: string }[] = [
  { status: 408, outcome: "retry", honoursRetryAfter: true, why: "the receiver timed the request out and may take it later" },
  { status: 429, outcome: "retry", honoursRetryAfter: true, why: "the receiver asks to be sent less often" },
  { status: 410, outcome: "failed", disablesWebhook: "the receiver answered 410 Gone", why: "the endpoint is gone for good" },
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

const exceptionOf = (result: Pick<SendResult, "statusCode" | "errorKind">) =>
  result.errorKind ? undefined : statusExceptions.find((e) => e.status === result.statusCode);

export function classify(result: Pick<SendResult, "statusCode" | "errorKind">): Outcome {
  if (result.errorKind) return errorOutcomes[result.errorKind];
  const exception = exceptionOf(result);
  if (exception) return exception.outcome;
  const rule = statusOutcomes.find((r) => result.statusCode >= r.from && result.statusCode <= r.to);
  return rule?.outcome ?? "retry";
}

/** The disabledReason when this result disables its webhook at once (410), else undefined. */
export function disablesWebhook(result: Pick<SendResult, "statusCode" | "errorKind">): string | undefined {
  return exceptionOf(result)?.disablesWebhook;
}

/** The answer's Retry-After when its status honours one (429, 408), else undefined. */
export function honouredRetryAfter(result: Pick<SendResult, "statusCode" | "errorKind" | "retryAfter">): string | undefined {
  return exceptionOf(result)?.honoursRetryAfter ? result.retryAfter : undefined;
}

/** The last_error of a delivery after an attempt; empty after a success. */
export function describeResult(result: SendResult): string {
  if (result.error) return result.error;
  const code = result.statusCode;
  if (code >= 200 && code <= 299) return "";
  if (code >= 300 && code <= 399) return `the receiver answered ${code}; redirects are not followed`;
  return `the receiver answered ${code}`;
}
