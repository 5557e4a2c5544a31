import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { coalescedAdjustments } from "./response-counts.ts";

describe("coalesced response-count adjustments", () => {
  it("sends one call per round trip per form, the deltas added up, and lets each caller go once its delta is sent", async () => {
    const sent: [string, number][] = [];
    let release: (() => void) | undefined;
    const adjust = coalescedAdjustments(async (formId, delta) => {
      sent.push([formId, delta]);
      await new Promise<void>((resolve) => (release = resolve));
    });
    const done: string[] = [];
    const first = adjust("f1", +1).then(() => done.push("first"));
    const later = [adjust("f1", +1), adjust("f1", +1), adjust("f1", -1)].map((p, i) => p.then(() => done.push(`later${i}`)));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(sent, [["f1", 1]]);
    release!();
    await first;
    assert.deepEqual(done, ["first"]);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(sent, [["f1", 1], ["f1", 1]]);
    release!();
    await Promise.all(later);
    assert.deepEqual(done, ["first", "later0", "later1", "later2"]);
    // Idle again: the next adjustment goes at once, alone.
    const again = adjust("f1", +1);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(sent.at(-1), ["f1", 1]);
    release!();
    await again;
  });

  it("keeps forms apart and sends nothing for deltas that cancel out", async () => {
    const sent: [string, number][] = [];
    const gates: (() => void)[] = [];
    const adjust = coalescedAdjustments(async (formId, delta) => {
      sent.push([formId, delta]);
      await new Promise<void>((resolve) => gates.push(resolve));
    });
    const all = [adjust("a", +1), adjust("b", +1), adjust("a", +1), adjust("a", -1)];
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(sent, [["a", 1], ["b", 1]]);
    for (const open of gates.splice(0)) open();
    await Promise.all(all);
    assert.deepEqual(sent, [["a", 1], ["b", 1]]);
  });

  it("lets every caller go and keeps working when the sender throws", async () => {
    let fail = true;
    const sent: number[] = [];
    const adjust = coalescedAdjustments(async (_formId, delta) => {
      sent.push(delta);
      if (fail) throw new Error("forms is down");
    });
    await adjust("f", +1);
    fail = false;
    await adjust("f", +1);
    assert.deepEqual(sent, [1, 1]);
  });
});
