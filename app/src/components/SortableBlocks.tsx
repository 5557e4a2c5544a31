// A list reordered by dragging a handle, with the mouse, a pen or a finger (pointer events), or with the
// keyboard: focus the handle, Space or Enter lifts the item, the arrow keys (Home, End) move it, Space or
// Enter drops it and Escape puts it back; a live region says each step. While an item is dragged the list
// only moves items with transforms; the order changes once, on drop, through `onReorder`, so items keep
// their identity (React keys, ids). The arithmetic is in lib/reorder.ts.
import { useEffect, useId, useRef, useState, type CSSProperties, type KeyboardEvent, type LiHTMLAttributes, type PointerEvent, type ReactNode, type RefObject } from "react";
import { announcements, dropIndex, keyboardMove, shifts, type Slot } from "../lib/reorder.ts";
import { t } from "../i18n/messages.ts";

interface Drag {
  mode: "pointer" | "keyboard";
  from: number;
  to: number;
  /** Each item's place on the page when the drag began. */
  slots: Slot[];
  /** Pointer drags: the pointer's page y at the start, and how far it has moved since. */
  startY: number;
  offset: number;
}

/** How close (px) to the window's top or bottom edge a dragged pointer scrolls the page, and how fast at most (px a frame). */
const scrollEdge = 64;
const maxScrollStep = 18;

type ItemProps = LiHTMLAttributes<HTMLLIElement> & { [data: `data-${string}`]: string | number | undefined };

interface SortableBlocksProps<T> {
  items: readonly T[];
  itemKey(item: T, index: number): string;
  /** How the handle and the announcements name an item, e.g. "block 2, Your name". */
  itemLabel(item: T, index: number): string;
  /** Attributes of an item's `<li>` (class, data attributes). */
  itemProps?(item: T, index: number): ItemProps;
  /** The item's content; `handle` is its drag handle, to be placed where it reads well. */
  renderItem(item: T, index: number, handle: ReactNode): ReactNode;
  onReorder(from: number, to: number): void;
  className?: string;
  listRef?: RefObject<HTMLOListElement | null>;
}

