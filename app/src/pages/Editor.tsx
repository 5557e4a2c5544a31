// The editor of the v1 form document: blocks of every type (add, reorder by dragging or with buttons, edit, delete),
// question text, field name (the column's name), required, options, hidden fields and calculated fields.
import { useId, useRef, useState, type ReactNode } from "react";
import { expressionLimits } from "@formsvc/form-document/block-types";
import { expressionProblem } from "@formsvc/form-document/expression-cost";
import { get } from "../api.ts";
import { SortableBlocks } from "../components/SortableBlocks.tsx";
import { InlineMessage, useLoad } from "../components/ui.tsx";
import { formatDateTime } from "../lib/format.ts";
import { reorder } from "../lib/reorder.ts";
import {
  blockSummary,
  blockTypeLabels,
  blockTypes,
  isChoiceType,
  isInputType,
  moveItem,
  newBlock,
  removeItem,
  replaceItem,
  takesPlaceholder,
  type Draft,
  type EditableBlock,
} from "../lib/document.ts";
import type { BlockType, Form } from "../types.ts";
import { LivePreview } from "./LivePreview.tsx";
import { LogicEditor } from "./LogicEditor.tsx";
import { OptionsEditor, QuestionSettings } from "./QuestionSettings.tsx";
import { t, type MessageKey } from "../i18n/messages.ts";
import { tRich } from "../i18n/react.tsx";

interface EditorProps {
  form: Form;
  draft: Draft;
  onChange(next: Draft): void;
  onSave(): void;
  saving: boolean;
  dirty: boolean;
  problems: string[];
}

