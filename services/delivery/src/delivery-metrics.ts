// Delivery's domain metrics, on the process's shared registry (served at /metrics).
import { Counter, Gauge, Histogram, metrics } from "@formsvc/platform/metrics.ts";
import type { OriginBreakers } from "./sender/breaker.ts";
import type { Outcome } from "./sender/send-result.ts";

/**
 * Attempts by outcome (succeeded, failed: not retried, retry: retried on schedule) and by trigger
 * (automatic: the worker; manual: a retry asked for through the API; test: a test event).
 */
export const deliveryAttempts = new Counter({
  name: "delivery_attempts_total",
  help: "Webhook delivery attempts, by outcome and trigger",
  labelNames: ["outcome", "trigger"] as const,
  registers: [metrics],
});

export type AttemptTrigger = "automatic" | "manual" | "test";

/** From the response's submittedAt to the receiver's 2xx answer. */
const deliveryLag = new Histogram({
  name: "delivery_lag_seconds",
  help: "Time from a response's submission to its webhook's 2xx answer",
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 36000],
  registers: [metrics],
});

const watched = new Set<OriginBreakers>();
const breakerStates = ["closed", "open", "half_open"] as const;

new Gauge({
  name: "delivery_breakers",
  help: "Receiver-origin circuit breakers of this process, by state",
  labelNames: ["state"] as const,
  registers: [metrics],
  collect() {
    const counts = { closed: 0, open: 0, half_open: 0 };
    for (const breakers of watched) {
      const states = breakers.states();
      for (const state of breakerStates) counts[state] += states[state];
    }
    for (const state of breakerStates) this.set({ state }, counts[state]);
  },
});

/** Counts `breakers` in the `delivery_breakers` gauge until the returned function is called. */
export function watchBreakers(breakers: OriginBreakers): () => void {
  watched.add(breakers);
  return () => watched.delete(breakers);
}

/**
 * Records one attempt's outcome and, for an automatic success, the lag from the payload's submittedAt
 * (an attempt by hand may come days later: its lag says nothing about the pipeline).
 */
export function observeAttempt(outcome: Outcome, trigger: AttemptTrigger, payload: string, now = Date.now()): void {
  deliveryAttempts.inc({ outcome, trigger });
  if (outcome !== "succeeded" || trigger !== "automatic") return;
  try {
    const submittedAt = Date.parse((JSON.parse(payload) as { data?: { submittedAt?: string } }).data?.submittedAt ?? "");
    if (Number.isFinite(submittedAt)) deliveryLag.observe(Math.max(0, (now - submittedAt) / 1000));
  } catch {
    // A payload that is not the spec's JSON has no lag to tell.
  }
}
