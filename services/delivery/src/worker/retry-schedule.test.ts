import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defaultWebhookRetrySchedule } from "@formsvc/platform/config.ts";
import { jitterFraction, nextRetryDelay, withJitter } from "./retry-schedule.ts";

describe("retry schedule", () => {
  it("spreads every delay by +-20 %", () => {
    assert.equal(jitterFraction, 0.2);
    assert.equal(withJitter(100, () => 0), 80);
    assert.equal(withJitter(100, () => 0.5), 100);
    assert.ok(Math.abs(withJitter(100, () => 0.999999) - 120) < 1e-3);
    for (let i = 0; i < 1000; i++) {
      const d = withJitter(300);
      assert.ok(d >= 240 && d <= 360, String(d));
    }
  });

  it("actually varies (not the same instant for every delivery of an outage)", () => {
    const seen = new Set(Array.from({ length: 50 }, () => withJitter(5)));
    assert.ok(seen.size > 40);
  });

  it("walks the schedule step by step, then is used up", () => {
    const mid = () => 0.5;
    assert.deepEqual(
      defaultWebhookRetrySchedule.map((_, step) => nextRetryDelay(defaultWebhookRetrySchedule, step, mid)),
      [5, 300, 1800, 7200, 18000, 36000, 36000],
    );
    assert.equal(nextRetryDelay(defaultWebhookRetrySchedule, 7, mid), undefined);
    assert.equal(nextRetryDelay([0.1, 0.1], 2, mid), undefined);
    assert.equal(nextRetryDelay([], 0, mid), undefined);
    assert.equal(nextRetryDelay([5], -1, mid), undefined);
    const d = nextRetryDelay([0.1, 0.1], 1)!;
    assert.ok(d >= 0.08 && d <= 0.12);
  });
});
