// The arithmetic of reordering a vertical list by dragging (SortableBlocks.tsx): where a dragged item
// lands, how far the others move aside meanwhile, and what a keyboard key does to a lifted item. Pure, so
// the vitest specs check it without a browser.
import { moveItem } from "./document.ts";
import { t } from "../i18n/messages.ts";

/** An item's place on the page when the drag began (page coordinates, so scrolling changes nothing). */
export interface Slot {
  top: number;
  height: number;
}

/** `list` with the item at `from` moved to index `to`; every item keeps its identity (ids, keys). */
export function reorder<T>(list: readonly T[], from: number, to: number): T[] {
  return moveItem(list, from, to - from);
}

/**
 * The index the dragged item (at `from`) would take when its middle is at `middle`: past every item
 * whose middle it has crossed, in either direction.
 */
export function dropIndex(slots: readonly Slot[], from: number, middle: number): number {
  let to = from;
  for (let i = from + 1; i < slots.length && middle > slots[i].top + slots[i].height / 2; i++) to = i;
  for (let i = from - 1; i >= 0 && middle < slots[i].top + slots[i].height / 2; i--) to = i;
  return to;
}

/**
 * How far each item moves (px) to show the list as it would be with the item at `from` put at `to`: the
 * items are laid out again in the new order from the first one's top, with the gap between the first two
 * (the list's spacing) between each.
 */
export function shifts(slots: readonly Slot[], from: number, to: number): number[] {
  if (slots.length === 0) return [];
  const gap = slots.length > 1 ? slots[1].top - (slots[0].top + slots[0].height) : 0;
  const order = reorder(
    slots.map((_, i) => i),
    from,
    to,
  );
  const out = new Array<number>(slots.length).fill(0);
  let top = slots[0].top;
  for (const i of order) {
    out[i] = top - slots[i].top;
    top += slots[i].height + gap;
  }
  return out;
}

/** A lifted item: where it was and where it would be dropped now. */
export interface Lifted {
  from: number;
  to: number;
}

/** What a key does while an item is lifted with the keyboard. */
export type KeyResult =
  | { kind: "move"; lifted: Lifted }
  | { kind: "drop"; from: number; to: number }
  | { kind: "cancel"; from: number }
  | { kind: "ignore" };

/**
 * The keyboard's part: arrows (and Home/End) move the lifted item, Space or Enter drops it, Escape puts it
 * back. Keys it does not use are ignored, so Tab still leaves (and the editor cancels on blur).
 */
export function keyboardMove(lifted: Lifted, key: string, count: number): KeyResult {
  const to = (index: number): KeyResult => ({ kind: "move", lifted: { from: lifted.from, to: Math.max(0, Math.min(count - 1, index)) } });
  switch (key) {
    case "ArrowUp":
    case "ArrowLeft":
      return to(lifted.to - 1);
    case "ArrowDown":
    case "ArrowRight":
      return to(lifted.to + 1);
    case "Home":
      return to(0);
    case "End":
      return to(count - 1);
    case " ":
    case "Enter":
      return { kind: "drop", from: lifted.from, to: lifted.to };
    case "Escape":
      return { kind: "cancel", from: lifted.from };
    default:
      return { kind: "ignore" };
  }
}

/** What the live region says at each step, naming the item by `label` and positions from 1. */
export const announcements = {
  lifted: (label: string, index: number, count: number) => t("reorder.lifted", { label, position: index + 1, count }),
  moved: (label: string, index: number, count: number) => t("reorder.moved", { label, position: index + 1, count }),
  dropped: (label: string, from: number, to: number, count: number) =>
    from === to ? t("reorder.droppedBack", { label, position: to + 1, count }) : t("reorder.movedFrom", { label, from: from + 1, to: to + 1, count }),
  cancelled: (label: string, index: number, count: number) => t("reorder.cancelled", { label, position: index + 1, count }),
};
