// The Build tab: the form edited on the form. The blocks are drawn as the hosted page draws them, in the
// form's theme, and every text is edited where it shows (the title, a question, its description, its
// options, a heading's or a paragraph's text). The block that has the focus is selected: its settings
// (required, answer key, a type's own settings, move and delete) open under it, the others stay as the
// respondent sees them. A line at the end (or after a block, by Enter) inserts a block by typing `/` and
// its name (BlockInserter.tsx). Blocks move by dragging their handle or with the keyboard (SortableBlocks).
// Undo and redo step through the form page's history of drafts; saving is automatic (FormPage.tsx).
// Hidden fields, calculated fields and logic follow the form, folded until opened. A block on the canvas is
// BlockEditor.tsx's; hidden and calculated fields are ExtraFields.tsx's.
import { useEffect, useId, useRef, useState, type ReactNode } from "react";
import { SortableBlocks } from "../components/SortableBlocks.tsx";
import { InlineMessage } from "../components/ui.tsx";
import { formatDateTime } from "../lib/format.ts";
import { canvasThemeStyle } from "../lib/form-theme.ts";
import { reorder } from "../lib/reorder.ts";
import { blockSummary, blockTypeLabels, blockTypes, isInputType, moveItem, newBlock, removeItem, replaceItem, type Draft, type EditableBlock } from "../lib/document.ts";
import type { BlockType, Form } from "../types.ts";
import { BlockInserter } from "./BlockInserter.tsx";
import { LivePreview } from "./LivePreview.tsx";
import { LogicEditor } from "./LogicEditor.tsx";
import { t, type MessageKey } from "../i18n/messages.ts";
import { AutoTextarea, BlockEditor, onEnter, useFocusAfterRender } from "./BlockEditor.tsx";
import { CalculatedFieldProblems, CalculatedFieldsEditor, HiddenFieldsEditor } from "./ExtraFields.tsx";

/** Where the draft stands against the stored form, as the editor's status line says it. */
export type SaveState =
  | { kind: "saved" }
  | { kind: "unsaved" }
  | { kind: "saving" }
  | { kind: "problems" }
  | { kind: "failed"; message: string }
  /** Someone else saved the form since this draft was loaded or saved: nothing is saved until the person chooses. */
  | { kind: "conflict"; theirs: Form };

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
