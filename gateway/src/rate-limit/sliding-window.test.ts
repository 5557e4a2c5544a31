import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MemorySlidingWindow } from "./sliding-window.ts";

describe("MemorySlidingWindow", () => {
  it("admits up to the limit, then refuses with the time until a slot frees", async () => {
    let now = 1_000_000;
    const store = new MemorySlidingWindow(() => now);
    for (let i = 0; i < 3; i++) {
      const d = await store.hit("k", 3, 60_000);
      assert.equal(d.allowed, true);
      assert.equal(d.remaining, 2 - i);
      now += 1_000;
    }
    const refused = await store.hit("k", 3, 60_000);
    assert.equal(refused.allowed, false);
    assert.equal(refused.remaining, 0);
    assert.equal(refused.resetMs, 57_000);
    await store.close();
  });

  it("never lets twice the limit through around a minute boundary", async () => {
    let now = 59_000; // all at the end of one clock minute
    const store = new MemorySlidingWindow(() => now);
    let admitted = 0;
    for (let i = 0; i < 10; i++) if ((await store.hit("k", 10, 60_000)).allowed) admitted++;
    now = 61_000; // the next clock minute: a fixed window would reset here
    for (let i = 0; i < 10; i++) if ((await store.hit("k", 10, 60_000)).allowed) admitted++;
    assert.equal(admitted, 10);
    now = 119_001; // the first ten have left the sliding window
    assert.equal((await store.hit("k", 10, 60_000)).allowed, true);
    await store.close();
  });

  it("weighs hits: admits while the weights stay within the limit, and says when a refused one would fit", async () => {
    let now = 0;
    const store = new MemorySlidingWindow(() => now);
    assert.deepEqual(await store.hit("bytes", 100, 10_000, 60), { allowed: true, limit: 100, remaining: 40, resetMs: 10_000 });
    now = 1_000;
    assert.deepEqual(await store.hit("bytes", 100, 10_000, 30), { allowed: true, limit: 100, remaining: 10, resetMs: 9_000 });
    now = 2_000;
    // 50 fits once the 60 has left (at 10 s); the 30 of 1 s alone would not be enough.
    assert.deepEqual(await store.hit("bytes", 100, 10_000, 50), { allowed: false, limit: 100, remaining: 10, resetMs: 8_000 });
    // 80 needs both gone: the 30 leaves at 11 s.
    assert.equal((await store.hit("bytes", 100, 10_000, 80)).resetMs, 9_000);
    // More than the whole budget never fits: the whole window.
    assert.deepEqual(await store.hit("bytes", 100, 10_000, 101), { allowed: false, limit: 100, remaining: 10, resetMs: 10_000 });
    assert.deepEqual(await store.hit("bytes", 100, 10_000, 0), { allowed: true, limit: 100, remaining: 10, resetMs: 8_000 }, "weight 0 only looks");
    assert.equal((await store.hit("bytes", 100, 10_000, 10)).allowed, true, "exactly the limit is within it");
    now = 10_000;
    assert.deepEqual(await store.hit("bytes", 100, 10_000, 0), { allowed: true, limit: 100, remaining: 60, resetMs: 1_000 }, "the 60 has left");
    assert.deepEqual(await new MemorySlidingWindow().hit("empty", 5, 1_000, 0), { allowed: true, limit: 5, remaining: 5, resetMs: 0 });
    await store.close();
  });

  it("keeps buckets apart", async () => {
    const store = new MemorySlidingWindow();
    assert.equal((await store.hit("a", 1, 60_000)).allowed, true);
    assert.equal((await store.hit("a", 1, 60_000)).allowed, false);
    assert.equal((await store.hit("b", 1, 60_000)).allowed, true);
    await store.close();
  });
});
