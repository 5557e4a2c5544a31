import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { inBatches } from "./in-batches.ts";

async function* items(n: number, failAt?: number) {
  for (let i = 0; i < n; i++) {
    if (i === failAt) throw new Error("stream broke");
    yield i;
    // Items arrive faster than a slow consumer handles them.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe("inBatches", () => {
  it("gives a slow consumer what arrived meanwhile, in order, at most `max` at a time", async () => {
    const batches: number[][] = [];
    for await (const batch of inBatches(items(50), 8)) {
      batches.push(batch);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    assert.deepEqual(batches.flat(), Array.from({ length: 50 }, (_, i) => i));
    assert.ok(batches.every((b) => b.length >= 1 && b.length <= 8));
    assert.ok(batches.length < 50, `batched: ${batches.map((b) => b.length).join(",")}`);
  });

  it("hands over what arrived before the stream failed, then the failure", async () => {
    const seen: number[] = [];
    await assert.rejects(
      (async () => {
        for await (const batch of inBatches(items(10, 4), 100)) seen.push(...batch);
      })(),
      /stream broke/,
    );
    assert.deepEqual(seen, [0, 1, 2, 3]);
  });
});
