// What a form keeps besides its blocks, below the Build tab's canvas: hidden fields (filled from the link's
// query), calculated fields (a formula over the answers), and the calculated fields that stored nothing lately.
import { useId } from "react";
import { expressionLimits } from "@formsvc/form-document/block-types";
import { expressionProblem } from "@formsvc/form-document/expression-cost";
import { get } from "../api.ts";
import { InlineMessage, useLoad } from "../components/ui.tsx";
import { formatDateTime } from "../lib/format.ts";
import { isInputType, removeItem, replaceItem, type Draft } from "../lib/document.ts";
import { t, type MessageKey } from "../i18n/messages.ts";
import { tRich } from "../i18n/react.tsx";

export function HiddenFieldsEditor({ draft, onChange }: { draft: Draft; onChange(d: Draft): void }) {
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
export function CalculatedFieldProblems({ formId }: { formId: string }) {
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

export function CalculatedFieldsEditor({ draft, onChange }: { draft: Draft; onChange(d: Draft): void }) {
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
