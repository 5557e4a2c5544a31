// The Build tab: the form edited on the form. The blocks are drawn as the hosted page draws them, in the
// form's theme, and every text is edited where it shows (the title, a question, its description, its
// options, a heading's or a paragraph's text). The block that has the focus is selected: its settings
// (required, answer key, a type's own settings, move and delete) open under it, the others stay as the
// respondent sees them. A line at the end (or after a block, by Enter) inserts a block by typing `/` and
// its name (BlockInserter.tsx). Blocks move by dragging their handle or with the keyboard (SortableBlocks).
// Undo and redo step through the form page's history of drafts; saving is automatic (FormPage.tsx).
// Hidden fields, calculated fields and logic follow the form, folded until opened.
import { useEffect, useId, useLayoutEffect, useRef, useState, type KeyboardEvent, type ReactNode } from "react";
import { expressionLimits } from "@formsvc/form-document/block-types";
import { expressionProblem } from "@formsvc/form-document/expression-cost";
import { get } from "../api.ts";
import { SortableBlocks } from "../components/SortableBlocks.tsx";
import { InlineMessage, useLoad } from "../components/ui.tsx";
import { formatDateTime } from "../lib/format.ts";
import { canvasThemeStyle } from "../lib/form-theme.ts";
import { reorder } from "../lib/reorder.ts";
import {
  blockSummary,
  blockTypeLabels,
  blockTypes,
  isChoiceType,
  isInputType,
  moveItem,
  newBlock,
  newId,
  removeItem,
  replaceItem,
  takesPlaceholder,
  type Draft,
  type EditableBlock,
} from "../lib/document.ts";
import type { BlockType, Form } from "../types.ts";
import { BlockInserter } from "./BlockInserter.tsx";
import type { SaveState } from "./FormPage.tsx";
import { LivePreview } from "./LivePreview.tsx";
import { LogicEditor } from "./LogicEditor.tsx";
import { QuestionSettings } from "./QuestionSettings.tsx";
import { t, type MessageKey } from "../i18n/messages.ts";
import { tRich } from "../i18n/react.tsx";

export interface EditorProps {
  form: Form;
  draft: Draft;
  onChange(next: Draft): void;
  /** Saves now (the autosave does it a second after the last change anyway). */
  onSave(): void;
  saveState: SaveState;
  problems: string[];
  canUndo: boolean;
  canRedo: boolean;
  onUndo(): void;
  onRedo(): void;
  onResolveConflict(choice: "theirs" | "mine"): void;
  /** The block shown selected at first (by its key in the list); none until one is focused. */
  initialSelected?: string;
}

const isHandle = (target: EventTarget) => target instanceof Element && target.closest("[data-sortable-handle]") !== null;

const blockKey = (block: EditableBlock, index: number) => block.id ?? `new-${index}`;

const statusKeys: Record<SaveState["kind"], MessageKey> = {
  saved: "editor.status.saved",
  unsaved: "editor.status.unsaved",
  saving: "editor.saving",
  problems: "editor.status.problems",
  failed: "editor.status.failed",
  conflict: "editor.status.conflict",
};

/** Whether a key press asks for undo or redo: Ctrl/⌘+Z, Ctrl/⌘+Shift+Z, Ctrl+Y. */
export function historyShortcut(e: Pick<globalThis.KeyboardEvent, "key" | "ctrlKey" | "metaKey" | "shiftKey" | "altKey">): "undo" | "redo" | undefined {
  if (!(e.ctrlKey || e.metaKey) || e.altKey) return undefined;
  const key = e.key.toLowerCase();
  if (key === "z") return e.shiftKey ? "redo" : "undo";
  if (key === "y" && !e.shiftKey) return "redo";
  return undefined;
}

/**
 * Focus to move once the change that made its element is on the page: set in an event handler, done in
 * the same task as the render (before the next key press reaches the page), not a frame later.
 */
