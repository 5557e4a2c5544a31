// The editor's insert line: "Type / to insert a block". `/` and part of a block's name (`/long`, `/email`,
// `/page`, in the app's language or the type's English name) list the blocks that match; the arrow keys
// choose, Enter inserts, Escape closes the list. Text without `/` and Enter make a paragraph of it. An ARIA
// combobox: the list is its listbox, the option chosen its active descendant.
import { useEffect, useState } from "react";
import { blockTypeLabels, blockTypesMatching, isInputType } from "../lib/document.ts";
import type { BlockType } from "../types.ts";
import { t } from "../i18n/messages.ts";

export function BlockInserter({ id, onInsert, onLeave }: { id: string; onInsert(type: BlockType, text?: string): void; onLeave?(): void }) {
  const [value, setValue] = useState("");
  const [active, setActive] = useState(0);
  /** Escape closed the list; typing opens it again. */
  const [closed, setClosed] = useState(false);
  const query = value.startsWith("/") ? value.slice(1) : undefined;
  const matches = query === undefined ? [] : blockTypesMatching(query);
  const open = query !== undefined && !closed;
  const listId = `${id}-list`;
  const optionId = (type: BlockType) => `${listId}-${type}`;
  const current = matches[Math.min(active, matches.length - 1)];

  useEffect(() => {
    if (open && current) document.getElementById(optionId(current))?.scrollIntoView({ block: "nearest" });
    // optionId is derived from listId.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [open, current]);

  const reset = () => {
    setValue("");
    setActive(0);
    setClosed(false);
  };
  const choose = (type: BlockType) => {
    reset();
    onInsert(type);
  };

  return (
    <div className="inserter">
      <input
        id={id}
        className="inserter-input"
        role="combobox"
        aria-label={t("editor.insertLine")}
        placeholder={t("editor.insertLine")}
        aria-describedby={`${id}-hint`}
        aria-autocomplete="list"
        aria-expanded={open}
        aria-controls={open ? listId : undefined}
        aria-activedescendant={open && current ? optionId(current) : undefined}
        autoComplete="off"
        value={value}
        onChange={(e) => {
          setValue(e.target.value);
          setActive(0);
          setClosed(false);
        }}
        onBlur={() => {
          if (!value) onLeave?.();
        }}
        onKeyDown={(e) => {
          if (e.nativeEvent.isComposing) return;
          if (open && (e.key === "ArrowDown" || e.key === "ArrowUp") && matches.length > 0) {
            e.preventDefault();
            const step = e.key === "ArrowDown" ? 1 : -1;
            setActive((Math.min(active, matches.length - 1) + step + matches.length) % matches.length);
          } else if (e.key === "Enter") {
            e.preventDefault();
            if (open && current) choose(current);
            else if (query === undefined && value.trim()) {
              const text = value.trim();
              reset();
              onInsert("PARAGRAPH", text);
            }
          } else if (e.key === "Escape") {
            if (open) {
              e.preventDefault();
              setClosed(true);
            } else if (value) {
              e.preventDefault();
              reset();
            } else onLeave?.();
          }
        }}
      />
      <span className="sr-only" id={`${id}-hint`}>
        {t("editor.insertHint")}
      </span>
      {open && (
        <ul className="inserter-menu" role="listbox" id={listId} aria-label={t("editor.insertMenu")}>
          {matches.map((type) => (
            <li
              key={type}
              id={optionId(type)}
              role="option"
              aria-selected={type === current}
              // The input keeps the focus (and the combobox its place) while an option is clicked.
              onMouseDown={(e) => e.preventDefault()}
              onMouseMove={() => setActive(matches.indexOf(type))}
              onClick={() => choose(type)}
            >
              <span>{blockTypeLabels[type]}</span>
              <span className="muted">{isInputType(type) ? t("editor.questions") : t("editor.layout")}</span>
            </li>
          ))}
          {matches.length === 0 && (
            <li className="inserter-none muted" role="presentation">
              {t("editor.noMatch", { query: query ?? "" })}
            </li>
          )}
        </ul>
      )}
    </div>
  );
}
