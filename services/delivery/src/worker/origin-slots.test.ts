import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OriginSlots } from "./origin-slots.ts";

describe("OriginSlots", () => {
  const quick = { succeeded: true, durationMs: 20 };

  it("gives an origin its floor at first, and no more", () => {
    const slots = new OriginSlots({ floor: 2, ceiling: 4, quickMs: 250 });
    assert.deepEqual([slots.take("a"), slots.take("a"), slots.take("a")], [true, true, false]);
    assert.deepEqual(slots.rooms(), new Map([["a", 0]]));
    assert.equal(slots.take("b"), true, "another origin has its own");
    slots.give("a");
    assert.deepEqual(slots.rooms(), new Map([["a", 1], ["b", 1]]));
    assert.equal(slots.take("a"), true);
  });

  it("widens by one per quick success up to the ceiling, and narrows to the floor at anything else", () => {
    const slots = new OriginSlots({ floor: 2, ceiling: 4, quickMs: 250 });
    for (let i = 0; i < 5; i++) slots.observe("a", quick);
    assert.equal(slots.limitOf("a"), 4, "capped at the ceiling");
    slots.observe("a", { succeeded: true, durationMs: 400 });
    assert.equal(slots.limitOf("a"), 2, "a slow success");
    slots.observe("a", quick);
    assert.equal(slots.limitOf("a"), 3);
    slots.observe("a", { succeeded: false, durationMs: 5 });
    assert.equal(slots.limitOf("a"), 2, "a quick failure");
    assert.equal(slots.limitOf("b"), 2, "others untouched");
  });

  it("keeps busy counts across a narrowing: an origin over its new limit is full until slots come back", () => {
    const slots = new OriginSlots({ floor: 1, ceiling: 3, quickMs: 250 });
    slots.observe("a", quick);
    slots.observe("a", quick);
    assert.deepEqual([slots.take("a"), slots.take("a"), slots.take("a")], [true, true, true]);
    slots.observe("a", { succeeded: false, durationMs: 10_000 });
    slots.give("a");
    assert.deepEqual(slots.rooms(), new Map([["a", 0]]), "2 busy, limit 1");
    slots.give("a");
    assert.deepEqual(slots.rooms(), new Map([["a", 0]]), "1 busy, limit 1");
    slots.give("a");
    assert.deepEqual(slots.rooms(), new Map());
  });
});
