// One block of the Build tab's canvas (Editor.tsx): its texts in place, as the hosted page shows them (the
// question and description, a heading's or paragraph's text, the options of a choice, a scale's numbers), and
// when it is selected its settings under it.
import { useEffect, useId, useLayoutEffect, useRef, type KeyboardEvent, type ReactNode } from "react";
import { blockTypeLabels, isChoiceType, isInputType, moveItem, newId, removeItem, replaceItem, takesPlaceholder, type EditableBlock } from "../lib/document.ts";
import { QuestionSettings } from "./QuestionSettings.tsx";
import { t } from "../i18n/messages.ts";
import { tRich } from "../i18n/react.tsx";

/**
 * Focus to move once the change that made its element is on the page: set in an event handler, done in
 * the same task as the render (before the next key press reaches the page), not a frame later.
 */
export function useFocusAfterRender(): (find: () => HTMLElement | null | undefined, select?: boolean) => void {
  const pending = useRef<{ find: () => HTMLElement | null | undefined; select: boolean }>(undefined);
  useLayoutEffect(() => {
    const next = pending.current;
    if (!next) return;
    const el = next.find();
    if (!el) return;
    pending.current = undefined;
    el.focus();
    if (next.select && (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement)) el.select();
  });
  return (find, select = false) => {
    pending.current = { find, select };
  };
}

/** Enter in a one-line text: the caller opens an insert line after the block. */
export const onEnter = (f: () => void) => (e: KeyboardEvent<HTMLInputElement | HTMLTextAreaElement>) => {
  if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
    e.preventDefault();
    f();
  }
};

/** One block on the canvas, its texts in place; its settings when selected. Its `<li>` (and the handle's behaviour) is SortableBlocks'. */
export function BlockEditor({
  block,
  index,
  count,
  handle,
  selected,
  onChange,
  onMove,
  onDelete,
  onEnter: enter,
}: {
  block: EditableBlock;
  index: number;
  count: number;
  handle: ReactNode;
  selected: boolean;
  onChange(b: EditableBlock): void;
  onMove(delta: number, which: "up" | "down"): void;
  onDelete(): void;
  onEnter(): void;
}) {
  const id = useId();
  const set = (patch: Partial<EditableBlock>) => onChange({ ...block, ...patch });
  const input = isInputType(block.type);
  return (
    <div className="block-body" role="group" aria-label={t("editor.blockLabel", { number: index + 1, type: blockTypeLabels[block.type] })}>
      <div className="block-gutter">{handle}</div>
      <div className="block-content">
        {input && (
          <>
            <div className="canvas-question-row">
              <AutoTextarea
                className="canvas-question"
                first
                label={t("editor.question")}
                value={block.question ?? ""}
                maxLength={1000}
                placeholder={t("editor.question")}
                onChange={(question) => set({ question })}
                onKeyDown={onEnter(enter)}
              />
              {block.required && (
                <span className="canvas-required" title={t("editor.required")}>
                  *
                </span>
              )}
            </div>
            {(selected || block.description) && (
              <input
                className="canvas-desc"
                aria-label={t("editor.description")}
                placeholder={t("editor.descriptionPlaceholder")}
                value={block.description ?? ""}
                maxLength={5000}
                onChange={(e) => set({ description: e.target.value })}
                onKeyDown={onEnter(enter)}
              />
            )}
            <AnswerInPlace block={block} index={index} selected={selected} onChange={onChange} />
          </>
        )}

        {block.type === "HEADING" && (
          <AutoTextarea className="canvas-heading" first label={t("editor.headingText")} value={block.text ?? ""} onChange={(text) => set({ text })} onKeyDown={onEnter(enter)} />
        )}
        {block.type === "PARAGRAPH" && (
          <AutoTextarea className="canvas-paragraph" first label={t("editor.paragraphText")} value={block.text ?? ""} onChange={(text) => set({ text })} />
        )}
        {block.type === "PAGE_BREAK" && (
          <p className="canvas-page-break">
            <span>{blockTypeLabels.PAGE_BREAK}</span>
            <span className="sr-only"> {t("editor.pageBreakNote")}</span>
          </p>
        )}

        {selected && (
          <div className="block-settings" role="group" aria-label={t("editor.settingsOf", { number: index + 1 })}>
            {input && (
              <div className="settings-row">
                <label className="check">
                  <input type="checkbox" checked={block.required ?? false} onChange={(e) => set({ required: e.target.checked })} /> {t("editor.required")}
                </label>
                <div className="field field-inline">
                  <label htmlFor={`${id}-fn`}>{t("editor.answerKey")}</label>
                  <input id={`${id}-fn`} value={block.fieldName ?? ""} maxLength={200} placeholder={t("editor.answerKeyEmpty")} aria-describedby={`${id}-fn-hint`} onChange={(e) => set({ fieldName: e.target.value })} />
                </div>
                {isChoiceType(block.type) && takesPlaceholder(block.type) && (
                  // A list's placeholder (a dropdown's first line): the options take its place on the canvas.
                  <div className="field field-inline">
                    <label htmlFor={`${id}-ph`}>{t("editor.placeholder")}</label>
                    <input id={`${id}-ph`} value={block.placeholder ?? ""} maxLength={500} onChange={(e) => set({ placeholder: e.target.value })} />
                  </div>
                )}
              </div>
            )}
            {input && (
              <p className="hint" id={`${id}-fn-hint`}>
                {t("editor.answerKeyHint")}
                {block.key && <> {tRich("editor.fieldKey", { key: <code>{block.key}</code>, recall: <code>{`{{${block.key}}}`}</code> })}</>}
              </p>
            )}
            <QuestionSettings block={block} blockIndex={index} onChange={onChange} />
            <div className="block-tools">
              <button type="button" data-move="up" onClick={() => onMove(-1, "up")} disabled={index === 0} aria-label={t("editor.moveUp", { number: index + 1 })}>
                ↑ {t("editor.up")}
              </button>
              <button type="button" data-move="down" onClick={() => onMove(1, "down")} disabled={index === count - 1} aria-label={t("editor.moveDown", { number: index + 1 })}>
                ↓ {t("editor.down")}
              </button>
              <button type="button" className="danger-outline" onClick={onDelete} aria-label={t("editor.deleteBlock", { number: index + 1 })}>
                {t("editor.delete")}
              </button>
            </div>
          </div>
        )}
      </div>
    </div>
  );
}

