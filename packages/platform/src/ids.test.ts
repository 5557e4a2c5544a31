import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { newId } from "./ids.ts";

describe("newId", () => {
  it("gives distinct 16-character URL-safe ids, drawing each character equally often, past many refills of its random pool", () => {
    const ids = Array.from({ length: 50_000 }, () => newId());
    assert.equal(new Set(ids).size, ids.length);
    const counts = new Map<string, number>();
    for (const id of ids) {
      assert.match(id, /^[0-9A-Za-z]{16}$/);
      for (const c of id) counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    assert.equal(counts.size, 62);
    // 800,000 characters over 62: about 12,903 each (σ ≈ 0.9 %); byte % 62 without the rejection would give
    // eight of them 25 % more.
    for (const [c, n] of counts) assert.ok(Math.abs(n / 12_903 - 1) < 0.05, `${c}: ${n}`);
  });

  it("gives ids of the length asked for", () => {
    assert.equal(newId(40).length, 40);
    assert.equal(newId(1).length, 1);
  });
});