export function Editor({ form, draft, onChange, onSave, saving, dirty, problems }: EditorProps) {
  const [newType, setNewType] = useState<BlockType>("SHORT_TEXT");
  const listRef = useRef<HTMLOListElement>(null);
  const ids = useId();
  const setBlocks = (blocks: EditableBlock[]) => onChange({ ...draft, blocks });

  /** After a move, focus follows the moved block's button so keyboard users keep their place. */
  const move = (index: number, delta: number, which: "up" | "down") => {
    setBlocks(moveItem(draft.blocks, index, delta));
    requestAnimationFrame(() => {
      const target = listRef.current?.querySelector<HTMLButtonElement>(`[data-block-index="${index + delta}"] [data-move="${which}"]`);
      (target && !target.disabled ? target : listRef.current?.querySelector<HTMLElement>(`[data-block-index="${index + delta}"] .block-title`))?.focus();
    });
  };

  const add = () => {
    const blocks = [...draft.blocks, newBlock(newType)];
    setBlocks(blocks);
    requestAnimationFrame(() => {
      const last = listRef.current?.querySelector<HTMLElement>(`[data-block-index="${blocks.length - 1}"] input, [data-block-index="${blocks.length - 1}"] textarea`);
      (last ?? listRef.current?.querySelector<HTMLElement>(`[data-block-index="${blocks.length - 1}"] .block-title`))?.focus();
    });
  };

  return (
    <div className="editor-layout">
      <form
        className="editor"
        onSubmit={(e) => {
          e.preventDefault();
          onSave();
        }}
      >
        <div className="editor-bar">
          <p className="muted">
            {form.status === "draft"
              ? t("editor.draftNote")
              : t("editor.publishedNote")}
          </p>
          <button type="submit" className="primary" disabled={saving || !dirty}>
            {saving ? t("editor.saving") : dirty ? t("editor.save") : t("editor.saved")}
          </button>
        </div>

        {problems.length > 0 && (
          <InlineMessage kind="error">
            <p>{t("editor.cannotSave")}</p>
            <ul>
              {problems.map((p) => (
                <li key={p}>{p}</li>
              ))}
            </ul>
          </InlineMessage>
        )}

        <fieldset className="card">
          <legend>{t("editor.form")}</legend>
          <div className="grid-2">
            <div className="field">
              <label htmlFor={`${ids}-name`}>{t("editor.formName")}</label>
              <input id={`${ids}-name`} value={draft.name} maxLength={200} required onChange={(e) => onChange({ ...draft, name: e.target.value })} />
              <p className="hint">{t("editor.formNameHint")}</p>
            </div>
            <div className="field">
              <label htmlFor={`${ids}-title`}>{t("editor.pageTitle")}</label>
              <input id={`${ids}-title`} value={draft.title} maxLength={200} onChange={(e) => onChange({ ...draft, title: e.target.value })} />
              <p className="hint">{t("editor.pageTitleHint")}</p>
            </div>
          </div>
        </fieldset>

        <h2 className="section-title">{t("editor.blocks")}</h2>
        {draft.blocks.length === 0 && (
          <div className="state state-empty">
            <p>{t("editor.noBlocks")}</p>
          </div>
        )}
        <SortableBlocks
          className="blocks"
          listRef={listRef}
          items={draft.blocks}
          itemKey={(block, index) => block.id ?? `new-${index}`}
          itemLabel={(block, index) => t("editor.itemLabel", { number: index + 1, summary: blockSummary(block) })}
          itemProps={(block, index) => ({ className: `card block block-${block.type.toLowerCase()}`, "data-block-index": index, "data-block-type": block.type })}
          onReorder={(from, to) => setBlocks(reorder(draft.blocks, from, to))}
          renderItem={(block, index, handle) => (
            <BlockEditor
              block={block}
              index={index}
              count={draft.blocks.length}
              handle={handle}
              onChange={(b) => setBlocks(replaceItem(draft.blocks, index, b))}
              onMove={(delta, which) => move(index, delta, which)}
              onDelete={() => {
                setBlocks(removeItem(draft.blocks, index));
                requestAnimationFrame(() => document.getElementById(`${ids}-add-type`)?.focus());
              }}
            />
          )}
        />

        <div className="card add-block">
          <div className="field">
            <label htmlFor={`${ids}-add-type`}>{t("editor.blockType")}</label>
            <select id={`${ids}-add-type`} value={newType} onChange={(e) => setNewType(e.target.value as BlockType)}>
              <optgroup label={t("editor.questions")}>
                {blockTypes.filter(isInputType).map((type) => (
                  <option key={type} value={type}>
                    {blockTypeLabels[type]}
                  </option>
                ))}
              </optgroup>
              <optgroup label={t("editor.layout")}>
                {blockTypes
                  .filter((type) => !isInputType(type))
                  .map((type) => (
                    <option key={type} value={type}>
                      {blockTypeLabels[type]}
                    </option>
                  ))}
              </optgroup>
            </select>
          </div>
          <button type="button" onClick={add}>
            {t("editor.addBlock")}
          </button>
        </div>

        <HiddenFieldsEditor draft={draft} onChange={onChange} />
        <CalculatedFieldsEditor draft={draft} onChange={onChange} />
        <LogicEditor draft={draft} onChange={onChange} />
        <CalculatedFieldProblems formId={form.id} />

        <div className="editor-bar editor-bar-end">
          <button type="submit" className="primary" disabled={saving || !dirty}>
            {saving ? t("editor.saving") : dirty ? t("editor.save") : t("editor.saved")}
          </button>
        </div>
      </form>
      <LivePreview formId={form.id} draft={draft} />
    </div>
  );
}

