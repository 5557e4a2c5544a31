import { describe, expect, it } from "vitest";
import { announcements, dropIndex, keyboardMove, reorder, shifts, type Slot } from "./reorder.ts";

// Three cards of 100, 200 and 50 px, 10 px apart, starting at 1000 on the page.
const slots: Slot[] = [
  { top: 1000, height: 100 },
  { top: 1110, height: 200 },
  { top: 1320, height: 50 },
];

describe("reorder", () => {
  it("moves one item to an index and keeps every item itself (ids and keys)", () => {
    const blocks = [
      { id: "a", key: "q_a" },
      { id: "b", key: "q_b" },
      { id: "c", key: "q_c" },
    ];
    const moved = reorder(blocks, 2, 0);
    expect(moved.map((b) => b.id)).toEqual(["c", "a", "b"]);
    expect(moved[0]).toBe(blocks[2]);
    expect(reorder(blocks, 0, 2).map((b) => b.key)).toEqual(["q_b", "q_c", "q_a"]);
    expect(reorder(blocks, 1, 1)).toEqual(blocks);
    expect(reorder(blocks, 0, 5)).toEqual(blocks);
    expect(blocks.map((b) => b.id)).toEqual(["a", "b", "c"]);
  });
});

describe("dropIndex", () => {
  it("passes an item once the dragged item's middle crosses that item's middle", () => {
    // The third (middle at 1345) dragged up.
    expect(dropIndex(slots, 2, 1345)).toBe(2);
    expect(dropIndex(slots, 2, 1211)).toBe(2);
    expect(dropIndex(slots, 2, 1209)).toBe(1);
    expect(dropIndex(slots, 2, 1049)).toBe(0);
    expect(dropIndex(slots, 2, -500)).toBe(0);
    // The first (middle at 1050) dragged down.
    expect(dropIndex(slots, 0, 1209)).toBe(0);
    expect(dropIndex(slots, 0, 1211)).toBe(1);
    expect(dropIndex(slots, 0, 1346)).toBe(2);
    expect(dropIndex(slots, 0, 99_999)).toBe(2);
  });
});

describe("shifts", () => {
  it("lays the items out again in the new order with the list's gap", () => {
    expect(shifts(slots, 1, 1)).toEqual([0, 0, 0]);
    // Third first: it goes to 1000; the first to 1060, the second to 1170.
    expect(shifts(slots, 2, 0)).toEqual([60, 60, -320]);
    // First last: second at 1000, third at 1210, first at 1270.
    expect(shifts(slots, 0, 2)).toEqual([270, -110, -110]);
    expect(shifts([], 0, 0)).toEqual([]);
    expect(shifts([{ top: 5, height: 10 }], 0, 0)).toEqual([0]);
  });
});

describe("keyboardMove", () => {
  it("moves with the arrows, Home and End within the list", () => {
    expect(keyboardMove({ from: 1, to: 1 }, "ArrowUp", 3)).toEqual({ kind: "move", lifted: { from: 1, to: 0 } });
    expect(keyboardMove({ from: 1, to: 0 }, "ArrowUp", 3)).toEqual({ kind: "move", lifted: { from: 1, to: 0 } });
    expect(keyboardMove({ from: 1, to: 1 }, "ArrowDown", 3)).toEqual({ kind: "move", lifted: { from: 1, to: 2 } });
    expect(keyboardMove({ from: 1, to: 2 }, "ArrowRight", 3)).toEqual({ kind: "move", lifted: { from: 1, to: 2 } });
    expect(keyboardMove({ from: 2, to: 2 }, "Home", 3)).toEqual({ kind: "move", lifted: { from: 2, to: 0 } });
    expect(keyboardMove({ from: 0, to: 0 }, "End", 3)).toEqual({ kind: "move", lifted: { from: 0, to: 2 } });
  });

  it("drops with Space or Enter, cancels with Escape, and leaves other keys alone", () => {
    expect(keyboardMove({ from: 2, to: 0 }, " ", 3)).toEqual({ kind: "drop", from: 2, to: 0 });
    expect(keyboardMove({ from: 2, to: 1 }, "Enter", 3)).toEqual({ kind: "drop", from: 2, to: 1 });
    expect(keyboardMove({ from: 2, to: 0 }, "Escape", 3)).toEqual({ kind: "cancel", from: 2 });
    expect(keyboardMove({ from: 2, to: 0 }, "Tab", 3)).toEqual({ kind: "ignore" });
    expect(keyboardMove({ from: 2, to: 0 }, "a", 3)).toEqual({ kind: "ignore" });
  });
});

describe("announcements", () => {
  it("name the item and its positions from 1", () => {
    expect(announcements.lifted("Block 3, Email", 2, 3)).toBe("Lifted Block 3, Email, position 3 of 3. Arrow keys move it, Space drops it, Escape cancels.");
    expect(announcements.moved("Email", 0, 3)).toBe("Email: position 1 of 3.");
    expect(announcements.dropped("Email", 2, 0, 3)).toBe("Email moved from position 3 to 1 of 3.");
    expect(announcements.dropped("Email", 1, 1, 3)).toBe("Email dropped back at position 2 of 3.");
    expect(announcements.cancelled("Email", 1, 3)).toBe("Reordering cancelled. Email is back at position 2 of 3.");
  });
});