function useFocusAfterRender(): (find: () => HTMLElement | null | undefined, select?: boolean) => void {
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

export function Editor({ form, draft, onChange, onSave, saveState, problems, canUndo, canRedo, onUndo, onRedo, onResolveConflict, initialSelected }: EditorProps) {
  const listRef = useRef<HTMLOListElement>(null);
  const rootRef = useRef<HTMLDivElement>(null);
  const ids = useId();
  const [selected, setSelected] = useState<string | undefined>(initialSelected);
  /** The block after which an insert line is open (Enter at the end of its text); the end's line is always there. */
  const [lineAfter, setLineAfter] = useState<string>();
  const setBlocks = (blocks: EditableBlock[]) => onChange({ ...draft, blocks });
  const focusAfter = useFocusAfterRender();

  // Undo and redo are the editor's, in its fields too: each field's text is the draft's, so the browser's
  // own undo of a field would step past the history. Caught on the document, so they work after the
  // focused block went away (undone) and focus fell back to the page.
  // Ctrl/⌘+S saves at once, as the browser would offer to save the page instead.
  const history = useRef({ onUndo, onRedo, canUndo, canRedo, onSave });
  history.current = { onUndo, onRedo, canUndo, canRedo, onSave };
  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      const target = e.target as Node | null;
      const inEditor = target === document.body || (target !== null && rootRef.current?.contains(target));
      if (!inEditor || e.defaultPrevented) return;
      if ((e.ctrlKey || e.metaKey) && !e.shiftKey && !e.altKey && e.key.toLowerCase() === "s") {
        e.preventDefault();
        history.current.onSave();
        return;
      }
      const which = historyShortcut(e);
      if (!which) return;
      e.preventDefault();
      if (which === "undo" && history.current.canUndo) history.current.onUndo();
      if (which === "redo" && history.current.canRedo) history.current.onRedo();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);

  /** After a move, focus follows the moved block's button so keyboard users keep their place. */
  const move = (index: number, delta: number, which: "up" | "down") => {
    setBlocks(moveItem(draft.blocks, index, delta));
    requestAnimationFrame(() => {
      const target = listRef.current?.querySelector<HTMLButtonElement>(`[data-block-index="${index + delta}"] [data-move="${which}"]`);
      (target && !target.disabled ? target : listRef.current?.querySelector<HTMLElement>(`[data-block-index="${index + delta}"] [data-sortable-handle]`))?.focus();
    });
  };

  /** Inserts a new block of `type` at `index`, selects it and puts the cursor in its first text (its words selected, to be typed over). */
  const insert = (type: BlockType, index: number, text?: string) => {
    const block = newBlock(type);
    if (text !== undefined) block.text = text;
    setBlocks([...draft.blocks.slice(0, index), block, ...draft.blocks.slice(index)]);
    setSelected(blockKey(block, index));
    if (type === "PAGE_BREAK" || text !== undefined) {
      // Nothing to type in: the next line waits after it.
      setLineAfter(block.id);
      focusAfter(() => document.getElementById(`${ids}-line-${block.id}`));
    } else {
      setLineAfter(undefined);
      focusAfter(() => listRef.current?.querySelector<HTMLElement>(`[data-block-index="${index}"] [data-first-text]`), true);
    }
  };

  /** Enter at the end of a block's text: a new insert line after it. */
  const openLineAfter = (block: EditableBlock) => {
    if (!block.id) return;
    const open = document.getElementById(`${ids}-line-${block.id}`);
    if (open) open.focus();
    else {
      setLineAfter(block.id);
      focusAfter(() => document.getElementById(`${ids}-line-${block.id}`));
    }
  };

  const line = (index: number, after?: string) => (
    <BlockInserter
      id={after ? `${ids}-line-${after}` : `${ids}-line-end`}
      onInsert={(type, text) => insert(type, index, text)}
      onLeave={after ? () => setLineAfter((current) => (current === after ? undefined : current)) : undefined}
    />
  );

  const status = t(statusKeys[saveState.kind], saveState.kind === "failed" ? { message: saveState.message } : undefined);
  const showProblems = (saveState.kind === "problems" || saveState.kind === "failed") && problems.length > 0;

  return (
    <div className="editor-layout">
      <div className="editor" ref={rootRef}>
        <div className="editor-toolbar">
          <h2 className="sr-only">{t("editor.blocks")}</h2>
          <div className="field field-inline editor-name">
            <label htmlFor={`${ids}-name`}>{t("editor.formName")}</label>
            <input id={`${ids}-name`} value={draft.name} maxLength={200} required aria-describedby={`${ids}-name-hint`} onChange={(e) => onChange({ ...draft, name: e.target.value })} />
            <span className="sr-only" id={`${ids}-name-hint`}>
              {t("editor.formNameHint")}
            </span>
          </div>
          <div className="editor-history">
            <button type="button" onClick={onUndo} disabled={!canUndo} aria-keyshortcuts="Control+Z Meta+Z">
              <span aria-hidden="true">↶</span> {t("editor.undo")}
            </button>
            <button type="button" onClick={onRedo} disabled={!canRedo} aria-keyshortcuts="Control+Shift+Z Meta+Shift+Z Control+Y">
              <span aria-hidden="true">↷</span> {t("editor.redo")}
            </button>
          </div>
          <p className="save-status" role="status" data-state={saveState.kind}>
            {status}
          </p>
          <button type="button" className="primary" onClick={onSave} aria-keyshortcuts="Control+S Meta+S" disabled={saveState.kind === "saved" || saveState.kind === "saving" || saveState.kind === "conflict"}>
            {saveState.kind === "saving" ? t("editor.saving") : saveState.kind === "saved" ? t("editor.saved") : t("editor.save")}
          </button>
        </div>
        <p className="muted editor-note">{form.status === "draft" ? t("editor.draftNote") : t("editor.publishedNote")}</p>

        {saveState.kind === "conflict" && (
          <InlineMessage kind="error">
            <p>{t("editor.conflict", { when: formatDateTime(saveState.theirs.updatedAt) })}</p>
            <div className="row">
              <button type="button" onClick={() => onResolveConflict("theirs")}>
                {t("editor.conflictTheirs")}
              </button>
              <button type="button" className="danger-outline" onClick={() => onResolveConflict("mine")}>
                {t("editor.conflictMine")}
              </button>
            </div>
          </InlineMessage>
        )}

        {showProblems && (
          <InlineMessage kind="error">
            <p>{t("editor.cannotSave")}</p>
            <ul>
              {problems.map((p) => (
                <li key={p}>{p}</li>
              ))}
            </ul>
          </InlineMessage>
        )}

        <section className="canvas" style={canvasThemeStyle(form.settings?.theme)} aria-label={t("editor.canvas")}>
          {form.settings?.theme?.logo && (
            <p className="canvas-logo">
              <img src={form.settings.theme.logo} alt={t("design.logo")} />
            </p>
          )}
          <div className="canvas-card">
            <AutoTextarea
              className="canvas-title"
              label={t("editor.pageTitle")}
              describedBy={`${ids}-title-hint`}
              placeholder={draft.name || t("editor.pageTitle")}
              value={draft.title}
              maxLength={200}
              onChange={(title) => onChange({ ...draft, title })}
              onKeyDown={onEnter(() => undefined)}
            />
            <span className="sr-only" id={`${ids}-title-hint`}>
              {t("editor.pageTitleHint")}
            </span>
            <SortableBlocks
              className="blocks"
              listRef={listRef}
              items={draft.blocks}
              itemKey={blockKey}
              itemLabel={(block, index) => t("editor.itemLabel", { number: index + 1, summary: blockSummary(block) })}
              itemProps={(block, index) => ({
                className: `block block-${block.type.toLowerCase()}${selected === blockKey(block, index) ? " block-selected" : ""}`,
                "data-block-index": index,
                "data-block-type": block.type,
                "data-selected": selected === blockKey(block, index) ? "true" : undefined,
                // The drag handle does not select: a block opening its settings as it is lifted would move the others.
                onFocus: (e) => !isHandle(e.target) && setSelected(blockKey(block, index)),
                onClick: (e) => !isHandle(e.target) && setSelected(blockKey(block, index)),
                // A block dragged by the pointer folds its settings, so it is dragged at the size of its neighbours.
                onPointerDownCapture: (e) => isHandle(e.target) && setSelected(undefined),
              })}
              onReorder={(from, to) => setBlocks(reorder(draft.blocks, from, to))}
              renderItem={(block, index, handle) => (
                <>
                  <BlockEditor
                    block={block}
                    index={index}
                    count={draft.blocks.length}
                    handle={handle}
                    selected={selected === blockKey(block, index)}
                    onChange={(b) => setBlocks(replaceItem(draft.blocks, index, b))}
                    onMove={(delta, which) => move(index, delta, which)}
                    onEnter={() => openLineAfter(block)}
                    onDelete={() => {
                      setBlocks(removeItem(draft.blocks, index));
                      setSelected(undefined);
                      focusAfter(() => document.getElementById(`${ids}-line-end`));
                    }}
                  />
                  {block.id && lineAfter === block.id && line(index + 1, block.id)}
                </>
              )}
            />
            {draft.blocks.length === 0 && <p className="canvas-empty">{t("editor.noBlocks")}</p>}
            {line(draft.blocks.length)}
            <AddBlock onAdd={(type) => insert(type, draft.blocks.length)} />
            <p className="canvas-submit">
              <span className="canvas-button">{form.settings?.submitLabel || t("editor.submit")}</span>
            </p>
          </div>
        </section>

        <Folded title={t("editor.hiddenFields")} count={t("editor.countFields", { count: draft.hiddenFields.length })} open={draft.hiddenFields.length > 0}>
          <HiddenFieldsEditor draft={draft} onChange={onChange} />
        </Folded>
        <Folded title={t("editor.calculatedFields")} count={t("editor.countFields", { count: draft.calculatedFields.length })} open={draft.calculatedFields.length > 0}>
          <CalculatedFieldsEditor draft={draft} onChange={onChange} />
        </Folded>
        <Folded title={t("logic.title")} count={t("editor.countRules", { count: draft.logic?.length ?? 0 })} open={(draft.logic?.length ?? 0) > 0}>
          <LogicEditor draft={draft} onChange={onChange} />
        </Folded>
        <CalculatedFieldProblems formId={form.id} />
      </div>
      <LivePreview formId={form.id} draft={draft} />
    </div>
  );
}

