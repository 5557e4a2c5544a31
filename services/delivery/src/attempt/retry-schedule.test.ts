import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { jitterFraction, retryAfterSeconds, withJitter } from "./retry-schedule.ts";

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

  it("reads Retry-After as seconds or an HTTP date, capped at the schedule's longest step", () => {
    const schedule = [5, 300, 36000];
    const now = new Date("2026-12-01T10:00:00Z");
    assert.equal(retryAfterSeconds("2", schedule, now), 2);
    assert.equal(retryAfterSeconds(" 120 ", schedule, now), 120);
    assert.equal(retryAfterSeconds("Tue, 01 Dec 2026 10:01:30 GMT", schedule, now), 90);
    assert.equal(retryAfterSeconds("999999", schedule, now), 36000, "capped");
    assert.equal(retryAfterSeconds("Wed, 01 Dec 2027 10:00:00 GMT", schedule, now), 36000, "capped");
    for (const unusable of [undefined, "", "soon", "-5", "1.5", "0", "Tue, 01 Dec 2026 09:00:00 GMT", "2026-12-01"]) {
      assert.equal(retryAfterSeconds(unusable, schedule, now), 0, String(unusable));
    }
  });

  it("actually varies (not the same instant for every delivery of an outage)", () => {
    const seen = new Set(Array.from({ length: 50 }, () => withJitter(5)));
    assert.ok(seen.size > 40);
  });
});
