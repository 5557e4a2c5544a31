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

  it("keeps buckets apart", async () => {
    const store = new MemorySlidingWindow();
    assert.equal((await store.hit("a", 1, 60_000)).allowed, true);
    assert.equal((await store.hit("a", 1, 60_000)).allowed, false);
    assert.equal((await store.hit("b", 1, 60_000)).allowed, true);
    await store.close();
  });
});
