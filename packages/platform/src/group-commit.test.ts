import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { GroupCommit } from "./group-commit.ts";

/** A store whose writes take a turn of the event loop, recording each batch it was given. */
function slowStore(fails: (item: number) => boolean = () => false) {
  const batches: number[][] = [];
  const write = async (items: number[]) => {
    batches.push(items);
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (items.some(fails)) throw new Error(`cannot store ${items.filter(fails).join(", ")}`);
    return items.map((n) => n * 10);
  };
  return { batches, write };
}

describe("GroupCommit", () => {
  it("writes the first at once and those arriving meanwhile together, up to maxBatch, each getting its own result", async () => {
    const store = slowStore();
    const group = new GroupCommit(store.write, { maxBatch: 3 });
    const results = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => group.add(n)));
    assert.deepEqual(results, [10, 20, 30, 40, 50, 60]);
    assert.deepEqual(store.batches, [[1], [2, 3, 4], [5, 6]]);
    // Alone again, a write waits for nothing.
    assert.equal(await group.add(7), 70);
    assert.deepEqual(store.batches.at(-1), [7]);
  });

  it("never puts two items of one key in a batch", async () => {
    const store = slowStore();
    const group = new GroupCommit(store.write, { keyOf: (n) => String(n % 2) });
    await Promise.all([1, 3, 5, 2].map((n) => group.add(n)));
    assert.deepEqual(store.batches, [[1], [3, 2], [5]]);
  });

  it("fails only the bad item of a failed batch: the others are written again alone", async () => {
    const store = slowStore((n) => n === 3);
    const group = new GroupCommit(store.write);
    const settled = await Promise.allSettled([1, 2, 3, 4].map((n) => group.add(n)));
    assert.deepEqual(
      settled.map((s) => (s.status === "fulfilled" ? s.value : (s.reason as Error).message)),
      [10, 20, "cannot store 3", 40],
    );
    assert.deepEqual(store.batches, [[1], [2, 3, 4], [2], [3], [4]]);
  });

  it("fails every item of a failed batch at once when told not to split it", async () => {
    const store = slowStore((n) => n === 3);
    const group = new GroupCommit(store.write, { splitOnFailure: false });
    const settled = await Promise.allSettled([1, 2, 3, 4].map((n) => group.add(n)));
    assert.deepEqual(
      settled.map((s) => (s.status === "fulfilled" ? s.value : (s.reason as Error).message)),
      [10, "cannot store 3", "cannot store 3", "cannot store 3"],
    );
    assert.deepEqual(store.batches, [[1], [2, 3, 4]]);
  });
});
