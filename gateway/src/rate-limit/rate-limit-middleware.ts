import type { RequestHandler, Response } from "express";
import { HttpError } from "../http-errors.ts";
import type { RateDecision, RateLimitStore } from "./sliding-window.ts";

const windowMs = 60_000;

function setHeaders(res: Response, d: RateDecision): void {
  // The tighter of the two limits (address, key) is what the client sees.
  const shown = res.locals.rateLimit as RateDecision | undefined;
  if (shown && shown.remaining <= d.remaining && d.allowed) return;
  res.locals.rateLimit = d;
  res.setHeader("RateLimit-Limit", String(d.limit));
  res.setHeader("RateLimit-Remaining", String(d.remaining));
  res.setHeader("RateLimit-Reset", String(Math.max(0, Math.ceil(d.resetMs / 1000))));
  res.setHeader("RateLimit-Policy", `${d.limit};w=${windowMs / 1000}`);
}

/**
 * Admits a request if its bucket has room in the last minute; otherwise 429 with Retry-After in
 * whole seconds. `bucketOf` names the bucket (client address or API key id).
 */
export function rateLimit(
  store: RateLimitStore,
  scope: string,
  limit: number,
  bucketOf: (res: Response, req: Parameters<RequestHandler>[0]) => string,
): RequestHandler {
  return async (req, res, next) => {
    const decision = await store.hit(`${scope}:${bucketOf(res, req)}`, limit, windowMs);
    setHeaders(res, decision);
    if (decision.allowed) return next();
    const retryAfter = String(Math.max(1, Math.ceil(decision.resetMs / 1000)));
    next(new HttpError(429, `rate limit of ${limit} requests a minute per ${scope} exceeded`, { "Retry-After": retryAfter }));
  };
}
