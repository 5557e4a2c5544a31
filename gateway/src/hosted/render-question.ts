// One block of a hosted form as HTML: each question type's field (with the value posted before and its
// error), headings and paragraphs, recalled texts filled in. Every value is escaped.
import { maxUploadBytes, questionTypes, scaleOf, type Block, type InputBlock } from "@formsvc/form-document";
import { escapeHtml } from "./html-text.ts";
import { matrixField, type FieldValue, type FieldValues } from "./form-fields.ts";
import { recalledHtml, recalledText, type RecallValues } from "./recall.ts";
import { type PageTexts } from "./page-messages.ts";

function valueOf(values: FieldValues | undefined, key: string): string {
  const v: FieldValue | undefined = values?.[key];
  return Array.isArray(v) ? (v[0] ?? "") : (v ?? "");
}

function valuesOf(values: FieldValues | undefined, key: string): string[] {
  const v = values?.[key];
  return Array.isArray(v) ? v : v === undefined ? [] : [v];
}


/** A consent's text: plain text, except `[words](https://…)`, which shows a link (http and https only). */
export function consentHtml(text: string): string {
  const link = /\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)/g;
  let html = "";
  let at = 0;
  for (const match of text.matchAll(link)) {
    html += escapeHtml(text.slice(at, match.index));
    html += URL.canParse(match[2]) ? `<a href="${escapeHtml(match[2])}" target="_blank" rel="noopener noreferrer">${escapeHtml(match[1])}</a>` : escapeHtml(match[0]);
    at = match.index + match[0].length;
  }
  return html + escapeHtml(text.slice(at));
}

const inputTypes: Record<string, { type: string; autocomplete?: string; inputmode?: string }> = {
  SHORT_TEXT: { type: "text" },
  EMAIL: { type: "email", autocomplete: "email" },
  NUMBER: { type: "number" },
  PHONE: { type: "tel", autocomplete: "tel" },
  URL: { type: "url", inputmode: "url" },
  DATE: { type: "date" },
  TIME: { type: "time" },
};

export function attrs(list: Record<string, string | number | boolean | undefined>): string {
  return Object.entries(list)
    .filter(([, v]) => v !== undefined && v !== false)
    .map(([name, v]) => (v === true ? ` ${name}` : ` ${name}="${escapeHtml(v)}"`))
    .join("");
}

export interface QuestionContext {
  values?: FieldValues;
  errors?: Record<string, string>;
  /** Headings and paragraphs carry their block ids (for the script of a form with logic rules). */
  blockIds?: boolean;
  /** What the texts recall (recall.ts), by name. */
  recall?: RecallValues;
  texts: PageTexts;
}