/** A part of the form folded until opened (open at first when it has something), its count beside its title. */
function Folded({ title, count, open, children }: { title: string; count: string; open: boolean; children: ReactNode }) {
  const [isOpen, setOpen] = useState(open);
  return (
    <details className="card folded" open={isOpen} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>
        <span className="folded-title">{title}</span> <span className="muted">{count}</span>
      </summary>
      {children}
    </details>
  );
}

/** The mouse's way to add a block: a type from the list and a button, at the end of the form. */
function AddBlock({ onAdd }: { onAdd(type: BlockType): void }) {
  const id = useId();
  const [type, setType] = useState<BlockType>("SHORT_TEXT");
  return (
    <div className="add-block">
      <label htmlFor={`${id}-type`}>{t("editor.blockType")}</label>
      <select id={`${id}-type`} value={type} onChange={(e) => setType(e.target.value as BlockType)}>
        <BlockTypeOptions />
      </select>
      <button type="button" onClick={() => onAdd(type)}>
        <span aria-hidden="true">+</span> {t("editor.addBlock")}
      </button>
    </div>
  );
}

function BlockTypeOptions() {
  const types: readonly BlockType[] = blockTypes;
  return (
    <>
      <optgroup label={t("editor.questions")}>
        {types.filter(isInputType).map((type) => (
          <option key={type} value={type}>
            {blockTypeLabels[type]}
          </option>
        ))}
      </optgroup>
      <optgroup label={t("editor.layout")}>
        {types
          .filter((type) => !isInputType(type))
          .map((type) => (
            <option key={type} value={type}>
              {blockTypeLabels[type]}
            </option>
          ))}
      </optgroup>
    </>
  );
}