export function SortableBlocks<T>({ items, itemKey, itemLabel, itemProps, renderItem, onReorder, className, listRef }: SortableBlocksProps<T>) {
  const ownRef = useRef<HTMLOListElement>(null);
  const list = listRef ?? ownRef;
  const [drag, setDragState] = useState<Drag | null>(null);
  // The same drag for event handlers and the scrolling loop, which must not wait for a render.
  const dragRef = useRef<Drag | null>(null);
  const pointerY = useRef(0);
  const [announcement, setAnnouncement] = useState("");
  const ids = useId();
  const count = items.length;

  const setDrag = (next: Drag | null) => {
    dragRef.current = next;
    setDragState(next);
  };

  const label = (index: number) => itemLabel(items[index], index);

  const measure = (): Slot[] =>
    Array.from(list.current?.children ?? [], (li) => {
      const rect = li.getBoundingClientRect();
      return { top: rect.top + window.scrollY, height: rect.height };
    });

  const focusHandle = (index: number) =>
    requestAnimationFrame(() => list.current?.querySelector<HTMLElement>(`[data-sortable-handle="${index}"]`)?.focus());

  const finish = (current: Drag) => {
    setDrag(null);
    if (current.to !== current.from) onReorder(current.from, current.to);
    setAnnouncement(announcements.dropped(label(current.from), current.from, current.to, count));
    focusHandle(current.to);
  };

  const cancel = (current: Drag) => {
    setDrag(null);
    setAnnouncement(announcements.cancelled(label(current.from), current.from, count));
  };

  /** A pointer drag follows the pointer's page position (so scrolling while dragging counts). */
  const follow = (current: Drag) => {
    const offset = pointerY.current + window.scrollY - current.startY;
    const slot = current.slots[current.from];
    const to = dropIndex(current.slots, current.from, slot.top + slot.height / 2 + offset);
    if (to !== current.to) setAnnouncement(announcements.moved(label(current.from), to, count));
    setDrag({ ...current, offset, to });
  };

  // While a pointer drags near the window's edge, the page scrolls (faster nearer the edge).
  const pointerDragging = drag?.mode === "pointer";
  useEffect(() => {
    if (!pointerDragging) return;
    // Measured again once the lift is drawn: an item may change its size as it is lifted (the editor folds a
    // selected block's settings), and the drop places follow the sizes seen while dragging.
    if (dragRef.current) setDrag({ ...dragRef.current, slots: measure() });
    let frame = requestAnimationFrame(function step() {
      const current = dragRef.current;
      if (!current) return;
      const y = pointerY.current;
      const delta = y < scrollEdge ? -(scrollEdge - y) : y > window.innerHeight - scrollEdge ? y - (window.innerHeight - scrollEdge) : 0;
      if (delta !== 0) {
        const before = window.scrollY;
        window.scrollBy(0, Math.max(-maxScrollStep, Math.min(maxScrollStep, Math.round(delta / 3) || Math.sign(delta))));
        if (window.scrollY !== before) follow(current);
      }
      frame = requestAnimationFrame(step);
    });
    const onKey = (event: globalThis.KeyboardEvent) => {
      if (event.key === "Escape" && dragRef.current) {
        event.preventDefault();
        cancel(dragRef.current);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => {
      cancelAnimationFrame(frame);
      window.removeEventListener("keydown", onKey);
    };
    // follow and cancel read the latest drag from dragRef.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [pointerDragging]);

  // A block lifted with the keyboard stays in sight as the arrows move it (its box includes the transform).
  const keyboardTarget = drag?.mode === "keyboard" ? drag.to : undefined;
  useEffect(() => {
    const current = dragRef.current;
    if (keyboardTarget === undefined || !current) return;
    list.current?.children[current.from]?.scrollIntoView({ block: "nearest" });
  }, [keyboardTarget, list]);

  const onPointerDown = (event: PointerEvent<HTMLButtonElement>, index: number) => {
    if (dragRef.current || (event.pointerType === "mouse" && event.button !== 0)) return;
    event.preventDefault();
    event.currentTarget.setPointerCapture(event.pointerId);
    event.currentTarget.focus({ preventScroll: true });
    pointerY.current = event.clientY;
    setDrag({ mode: "pointer", from: index, to: index, slots: measure(), startY: event.clientY + window.scrollY, offset: 0 });
    setAnnouncement(announcements.lifted(label(index), index, count));
  };

  const onPointerMove = (event: PointerEvent<HTMLButtonElement>) => {
    const current = dragRef.current;
    if (current?.mode !== "pointer") return;
    pointerY.current = event.clientY;
    follow(current);
  };

  const onPointerUp = (event: PointerEvent<HTMLButtonElement>) => {
    const current = dragRef.current;
    if (current?.mode !== "pointer") return;
    pointerY.current = event.clientY;
    follow(current);
    finish(dragRef.current!);
  };

  const onPointerCancel = () => {
    const current = dragRef.current;
    if (current?.mode === "pointer") cancel(current);
  };

  const onKeyDown = (event: KeyboardEvent<HTMLButtonElement>, index: number) => {
    const current = dragRef.current;
    if (!current) {
      if (event.key !== " " && event.key !== "Enter") return;
      event.preventDefault();
      setDrag({ mode: "keyboard", from: index, to: index, slots: measure(), startY: 0, offset: 0 });
      setAnnouncement(announcements.lifted(label(index), index, count));
      return;
    }
    if (current.mode !== "keyboard") return;
    const result = keyboardMove(current, event.key, count);
    if (result.kind === "ignore") return;
    event.preventDefault();
    if (result.kind === "move") {
      if (result.lifted.to !== current.to) setAnnouncement(announcements.moved(label(current.from), result.lifted.to, count));
      setDrag({ ...current, to: result.lifted.to });
    } else if (result.kind === "drop") finish(current);
    else cancel(current);
  };

  const moves = drag ? shifts(drag.slots, drag.from, drag.to) : undefined;
  const styleOf = (index: number): CSSProperties | undefined => {
    if (!drag || !moves) return undefined;
    const y = index === drag.from && drag.mode === "pointer" ? drag.offset : moves[index];
    return y ? { transform: `translateY(${y}px)` } : undefined;
  };

  return (
    <>
      <p id={`${ids}-how`} className="sr-only">
        {t("sortable.how")}
      </p>
      <ol className={`${className ?? ""} sortable${drag ? ` sortable-active sortable-${drag.mode}` : ""}`} ref={list}>
        {items.map((item, index) => {
          const lifted = drag?.from === index;
          const props = itemProps?.(item, index) ?? {};
          const handle = (
            <button
              type="button"
              className="drag-handle"
              data-sortable-handle={index}
              aria-label={t("sortable.reorder", { item: itemLabel(item, index) })}
              aria-describedby={`${ids}-how`}
              aria-pressed={lifted}
              title={t("sortable.drag")}
              onPointerDown={(e) => onPointerDown(e, index)}
              onPointerMove={onPointerMove}
              onPointerUp={onPointerUp}
              onPointerCancel={onPointerCancel}
              onKeyDown={(e) => onKeyDown(e, index)}
              onBlur={() => {
                const current = dragRef.current;
                if (current?.mode === "keyboard" && current.from === index) cancel(current);
              }}
            >
              <span aria-hidden="true">⠿</span>
            </button>
          );
          return (
            <li
              key={itemKey(item, index)}
              {...props}
              className={`${props.className ?? ""} sortable-item${lifted ? " sortable-lifted" : ""}`}
              style={styleOf(index)}
            >
              {renderItem(item, index, handle)}
            </li>
          );
        })}
      </ol>
      <div className="sr-only" aria-live="assertive" aria-atomic="true" data-testid="reorder-announcement">
        {announcement}
      </div>
    </>
  );
}