/** One block's fields; its `<li>` (and the drag handle's behaviour) is SortableBlocks'. */
function BlockEditor({
  block,
  index,
  count,
  handle,
  onChange,
  onMove,
  onDelete,
}: {
  block: EditableBlock;
  index: number;
  count: number;
  handle: ReactNode;
  onChange(b: EditableBlock): void;
  onMove(delta: number, which: "up" | "down"): void;
  onDelete(): void;
}) {
  const id = useId();
  const label = t("editor.blockLabel", { number: index + 1, type: blockTypeLabels[block.type] });
  const set = (patch: Partial<EditableBlock>) => onChange({ ...block, ...patch });
  const input = isInputType(block.type);
  return (
    <fieldset aria-labelledby={`${id}-title`}>
      <div className="block-head">
        {handle}
        <h3 className="block-title" id={`${id}-title`} tabIndex={-1}>
          <span className="block-number">{index + 1}.</span> {blockTypeLabels[block.type]}
          <span className="block-summary"> — {blockSummary(block)}</span>
        </h3>
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
      <span className="sr-only">{label}</span>

      {input && (
        <>
          <div className="field">
            <label htmlFor={`${id}-q`}>{t("editor.question")}</label>
            <input id={`${id}-q`} value={block.question ?? ""} maxLength={1000} onChange={(e) => set({ question: e.target.value })} />
          </div>
          <div className="grid-2">
            <div className="field">
              <label htmlFor={`${id}-fn`}>{t("editor.fieldName")}</label>
              <input
                id={`${id}-fn`}
                value={block.fieldName ?? ""}
                maxLength={200}
                aria-describedby={`${id}-fn-hint`}
                onChange={(e) => set({ fieldName: e.target.value })}
              />
              <p className="hint" id={`${id}-fn-hint`}>
                {t("editor.fieldNameHint")}
                {block.key && <> {tRich("editor.fieldKey", { key: <code>{block.key}</code>, recall: <code>{`{{${block.key}}}`}</code> })}</>}
              </p>
            </div>
            <div className="field">
              <label htmlFor={`${id}-desc`}>{t("editor.description")}</label>
              <input id={`${id}-desc`} value={block.description ?? ""} maxLength={5000} onChange={(e) => set({ description: e.target.value })} />
            </div>
          </div>
          <div className="row">
            <label className="check">
              <input type="checkbox" checked={block.required ?? false} onChange={(e) => set({ required: e.target.checked })} /> {t("editor.required")}
            </label>
            {takesPlaceholder(block.type) && (
              <div className="field field-inline">
                <label htmlFor={`${id}-ph`}>{t("editor.placeholder")}</label>
                <input id={`${id}-ph`} value={block.placeholder ?? ""} maxLength={500} onChange={(e) => set({ placeholder: e.target.value })} />
              </div>
            )}
          </div>
        </>
      )}

      <QuestionSettings block={block} blockIndex={index} onChange={onChange} />

      {isChoiceType(block.type) && <OptionsEditor block={block} blockIndex={index} onChange={onChange} />}

      {(block.type === "HEADING" || block.type === "PARAGRAPH") && (
        <div className="field">
          <label htmlFor={`${id}-text`}>{block.type === "HEADING" ? t("editor.headingText") : t("editor.paragraphText")}</label>
          {block.type === "HEADING" ? (
            <input id={`${id}-text`} value={block.text ?? ""} maxLength={5000} onChange={(e) => set({ text: e.target.value })} />
          ) : (
            <textarea id={`${id}-text`} value={block.text ?? ""} maxLength={5000} rows={3} onChange={(e) => set({ text: e.target.value })} />
          )}
        </div>
      )}

      {block.type === "PAGE_BREAK" && <p className="muted">{t("editor.pageBreakNote")}</p>}
    </fieldset>
  );
}

function HiddenFieldsEditor({ draft, onChange }: { draft: Draft; onChange(d: Draft): void }) {
  const id = useId();
  const fields = draft.hiddenFields;
  return (
    <fieldset className="card">
      <legend>{t("editor.hiddenFields")}</legend>
      <p className="hint">{tRich("editor.hiddenFieldsHint", { example: <code>/f/…?utm_source=newsletter</code> })}</p>
      {fields.length === 0 && <p className="muted">{t("editor.noHiddenFields")}</p>}
      <ul className="plain-list">
        {fields.map((field, i) => (
          <li key={i} className="option-row">
            <label htmlFor={`${id}-${i}`}>{t("editor.hiddenFieldName", { number: i + 1 })}</label>
            <input id={`${id}-${i}`} value={field.name} maxLength={64} onChange={(e) => onChange({ ...draft, hiddenFields: replaceItem(fields, i, { name: e.target.value })})} />
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
    <fieldset className="card">
      <legend>{t("editor.calculatedFields")}</legend>
      <p className="hint" id={`${id}-help`}>
        {tRich("editor.calcHint", {
          first: <code>q_rating * 2</code>,
          second: <code>{'q_name + " (" + hidden.utm_source + ")"'}</code>,
          keys: keys.length > 0 ? <> ({keys.map((k, i) => <span key={k}>{i > 0 && ", "}<code>{k}</code></span>)})</> : "",
          hidden: <code>hidden</code>,
        })}
      </p>
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