/**
 * A textarea as tall as its text, for texts edited in place: they wrap as the page wraps them (CSS
 * field-sizing where the browser has it, else its height set from the text).
 */
export function AutoTextarea({
  className,
  label,
  value,
  onChange,
  onKeyDown,
  first,
  placeholder,
  describedBy,
  maxLength = 5000,
}: {
  className: string;
  label: string;
  value: string;
  onChange(v: string): void;
  onKeyDown?(e: KeyboardEvent<HTMLTextAreaElement>): void;
  first?: boolean;
  placeholder?: string;
  describedBy?: string;
  maxLength?: number;
}) {
  const ref = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el || CSS.supports?.("field-sizing", "content")) return;
    el.style.height = "auto";
    el.style.height = `${el.scrollHeight + 2}px`;
  }, [value]);
  return (
    <textarea
      ref={ref}
      className={className}
      data-first-text={first || undefined}
      aria-label={label}
      aria-describedby={describedBy}
      placeholder={placeholder}
      value={value}
      maxLength={maxLength}
      rows={1}
      onChange={(e) => onChange(e.target.value)}
      onKeyDown={onKeyDown}
    />
  );
}

/** The answer's place as respondents see it: a field (its placeholder typed in place), options to edit, steps, a consent's box and text. */
function AnswerInPlace({ block, index, selected, onChange }: { block: EditableBlock; index: number; selected: boolean; onChange(b: EditableBlock): void }) {
  const set = (patch: Partial<EditableBlock>) => onChange({ ...block, ...patch });
  if (isChoiceType(block.type)) return <OptionsInPlace block={block} index={index} selected={selected} onChange={onChange} />;
  if (takesPlaceholder(block.type)) {
    return (
      <input
        className={`canvas-field${block.type === "LONG_TEXT" ? " canvas-field-long" : ""}`}
        aria-label={t("editor.placeholder")}
        placeholder={selected ? t("editor.placeholderEmpty") : undefined}
        value={block.placeholder ?? ""}
        maxLength={500}
        onChange={(e) => set({ placeholder: e.target.value })}
      />
    );
  }
  switch (block.type) {
    case "RATING":
    case "LINEAR_SCALE":
    case "NPS": {
      const from = block.type === "NPS" ? 0 : block.type === "LINEAR_SCALE" ? (block.min ?? 1) : 1;
      const to = block.type === "NPS" ? 10 : (block.max ?? 5);
      return (
        <div className="canvas-steps" aria-hidden="true">
          {Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => (
            <span key={i}>{from + i}</span>
          ))}
        </div>
      );
    }
    case "CONSENT":
      return (
        <div className="canvas-consent">
          <span className="canvas-box" aria-hidden="true" />
          <AutoTextarea className="canvas-consent-text" label={t("question.consentText")} value={block.text ?? ""} onChange={(text) => set({ text })} />
        </div>
      );
    case "MATRIX":
      return (
        <table className="canvas-matrix" aria-hidden="true">
          <thead>
            <tr>
              <th />
              {(block.columns ?? []).map((c, i) => (
                <th key={c.id ?? i}>{c.text}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {(block.rows ?? []).map((r, i) => (
              <tr key={r.id ?? i}>
                <th>{r.text}</th>
                {(block.columns ?? []).map((c, j) => (
                  <td key={c.id ?? j}>○</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      );
    default:
      // Date, time, a file, a signature: the kind of field, as a box.
      return (
        <div className={`canvas-field canvas-field-static${block.type === "SIGNATURE" ? " canvas-field-long" : ""}`} aria-hidden="true">
          {blockTypeLabels[block.type]}
        </div>
      );
  }
}

/** A choice's options in place: Enter adds one after, Backspace in an empty one removes it; moving and removing by button when selected. */
function OptionsInPlace({ block, index, selected, onChange }: { block: EditableBlock; index: number; selected: boolean; onChange(b: EditableBlock): void }) {
  const id = useId();
  const options = block.options ?? [];
  const setOptions = (next: NonNullable<EditableBlock["options"]>) => onChange({ ...block, options: next });
  const focusAfter = useFocusAfterRender();
  const focus = (i: number) => focusAfter(() => document.getElementById(`${id}-${i}`));
  const mark = block.type === "CHECKBOXES" || block.type === "MULTI_SELECT" ? "☐" : block.type === "RANKING" ? "≡" : block.type === "DROPDOWN" ? "▾" : "○";
  return (
    <div className="canvas-options">
      <ol>
        {options.map((option, i) => (
          <li key={option.id ?? `new-${i}`} className="canvas-option">
            <span className="canvas-mark" aria-hidden="true">
              {mark}
            </span>
            <input
              id={`${id}-${i}`}
              className="canvas-option-text"
              aria-label={t("options.item", { list: "options", number: i + 1, block: index + 1 })}
              value={option.text}
              maxLength={1000}
              onChange={(e) => setOptions(replaceItem(options, i, { ...option, text: e.target.value }))}
              onKeyDown={(e) => {
                if (e.key === "Enter" && !e.nativeEvent.isComposing) {
                  e.preventDefault();
                  setOptions([...options.slice(0, i + 1), { id: newId(), text: "" }, ...options.slice(i + 1)]);
                  focus(i + 1);
                } else if (e.key === "Backspace" && option.text === "" && options.length > 1) {
                  e.preventDefault();
                  setOptions(removeItem(options, i));
                  focus(Math.max(0, i - 1));
                }
              }}
            />
            {selected && (
              <span className="canvas-option-tools">
                <button type="button" onClick={() => setOptions(moveItem(options, i, -1))} disabled={i === 0} aria-label={t("options.moveUp", { list: "options", number: i + 1 })}>
                  ↑
                </button>
                <button type="button" onClick={() => setOptions(moveItem(options, i, 1))} disabled={i === options.length - 1} aria-label={t("options.moveDown", { list: "options", number: i + 1 })}>
                  ↓
                </button>
                <button type="button" onClick={() => setOptions(removeItem(options, i))} disabled={options.length <= 1} aria-label={t("options.remove", { list: "options", number: i + 1 })}>
                  ×
                </button>
              </span>
            )}
          </li>
        ))}
      </ol>
      {selected && (
        <button
          type="button"
          className="canvas-add-option"
          onClick={() => {
            setOptions([...options, { id: newId(), text: t("options.new", { list: "options", number: options.length + 1 }) }]);
            focus(options.length);
          }}
        >
          <span aria-hidden="true">+</span> {t("options.add", { list: "options" })}
        </button>
      )}
    </div>
  );
}
