import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OriginSlots } from "./origin-slots.ts";

describe("OriginSlots", () => {
  const quick = { statusCode: 200, durationMs: 20 };

  it("gives an origin its floor at first, and no more", () => {
    const slots = new OriginSlots({ floor: 2, ceiling: 4, quickMs: 250 });
    assert.deepEqual([slots.take("a"), slots.take("a"), slots.take("a")], [true, true, false]);
    assert.deepEqual(slots.rooms(), new Map([["a", 0]]));
    assert.equal(slots.take("b"), true, "another origin has its own");
    slots.give("a");
    assert.deepEqual(slots.rooms(), new Map([["a", 1], ["b", 1]]));
    assert.equal(slots.take("a"), true);
  });

  it("widens by one per quick 2xx up to the ceiling, halves at a slow answer, none or 429, keeps at a quick failure", () => {
    const slots = new OriginSlots({ floor: 2, ceiling: 16, quickMs: 250 });
    for (let i = 0; i < 20; i++) slots.observe("a", quick);
    assert.equal(slots.limitOf("a"), 16, "capped at the ceiling");
    slots.observe("a", { statusCode: 500, durationMs: 5 });
    slots.observe("a", { statusCode: 404, durationMs: 5 });
    assert.equal(slots.limitOf("a"), 16, "a quick failure holds no slot long: kept");
    slots.observe("a", { statusCode: 200, durationMs: 400 });
    assert.equal(slots.limitOf("a"), 8, "a slow success");
    slots.observe("a", { statusCode: 429, durationMs: 5 });
    assert.equal(slots.limitOf("a"), 4, "the receiver asks for less");
    slots.observe("a", quick);
    assert.equal(slots.limitOf("a"), 5);
    slots.observe("a", { statusCode: 0, durationMs: 10_000 });
    assert.equal(slots.limitOf("a"), 2, "no answer: halved, never below the floor");
    slots.observe("a", { statusCode: 0, durationMs: 3 });
    assert.equal(slots.limitOf("a"), 2);
    assert.equal(slots.limitOf("b"), 2, "others untouched");
  });

  it("a receiver failing one request in ten stays near the ceiling, one that hangs drops to the floor in a few attempts", () => {
    const slots = new OriginSlots({ floor: 4, ceiling: 32, quickMs: 250 });
    for (let i = 0; i < 200; i++) slots.observe("flaky", { statusCode: i % 10 === 0 ? 500 : 200, durationMs: 15 });
    assert.equal(slots.limitOf("flaky"), 32);
    for (let i = 0; i < 3; i++) slots.observe("flaky", { statusCode: 0, durationMs: 10_000 });
    assert.equal(slots.limitOf("flaky"), 4);
  });

  it("keeps busy counts across a narrowing: an origin over its new limit is full until slots come back", () => {
    const slots = new OriginSlots({ floor: 1, ceiling: 3, quickMs: 250 });
    slots.observe("a", quick);
    slots.observe("a", quick);
    assert.deepEqual([slots.take("a"), slots.take("a"), slots.take("a")], [true, true, true]);
    slots.observe("a", { statusCode: 0, durationMs: 10_000 });
    slots.give("a");
    assert.deepEqual(slots.rooms(), new Map([["a", 0]]), "2 busy, limit 1");
    slots.give("a");
    assert.deepEqual(slots.rooms(), new Map([["a", 0]]), "1 busy, limit 1");
    slots.give("a");
    assert.deepEqual(slots.rooms(), new Map());
  });
});
