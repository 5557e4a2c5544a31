// The settings a question has by its type, beyond those every question has (question, answer key,
// description, required, placeholder) and beyond what is edited in place on the form (a choice's options,
// a consent's text): a number's range, how many options a multi-select takes, a scale's steps and end
// labels, a matrix's rows and columns. Shown under the selected block. A new type with settings of its own
// adds them here.
import { useId } from "react";
import { moveItem, newId, removeItem, replaceItem, type EditableBlock } from "../lib/document.ts";
import { t } from "../i18n/messages.ts";
import { tRich } from "../i18n/react.tsx";

export function QuestionSettings({ block, blockIndex, onChange }: { block: EditableBlock; blockIndex: number; onChange(b: EditableBlock): void }) {
  const id = useId();
  const set = (patch: Partial<EditableBlock>) => onChange({ ...block, ...patch });
  switch (block.type) {
    case "NUMBER":
      return (
        <div className="grid-2">
          <NumberField label={t("question.smallest")} value={block.min} onChange={(min) => set({ min })} />
          <NumberField label={t("question.largest")} value={block.max} onChange={(max) => set({ max })} />
        </div>
      );
    case "MULTI_SELECT":
      return (
        <div className="grid-2">
          <NumberField label={t("question.fewest")} value={block.min} onChange={(min) => set({ min })} />
          <NumberField label={t("question.most")} value={block.max} onChange={(max) => set({ max })} />
        </div>
      );
    case "RATING":
      return <StepsField id={`${id}-max`} label={t("question.steps")} from={2} value={block.max ?? 5} onChange={(max) => set({ max })} />;
    case "LINEAR_SCALE":
      return (
        <div className="grid-2">
          <StepsField id={`${id}-min`} label={t("question.lowest")} from={0} to={1} value={block.min ?? 1} onChange={(min) => set({ min })} />
          <StepsField id={`${id}-max`} label={t("question.highest")} from={2} value={block.max ?? 5} onChange={(max) => set({ max })} />
          <div className="field">
            <label htmlFor={`${id}-minl`}>{t("question.lowestMeans")}</label>
            <input id={`${id}-minl`} value={block.minLabel ?? ""} maxLength={200} onChange={(e) => set({ minLabel: e.target.value })} />
          </div>
          <div className="field">
            <label htmlFor={`${id}-maxl`}>{t("question.highestMeans")}</label>
            <input id={`${id}-maxl`} value={block.maxLabel ?? ""} maxLength={200} onChange={(e) => set({ maxLabel: e.target.value })} />
          </div>
        </div>
      );
    case "MATRIX":
      return (
        <>
          <OptionsEditor block={block} blockIndex={blockIndex} onChange={onChange} list="rows" />
          <OptionsEditor block={block} blockIndex={blockIndex} onChange={onChange} list="columns" />
          <label className="check">
            <input type="checkbox" checked={block.multiple ?? false} onChange={(e) => set({ multiple: e.target.checked })} /> {t("question.multiple")}
          </label>
        </>
      );
    case "CONSENT":
      // The text itself is edited in place, on the form (Editor.tsx).
      return <p className="hint">{tRich("question.linkHint", { example: <code>[words](https://…)</code> })}</p>;
    default:
      return null;
  }
}

function StepsField({ id, label, from, to = 10, value, onChange }: { id: string; label: string; from: number; to?: number; value: number; onChange(v: number): void }) {
  return (
    <div className="field field-inline">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(Number(e.target.value))}>
        {Array.from({ length: to - from + 1 }, (_, i) => i + from).map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
    </div>
  );
}

function NumberField({ label, value, onChange }: { label: string; value: number | undefined; onChange(v: number | undefined): void }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type="number"
        value={value ?? ""}
        onChange={(e) => onChange(e.target.value === "" ? undefined : Number(e.target.value))}
      />
    </div>
  );
}

/** A list of texts with ids: a choice's options, a matrix's rows or columns. */
export function OptionsEditor({
  block,
  blockIndex,
  onChange,
  list = "options",
}: {
  block: EditableBlock;
  blockIndex: number;
  onChange(b: EditableBlock): void;
  list?: "options" | "rows" | "columns";
}) {
  const options = block[list] ?? [];
  const id = useId();
  const setOptions = (next: EditableBlock["options"]) => onChange({ ...block, [list]: next });
  return (
    <fieldset className="options">
      <legend>{t("options.legend", { list })}</legend>
      <ol>
        {options.map((option, i) => (
          <li key={option.id ?? `new-${i}`} className="option-row">
            <label className="sr-only" htmlFor={`${id}-${i}`}>
              {t("options.item", { list, number: i + 1, block: blockIndex + 1 })}
            </label>
            <input id={`${id}-${i}`} value={option.text} maxLength={1000} onChange={(e) => setOptions(replaceItem(options, i, { ...option, text: e.target.value }))} />
            <button type="button" onClick={() => setOptions(moveItem(options, i, -1))} disabled={i === 0} aria-label={t("options.moveUp", { list, number: i + 1 })}>
              ↑
            </button>
            <button type="button" onClick={() => setOptions(moveItem(options, i, 1))} disabled={i === options.length - 1} aria-label={t("options.moveDown", { list, number: i + 1 })}>
              ↓
            </button>
            <button type="button" onClick={() => setOptions(removeItem(options, i))} disabled={options.length <= 1} aria-label={t("options.remove", { list, number: i + 1 })}>
              {t("editor.remove")}
            </button>
          </li>
        ))}
      </ol>
      <button type="button" onClick={() => setOptions([...options, { id: newId(), text: t("options.new", { list, number: options.length + 1 }) }])}>
        {t("options.add", { list })}
      </button>
    </fieldset>
  );
}
