import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { Redis } from "ioredis";
import { RedisSlidingWindow } from "./redis-sliding-window.ts";

const redisUrl = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

describe("RedisSlidingWindow (real Redis)", () => {
  it("shares one limit between two gateway replicas", async () => {
    const a = new RedisSlidingWindow(redisUrl);
    const b = new RedisSlidingWindow(redisUrl);
    const key = `test:${randomUUID()}`;
    const results = [];
    for (let i = 0; i < 12; i++) results.push(await (i % 2 ? a : b).hit(key, 10, 60_000));
    assert.deepEqual(
      results.map((r) => r.allowed),
      [...Array(10).fill(true), false, false],
    );
    assert.equal(results[9].remaining, 0);
    assert.ok(results[10].resetMs > 0 && results[10].resetMs <= 60_000);
    await Promise.all([a.close(), b.close()]);
  });

  it("weighs hits like the in-memory store, and rebuilds the running sum from the set when it is gone", async () => {
    const a = new RedisSlidingWindow(redisUrl);
    const b = new RedisSlidingWindow(redisUrl);
    const key = `test:${randomUUID()}`;
    const hit = (store: RedisSlidingWindow, weight: number) => store.hit(key, 100, 60_000, weight);
    const first = await hit(a, 60);
    assert.deepEqual([first.allowed, first.remaining], [true, 40]);
    assert.deepEqual([(await hit(b, 30)).remaining, (await hit(a, 0)).remaining], [10, 10]);
    const refused = await hit(b, 50);
    assert.deepEqual([refused.allowed, refused.remaining], [false, 10]);
    assert.ok(refused.resetMs > 0 && refused.resetMs <= 60_000);
    assert.deepEqual([(await hit(a, 101)).allowed, (await hit(a, 101)).resetMs], [false, 60_000], "more than the budget never fits");
    const raw = new Redis(redisUrl);
    assert.equal(await raw.get(`formsvc:ratelimit:{${key}}:sum`), "90");
    await raw.del(`formsvc:ratelimit:{${key}}:sum`);
    assert.deepEqual([(await hit(b, 0)).remaining, (await hit(b, 10)).allowed, (await hit(a, 1)).allowed], [10, true, false]);
    assert.ok((await raw.pttl(`formsvc:ratelimit:{${key}}:sum`)) > 0, "the sum expires with its set");
    await Promise.all([a.close(), b.close(), raw.quit()]);
  });

  it("admits again once the window has slid past", async () => {
    const store = new RedisSlidingWindow(redisUrl);
    const key = `test:${randomUUID()}`;
    assert.equal((await store.hit(key, 1, 300)).allowed, true);
    assert.equal((await store.hit(key, 1, 300)).allowed, false);
    await new Promise((r) => setTimeout(r, 350));
    assert.equal((await store.hit(key, 1, 300)).allowed, true);
    await store.close();
  });
});
