import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
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
