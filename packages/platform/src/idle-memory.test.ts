import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runInNewContext } from "node:vm";
import { noteRequest, releaseMemoryWhenIdle, type IdleRelease } from "./idle-memory.ts";

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

  it("waits for a quiet period after the last request, however idle the loop is between requests", async () => {
    const releases: IdleRelease[] = [];
    let released!: () => void;
    const firstRelease = new Promise<void>((resolve) => (released = resolve));
    // The quiet period far above the trickle's gaps: a loaded machine's late timer cannot pass for quiet.
    const stop = releaseMemoryWhenIdle({ checkEveryMs: 50, quietForMs: 3_000, growthBytes: 0, minGapMs: 0, onRelease: (r) => (releases.push(r), released()) });
    try {
      // A trickle: a request every 100 ms (the gap is the scenario), each almost no work, so the loop is idle by
      // its utilisation alone.
      for (let i = 0; i < 10; i++) {
        noteRequest();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.equal(releases.length, 0, "no pause while requests come");
      const quietSince = performance.now();
      await firstRelease;
      assert.ok(performance.now() - quietSince >= 300, "released once the quiet period has passed");
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
