import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { jitterFraction, withJitter } from "./retry-schedule.ts";

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
});
