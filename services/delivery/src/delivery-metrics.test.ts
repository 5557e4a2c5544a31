import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { metrics } from "@formsvc/platform/metrics.ts";
import { observeAttempt, watchBreakers } from "./delivery-metrics.ts";
import { OriginBreakers } from "./sender/breaker.ts";
import { classify } from "./sender/send-result.ts";

describe("delivery metrics", () => {
  it("counts attempts by outcome and trigger, the lag of an automatic success and the breakers by state", async () => {
    const breakers = new OriginBreakers();
    const unwatch = watchBreakers(breakers);
    try {
      const submittedAt = new Date(Date.now() - 1500).toISOString();
      const payload = JSON.stringify({ eventId: "e1", data: { submittedAt } });
      const verdict = await breakers.run("http://receiver.test", async () => ({ statusCode: 200, durationMs: 3, responseBody: "ok" }));
      assert.equal(verdict.kind, "sent");
      if (verdict.kind === "sent") observeAttempt(classify(verdict.result), "automatic", payload);
      observeAttempt(classify({ statusCode: 503 }), "manual", payload);
      // A success by hand is counted, but its lag (it may come days later) is not.
      observeAttempt(classify({ statusCode: 204 }), "manual", payload);

      const text = await metrics.metrics();
      assert.match(text, /delivery_attempts_total\{outcome="succeeded",trigger="automatic"[^}]*\} 1/);
      assert.match(text, /delivery_attempts_total\{outcome="retry",trigger="manual"[^}]*\} 1/);
      assert.match(text, /delivery_attempts_total\{outcome="succeeded",trigger="manual"[^}]*\} 1/);
      assert.match(text, /delivery_lag_seconds_count(\{[^}]*\})? 1/);
      // 1.5 s ago: in the 2.5 s bucket, not the 1 s one.
      assert.match(text, /delivery_lag_seconds_bucket\{le="1"[^}]*\} 0/);
      assert.match(text, /delivery_lag_seconds_bucket\{le="2.5"[^}]*\} 1/);
      assert.match(text, /delivery_breakers\{state="closed"[^}]*\} 1/);
      assert.match(text, /delivery_breakers\{state="open"[^}]*\} 0/);
    } finally {
      unwatch();
      breakers.shutdown();
    }
    assert.match(await metrics.metrics(), /delivery_breakers\{state="closed"[^}]*\} 0/);
  });
});
