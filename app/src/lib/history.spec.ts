// The editor's history of drafts (undo and redo), the `/` insert line's matching and the shortcuts.
import { describe, expect, it } from "vitest";
import { historyShortcut } from "../pages/Editor.tsx";
import { blockTypesMatching } from "./document.ts";
import { coalesceMs, mapHistory, record, redo, startHistory, undo } from "./history.ts";

describe("the editor's history", () => {
  it("makes each change a step that undo takes back and redo brings again", () => {
    let h = startHistory("a");
    h = record(h, "ab", undefined, 0);
    h = record(h, "abc", undefined, 1);
    expect(h.present).toBe("abc");
    h = undo(h);
    expect(h.present).toBe("ab");
    h = undo(h);
    expect(h.present).toBe("a");
    expect(undo(h)).toBe(h);
    h = redo(h);
    expect(h.present).toBe("ab");
    // A new change after undo drops what could be redone.
    h = record(h, "abX", undefined, 2);
    expect(h.future).toEqual([]);
    expect(redo(h)).toBe(h);
  });

  it("folds typing in one field into one step, until a pause or another field", () => {
    const field = {};
    const other = {};
    let h = startHistory("");
    for (const [i, text] of ["H", "He", "Hel", "Hell", "Hello"].entries()) h = record(h, text, field, i * 200);
    expect(h.past).toEqual([""]);
    h = record(h, "Hello!", field, 800 + coalesceMs);
    expect(h.past).toEqual(["", "Hello"]);
    h = record(h, "Hello! x", other, 800 + coalesceMs + 10);
    expect(h.past).toEqual(["", "Hello", "Hello!"]);
    expect(undo(undo(undo(h))).present).toBe("");
  });

  it("keeps at most its limit of steps, dropping the oldest", () => {
    let h = startHistory(0);
    for (let i = 1; i <= 10; i++) h = record(h, i, undefined, i, 3);
    expect(h.past).toEqual([7, 8, 9]);
  });

  it("changes every step alike (keys given by a save), keeping the steps", () => {
    const h = mapHistory(redo(undo(record(startHistory(1), 2, undefined, 0))), (n) => n * 10);
    expect([h.past, h.present, h.future]).toEqual([[10], 20, []]);
  });
});

describe("the insert line", () => {
  it("finds block types by what is typed after /, best first, by name or English id", () => {
    expect(blockTypesMatching("long")[0]).toBe("LONG_TEXT");
    expect(blockTypesMatching("email")).toEqual(["EMAIL"]);
    expect(blockTypesMatching("page")[0]).toBe("PAGE_BREAK");
    expect(blockTypesMatching("text").slice(0, 2)).toEqual(["SHORT_TEXT", "LONG_TEXT"]);
    expect(blockTypesMatching("nps")).toEqual(["NPS"]);
    expect(blockTypesMatching("url")).toEqual(["URL"]);
    expect(blockTypesMatching("zzz")).toEqual([]);
    expect(blockTypesMatching("")).toHaveLength(23);
  });

  it("reads Ctrl/⌘+Z as undo, Ctrl/⌘+Shift+Z and Ctrl+Y as redo", () => {
    const key = (k: string, mods: Partial<Record<"ctrlKey" | "metaKey" | "shiftKey" | "altKey", boolean>> = {}) => historyShortcut({ key: k, ctrlKey: false, metaKey: false, shiftKey: false, altKey: false, ...mods });
    expect(key("z", { ctrlKey: true })).toBe("undo");
    expect(key("z", { metaKey: true })).toBe("undo");
    expect(key("Z", { ctrlKey: true, shiftKey: true })).toBe("redo");
    expect(key("y", { ctrlKey: true })).toBe("redo");
    expect(key("z")).toBeUndefined();
    expect(key("z", { ctrlKey: true, altKey: true })).toBeUndefined();
  });
});