function renderQuestion(block: InputBlock, ctx: QuestionContext): string {
  const id = `q-${block.id ?? block.key}`;
  const key = block.key!;
  const required = block.required === true;
  const error = ctx.errors?.[key] ?? "";
  const descId = block.description ? `${id}-desc` : undefined;
  const errorId = `${id}-error`;
  const describedBy = [descId, errorId].filter(Boolean).join(" ");
  const t = ctx.texts.text;
  const requiredMark = required ? ` <span class="hf-required">${escapeHtml(t("required"))}</span>` : "";
  const description = block.description ? `<p class="hf-desc" id="${escapeHtml(descId)}">${recalledHtml(block.description, ctx.recall, true)}</p>` : "";
  const errorLine = `<p class="hf-error" id="${escapeHtml(errorId)}" role="alert">${escapeHtml(error)}</p>`;
  const wrapAttrs = attrs({
    class: "hf-q",
    id: `${id}-field`,
    "data-block": block.id,
    "data-key": key,
    "data-type": block.type,
    "data-answer": questionTypes[block.type].answer,
    "data-required": required ? "true" : undefined,
    "data-question": recalledText(block.question, ctx.recall),
  });
  const invalid = error ? "true" : undefined;

  const simpleField = (control: string) =>
    `<div${wrapAttrs}>\n<label class="hf-label" for="${escapeHtml(id)}">${recalledHtml(block.question, ctx.recall)}${requiredMark}</label>\n${description}${control}\n${errorLine}\n</div>`;

  const group = (control: string, role?: string) =>
    `<fieldset${wrapAttrs}${attrs({ role, "aria-required": role && required ? "true" : undefined, "aria-describedby": describedBy })}>\n<legend class="hf-label">${recalledHtml(block.question, ctx.recall)}${requiredMark}</legend>\n${description}${control}\n${errorLine}\n</fieldset>`;

  switch (block.type) {
    case "LONG_TEXT":
      return simpleField(
        `<textarea${attrs({ id, name: key, rows: 5, required, "aria-required": required ? "true" : undefined, "aria-describedby": describedBy, "aria-invalid": invalid, placeholder: block.placeholder })}>${escapeHtml(valueOf(ctx.values, key))}</textarea>`,
      );
    case "MULTIPLE_CHOICE":
    case "CHECKBOXES": {
      const type = block.type === "MULTIPLE_CHOICE" ? "radio" : "checkbox";
      const chosen = new Set(valuesOf(ctx.values, key));
      const options = block.options
        .map((option) => {
          const optionId = `${id}-${option.id}`;
          return `<div class="hf-option"><input${attrs({ type, id: optionId, name: key, value: option.id, checked: chosen.has(option.id ?? ""), required: type === "radio" && required, "aria-invalid": invalid })}><label for="${escapeHtml(optionId)}">${escapeHtml(option.text)}</label></div>`;
        })
        .join("\n");
      return group(`<div class="hf-options">\n${options}\n</div>`, type === "radio" ? "radiogroup" : undefined);
    }
    case "MULTI_SELECT": {
      // A list in a disclosure, searchable with the script: every option a checkbox, so it posts without one.
      const chosen = new Set(valuesOf(ctx.values, key));
      const options = block.options
        .map((option) => {
          const optionId = `${id}-${option.id}`;
          return `<div class="hf-option"><input${attrs({ type: "checkbox", id: optionId, name: key, value: option.id, checked: chosen.has(option.id ?? ""), "aria-invalid": invalid })}><label for="${escapeHtml(optionId)}">${escapeHtml(option.text)}</label></div>`;
        })
        .join("\n");
      const count = chosen.size > 0 ? t("optionsChosen", { count: chosen.size }) : "";
      return group(
        `<details class="hf-multi"${chosen.size > 0 || error ? " open" : ""}>
<summary>${escapeHtml(block.placeholder || t("choose"))} <span class="hf-multi-count" aria-live="polite">${escapeHtml(count)}</span></summary>
<label class="hf-sr" for="${escapeHtml(id)}-search">${escapeHtml(t("searchOptions"))}</label>
<input${attrs({ type: "search", id: `${id}-search`, class: "hf-multi-search", autocomplete: "off", hidden: true })}>
<div class="hf-options">\n${options}\n</div>
</details>`,
      );
    }
    case "MATRIX": {
      // A table: a row per statement, its radios (checkboxes with `multiple`) named `<key>.<rowId>`, each
      // labelled "row: column" for screen readers; the table scrolls sideways on its own on a narrow screen.
      const type = block.multiple ? "checkbox" : "radio";
      const head = block.columns.map((c) => `<th scope="col">${escapeHtml(c.text)}</th>`).join("");
      const body = block.rows
        .map((row) => {
          const name = matrixField(key, row.id ?? "");
          const chosen = new Set(valuesOf(ctx.values, name));
          const cells = block.columns
            .map((column) => {
              const cellId = `${id}-${row.id}-${column.id}`;
              return `<td><input${attrs({ type, id: cellId, name, value: column.id, checked: chosen.has(column.id ?? ""), "data-row": row.id, "aria-invalid": invalid })}><label class="hf-sr" for="${escapeHtml(cellId)}">${escapeHtml(`${row.text}: ${column.text}`)}</label></td>`;
            })
            .join("");
          return `<tr><th scope="row">${escapeHtml(row.text)}</th>${cells}</tr>`;
        })
        .join("\n");
      return group(`<div class="hf-matrix"><table>\n<thead><tr><td></td>${head}</tr></thead>\n<tbody>\n${body}\n</tbody>\n</table></div>`);
    }
    case "RANKING": {
      // One select per place, all named by the key: a plain post carries the options in place order.
      const placed = valuesOf(ctx.values, key);
      const places = block.options
        .map((_, i) => {
          const placeId = `${id}-place-${i + 1}`;
          const options = block.options
            .map((o) => `<option${attrs({ value: o.id, selected: placed[i] !== undefined && placed[i] === o.id })}>${escapeHtml(o.text)}</option>`)
            .join("");
          return `<div class="hf-place"><label for="${escapeHtml(placeId)}">${escapeHtml(t("rankingPlace", { place: i + 1 }))}</label><select${attrs({ id: placeId, name: key, "aria-invalid": invalid })}><option value="">${escapeHtml(t("choose"))}</option>${options}</select></div>`;
        })
        .join("\n");
      return group(`<div class="hf-ranking">\n${places}\n</div>`);
    }
    case "DROPDOWN": {
      const chosen = valueOf(ctx.values, key);
      const options = block.options
        .map((o) => `<option${attrs({ value: o.id, selected: chosen !== "" && chosen === o.id })}>${escapeHtml(o.text)}</option>`)
        .join("");
      return simpleField(
        `<select${attrs({ id, name: key, required, "aria-required": required ? "true" : undefined, "aria-describedby": describedBy, "aria-invalid": invalid })}><option value="">${escapeHtml(block.placeholder || t("choose"))}</option>${options}</select>`,
      );
    }
    case "RATING":
    case "LINEAR_SCALE":
    case "NPS": {
      const { min, max } = scaleOf(block);
      const ends: { minLabel?: string; maxLabel?: string } = block.type === "NPS" ? { minLabel: t("npsLeast"), maxLabel: t("npsMost") } : "minLabel" in block || "maxLabel" in block ? block : {};
      const chosen = valueOf(ctx.values, key);
      const steps: string[] = [];
      for (let n = min; n <= max; n++) {
        const stepId = `${id}-${n}`;
        const end = n === min ? ends.minLabel : n === max ? ends.maxLabel : undefined;
        const spoken = `${t("ratingStep", { step: n, steps: max })}${end ? `, ${end}` : ""}`;
        steps.push(
          `<div class="hf-option"><input${attrs({ type: "radio", id: stepId, name: key, value: n, checked: chosen === String(n), required, "aria-invalid": invalid })}><label for="${escapeHtml(stepId)}"><span aria-hidden="true">${n}</span><span class="hf-sr">${escapeHtml(spoken)}</span></label></div>`,
        );
      }
      // The ends' meanings are in the steps' spoken labels; shown once more for the eye.
      const endsLine =
        ends.minLabel || ends.maxLabel
          ? `\n<p class="hf-scale-ends" aria-hidden="true"><span>${escapeHtml(ends.minLabel ?? "")}</span><span>${escapeHtml(ends.maxLabel ?? "")}</span></p>`
          : "";
      return group(`<div class="hf-rating">\n${steps.join("\n")}\n</div>${endsLine}`, "radiogroup");
    }
    case "CONSENT": {
      const boxId = `${id}-agree`;
      return group(
        `<div class="hf-option hf-consent"><input${attrs({ type: "checkbox", id: boxId, name: key, value: "true", checked: valueOf(ctx.values, key) === "true", required, "aria-invalid": invalid })}><label for="${escapeHtml(boxId)}">${consentHtml(block.text)}</label></div>`,
      );
    }
    case "FILE":
      // No name: a plain post cannot carry uploads; the script uploads each file and keeps its id.
      return simpleField(
        `<input${attrs({ type: "file", id, multiple: true, "data-upload": "", "aria-required": required ? "true" : undefined, "aria-describedby": describedBy, "aria-invalid": invalid })}>\n<ul class="hf-files" id="${escapeHtml(id)}-files" aria-live="polite"></ul>\n<p class="hf-note">${escapeHtml(t("uploadLimit", { megabytes: maxUploadBytes / 1024 / 1024 }))}</p>`,
      );
    case "SIGNATURE":
      return group(
        `<canvas class="hf-pad" id="${escapeHtml(id)}-pad" width="900" height="300" role="img" aria-label="${escapeHtml(t("signaturePad"))}"></canvas>
<div class="hf-pad-actions"><button type="button" class="hf-pad-clear">${escapeHtml(t("signatureClear"))}</button></div>
<label class="hf-label" for="${escapeHtml(id)}">${escapeHtml(t("signatureTypeInstead"))}</label>
<input${attrs({ type: "text", id, class: "hf-pad-typed", autocomplete: "name", "aria-required": required ? "true" : undefined, "aria-describedby": `${id}-note ${describedBy}`, "aria-invalid": invalid })}>
<p class="hf-note" id="${escapeHtml(id)}-note">${escapeHtml(t("signatureKeyboardNote"))}</p>`,
      );
    default: {
      const spec = inputTypes[block.type] ?? { type: "text" };
      const numberAttrs =
        block.type === "NUMBER" ? { step: "any", min: "min" in block ? block.min : undefined, max: "max" in block ? block.max : undefined, inputmode: "decimal" } : {};
      return simpleField(
        `<input${attrs({ type: spec.type, id, name: key, value: valueOf(ctx.values, key), required, "aria-required": required ? "true" : undefined, "aria-describedby": describedBy, "aria-invalid": invalid, autocomplete: spec.autocomplete, inputmode: spec.inputmode, placeholder: block.placeholder, ...numberAttrs })}>`,
      );
    }
  }
}

export function renderBlock(block: Block, ctx: QuestionContext): string {
  switch (block.type) {
    case "HEADING":
      return `<h2${attrs({ "data-block": ctx.blockIds ? block.id : undefined })}>${recalledHtml(block.text, ctx.recall)}</h2>`;
    case "PARAGRAPH":
      return `<p${attrs({ "data-block": ctx.blockIds ? block.id : undefined })}>${recalledHtml(block.text, ctx.recall, true)}</p>`;
    case "PAGE_BREAK":
      return "";
    default:
      return renderQuestion(block as InputBlock, ctx);
  }
}
