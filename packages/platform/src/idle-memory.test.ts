import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runInNewContext } from "node:vm";
import { releaseMemoryWhenIdle, type IdleRelease } from "./idle-memory.ts";

describe("releaseMemoryWhenIdle", () => {
  it("gives back the heap a burst grew once the process goes quiet, without handing gc to anyone", async () => {
    // A burst: lots of short-lived objects, a few kept until it ends.
    let kept: object[] = [];
    for (let i = 0; i < 1_000_000; i++) {
      const o = { i, s: `response ${i}` };
      if (i % 20 === 0) kept.push(o);
    }
    kept = [];
    const releases: IdleRelease[] = [];
    const stop = releaseMemoryWhenIdle({ checkEveryMs: 50, minGapMs: 60_000, growthBytes: 2 ** 20, onRelease: (r) => releases.push(r) });
    try {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      assert.equal(releases.length, 1, "one release: the next waits for minGapMs");
      assert.ok(releases[0].heapAfterBytes < releases[0].heapBeforeBytes - 2 ** 20, JSON.stringify(releases[0]));
      assert.equal(kept.length, 0);
      assert.equal(typeof (globalThis as { gc?: unknown }).gc, "undefined");
      assert.equal(runInNewContext("typeof gc"), "undefined");
    } finally {
      stop();
    }
  });

  it("does not collect while the event loop is busy", async () => {
    const releases: IdleRelease[] = [];
    const stop = releaseMemoryWhenIdle({ checkEveryMs: 50, idleBelow: 0.05, growthBytes: 0, minGapMs: 0, onRelease: (r) => releases.push(r) });
    try {
      // Busy: the loop spends ~90 % of each window on work.
      const until = performance.now() + 600;
      while (performance.now() < until) {
        const spinUntil = performance.now() + 9;
        while (performance.now() < spinUntil);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      assert.equal(releases.length, 0);
    } finally {
      stop();
    }
  });
});