/** Enter in a one-line text: the caller opens an insert line after the block. */
const onEnter = (f: () => void) => (e: KeyboardEvent<HTMLInputElement | HTMLTextAreaElement>) => {
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
function AutoTextarea({
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

function HiddenFieldsEditor({ draft, onChange }: { draft: Draft; onChange(d: Draft): void }) {
  const id = useId();
  const fields = draft.hiddenFields;
  return (
    <fieldset className="folded-body">
      <legend className="sr-only">{t("editor.hiddenFields")}</legend>
      <p className="hint">{tRich("editor.hiddenFieldsHint", { example: <code>/f/…?utm_source=newsletter</code> })}</p>
      {fields.length === 0 && <p className="muted">{t("editor.noHiddenFields")}</p>}
      <ul className="plain-list">
        {fields.map((field, i) => (
          <li key={i} className="option-row">
            <label htmlFor={`${id}-${i}`}>{t("editor.hiddenFieldName", { number: i + 1 })}</label>
            <input id={`${id}-${i}`} value={field.name} maxLength={64} onChange={(e) => onChange({ ...draft, hiddenFields: replaceItem(fields, i, { name: e.target.value }) })} />
            <button type="button" onClick={() => onChange({ ...draft, hiddenFields: removeItem(fields, i) })} aria-label={t("editor.removeHiddenField", { number: i + 1 })}>
              {t("editor.remove")}
            </button>
          </li>
        ))}
      </ul>
      <button type="button" onClick={() => onChange({ ...draft, hiddenFields: [...fields, { name: fields.length === 0 ? "utm_source" : `field_${fields.length + 1}` }] })}>
        {t("editor.addHiddenField")}
      </button>
    </fieldset>
  );
}

interface CalculatedFieldProblem {
  field: string;
  reason: "deadline" | "queued" | "busy" | "unavailable";
  count: number;
  lastAt: string;
}

const cutOffReasons: Record<CalculatedFieldProblem["reason"], MessageKey> = {
  deadline: "editor.cutOff.deadline",
  queued: "editor.cutOff.queued",
  busy: "editor.cutOff.busy",
  unavailable: "editor.cutOff.unavailable",
};

/** Calculated fields that stored null on some responses, and why (reported by submissions). */
function CalculatedFieldProblems({ formId }: { formId: string }) {
  const problems = useLoad(() => get<{ items: CalculatedFieldProblem[] }>(`/forms/${formId}/calculated-field-problems`), [formId]);
  const items = problems.data?.items ?? [];
  if (items.length === 0) return null;
  return (
    <InlineMessage kind="error">
      <p>
        <strong>{t("editor.calcProblems")}</strong>
      </p>
      <ul className="calc-problems">
        {items.map((p) => (
          <li key={`${p.field}:${p.reason}`}>
            {p.field === "*" ? t("editor.allCalculated") : <code>{p.field}</code>}{" "}
            {t("editor.calcProblem", { reason: t(cutOffReasons[p.reason]), count: p.count, last: formatDateTime(p.lastAt) })}
          </li>
        ))}
      </ul>
      <p>{t("editor.calcTimeLimit")}</p>
    </InlineMessage>
  );
}

function CalculatedFieldsEditor({ draft, onChange }: { draft: Draft; onChange(d: Draft): void }) {
  const id = useId();
  const fields = draft.calculatedFields;
  const keys = draft.blocks.filter((b) => isInputType(b.type) && b.key).map((b) => b.key!);
  return (
    <fieldset className="folded-body">
      <legend className="sr-only">{t("editor.calculatedFields")}</legend>
      <div className="hint" id={`${id}-help`}>
        <p>
          {tRich("editor.calcHint", {
            keys: keys.length > 0 ? <> ({keys.map((k, i) => <span key={k}>{i > 0 && ", "}<code>{k}</code></span>)})</> : "",
            hidden: <code>hidden</code>,
          })}
        </p>
        <ul className="formula-examples">
          <li>{tRich("editor.calcExampleDouble", { formula: <code>q_rating * 2</code> })}</li>
          <li>{tRich("editor.calcExampleJoin", { formula: <code>{'q_name + " (" + hidden.utm_source + ")"'}</code> })}</li>
          <li>{tRich("editor.calcExampleChoose", { formula: <code>{'q_rating >= 4 ? "happy" : "unhappy"'}</code> })}</li>
        </ul>
      </div>
      {fields.length === 0 && <p className="muted">{t("editor.noCalculatedFields")}</p>}
      <ul className="plain-list">
        {fields.map((field, i) => {
          // The save check, as it is typed (an empty one is named when saving).
          const problem = field.expression.trim() ? expressionProblem(field.expression) : undefined;
          return (
            <li key={i} className="calc-row">
              <div className="field">
                <label htmlFor={`${id}-${i}-name`}>{t("editor.calcName", { number: i + 1 })}</label>
                <input id={`${id}-${i}-name`} value={field.name} maxLength={64} onChange={(e) => onChange({ ...draft, calculatedFields: replaceItem(fields, i, { ...field, name: e.target.value }) })} />
              </div>
              <div className="field">
                <label htmlFor={`${id}-${i}-type`}>{t("editor.calcType", { number: i + 1 })}</label>
                <select id={`${id}-${i}-type`} value={field.type} onChange={(e) => onChange({ ...draft, calculatedFields: replaceItem(fields, i, { ...field, type: e.target.value as "NUMBER" | "TEXT" }) })}>
                  <option value="NUMBER">{t("editor.calcNumber")}</option>
                  <option value="TEXT">{t("editor.calcText")}</option>
                </select>
              </div>
              <div className="field calc-expression">
                <label htmlFor={`${id}-${i}-expr`}>{t("editor.calcExpression", { number: i + 1 })}</label>
                <input
                  id={`${id}-${i}-expr`}
                  value={field.expression}
                  maxLength={expressionLimits.chars}
                  aria-invalid={problem ? true : undefined}
                  aria-describedby={problem ? `${id}-help ${id}-${i}-problem` : `${id}-help`}
                  onChange={(e) => onChange({ ...draft, calculatedFields: replaceItem(fields, i, { ...field, expression: e.target.value }) })}
                />
                {problem && (
                  <p className="error-text" id={`${id}-${i}-problem`}>
                    {t("editor.expressionProblem", { problem })}
                  </p>
                )}
              </div>
              <button type="button" onClick={() => onChange({ ...draft, calculatedFields: removeItem(fields, i) })} aria-label={t("editor.removeCalc", { number: i + 1 })}>
                {t("editor.remove")}
              </button>
            </li>
          );
        })}
      </ul>
      <button type="button" onClick={() => onChange({ ...draft, calculatedFields: [...fields, { name: `score${fields.length ? fields.length + 1 : ""}`, type: "NUMBER", expression: "" }] })}>
        {t("editor.addCalc")}
      </button>
    </fieldset>
  );
}
