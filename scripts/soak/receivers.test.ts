import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { roleOf, startSoakReceivers } from "./receivers.ts";

describe("roleOf", () => {
  it("gives the failing receivers first, then the slow ones, then healthy ones", () => {
    const plan = { failing: 1, slow: 2 };
    assert.deepEqual([0, 1, 2, 3, 4].map((i) => roleOf(plan, i)), ["failing", "slow", "slow", "healthy", "healthy"]);
  });
});

describe("startSoakReceivers", () => {
  it("answers by role and tells a retry (after its 500) from a first attempt", async () => {
    // The failing receiver fails its first request only; the slow one is slow on every one.
    const rolls = [0, 0.9, 0.9];
    const set = await startSoakReceivers({ count: 3, failing: 1, slow: 1, failFraction: 0.5, slowFraction: 1, slowMs: 300 }, () => rolls.shift() ?? 0.9);
    try {
      const send = async (url: string, eventId: string) => {
        const began = performance.now();
        const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ eventId, data: { submittedAt: new Date().toISOString() } }) });
        await res.text();
        return { status: res.status, ms: performance.now() - began };
      };
      const [failing, slow, healthy] = set.urls;
      assert.equal((await send(failing, "e1")).status, 500);
      assert.equal((await send(failing, "e1")).status, 200, "the retry succeeds");
      assert.equal((await send(failing, "e2")).status, 200);
      const slowAnswer = await send(slow, "e1");
      assert.equal(slowAnswer.status, 200);
      assert.ok(slowAnswer.ms >= 250, `slow answer in ${slowAnswer.ms} ms`);
      const quick = await send(healthy, "e1");
      assert.equal(quick.status, 200);

      const taken = set.take();
      assert.deepEqual(taken.firsts.failing.map((r) => r.body.eventId), ["e1", "e2"]);
      assert.deepEqual(taken.retries.map((r) => [r.body.eventId, r.status]), [["e1", 200]]);
      assert.equal(taken.firsts.slow.length, 1);
      assert.equal(taken.firsts.healthy.length, 1);
      // Taken means emptied.
      const again = set.take();
      assert.equal(again.retries.length + again.firsts.healthy.length + again.firsts.failing.length + again.firsts.slow.length, 0);
    } finally {
      await set.close();
    }
  });
});
