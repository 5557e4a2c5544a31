// Server-rendered HTML of hosted forms: the form page, and the closed, thank-you, not-found and error
// pages. Pure functions from data to an HTML string; every value from a document, the settings or the
// request is escaped. The page works without JavaScript (one long form posted as
// application/x-www-form-urlencoded); form-page.js turns it into one page at a time with saving,
// uploads and signatures. Every system text comes from the page language's catalogue (page-messages.ts).
import {
  buttonRadii,
  defaultSettings,
  defaultThankYou,
  colorSchemes,
  defaultTheme,
  documentPages,
  fontStacks,
  hexColorPattern,
  maxUploadBytes,
  questionTypes,
  scaleOf,
  schemePalettes,
  themeText,
  type Block,
  type FormDocument,
  type FormSettings,
  type FormTheme,
  type InputBlock,
  type ThankYouScreen,
} from "@formsvc/form-document";
import { escapeHtml, multiline } from "./html-text.ts";
import { hiddenFieldPrefix, honeypotField, languageField, matrixField, needsScript, versionField, type FieldValue, type FieldValues } from "./form-fields.ts";
import { carriedFields, logicStep, navField, neighbours, pageField, postsPageByPage, shownBlocks, shownField, type LogicStep } from "./logic-steps.ts";
import { postedRecallValues, recallConfig, recalledHtml, recalledText, type RecallValues } from "./recall.ts";
import { pageTexts, type PageTexts } from "./page-messages.ts";
import { productName } from "@formsvc/platform/product.ts";
import { hasScreens, keysHint, oneQuestionStyles, questionProgress } from "./one-question.ts";

export interface PageUrls {
  /** Where the hosted-form router is mounted, e.g. `/f`. */
  base: string;
  /** The browser script, e.g. `/f/assets/form-page.js?v=...`. */
  script: string;
  /** Where the "Made with formsvc" link goes. */
  branding: string;
}

export interface FormPageInput {
  formId: string;
  name: string;
  version: number;
  document: FormDocument;
  settings: FormSettings;
  showBranding: boolean;
  /** Hidden field values by name: from the query string, or posted back. */
  hidden: Record<string, string>;
  /** Values to show again after a plain post with problems, by question key. */
  values?: FieldValues;
  /** Problems by question key. */
  errors?: Record<string, string>;
  /** A problem not tied to one question. */
  formError?: string;
  /** A form with logic rules: the page shown (logic-steps.ts); the first one when absent. */
  page?: number;
  urls: PageUrls;
  /** A single-use link's token (access-rules.ts): the plain post and the script's saves carry it on as `?t=`. */
  linkToken?: string;
  /** The proof-of-work widget (captcha.ts), before the form's buttons. */
  captchaHtml?: string;
  /** The page's language and its system texts; English when absent. */
  texts?: PageTexts;
  /** The languages the form offers, each with the address of the page in it; a switch shows with two or more. */
  languageLinks?: { language: string; href: string }[];
}

const englishTexts = pageTexts();

export { escapeHtml };

/**
 * An owner's setting left at its English default (the submit label, the closed message, the thank-you
 * screen's title and text) reads in the page's language; one the owner wrote stays as written.
 */
function ownerOrDefault(value: string, englishDefault: string, texts: PageTexts, key: "submit" | "closed" | "thankYouTitle" | "thankYouText"): string {
  return value === englishDefault ? texts.text(key) : value;
}


/** JSON that is safe inside a `<script type="application/json">` element. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

// Logical properties (margin-inline-start, not margin-left): a right-to-left page mirrors.
const styles = `
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:16px/1.5 var(--hf-font);color:var(--hf-text);background:var(--hf-bg)}
main{max-width:42rem;margin:0 auto;padding:2rem 1rem 1rem}
.hf-card{background:var(--hf-card);border:1px solid var(--hf-card-line);border-radius:12px;padding:1.5rem}
h1{font-size:1.75rem;line-height:1.2;margin:0 0 1rem}
h2{font-size:1.3rem;margin:1.5rem 0 .5rem}
.hf-page>h2:first-child{margin-top:0}
.hf-q{margin:0 0 1.5rem;padding:0;border:0;min-width:0}
.hf-label,legend.hf-label{display:block;font-weight:600;margin:0 0 .35rem;padding:0}
.hf-required{font-weight:400;font-size:.875rem;color:var(--hf-danger);margin-inline-start:.25rem}
.hf-desc{margin:0 0 .5rem;color:var(--hf-muted);font-size:.9375rem}
input[type=text],input[type=email],input[type=number],input[type=tel],input[type=url],input[type=date],input[type=time],select,textarea{display:block;width:100%;font:inherit;padding:.6rem .75rem;border:1px solid var(--hf-field-line);border-radius:8px;background:var(--hf-field-bg);color:inherit}
textarea{min-height:7rem;resize:vertical}
input[type=file]{font:inherit;max-width:100%}
:focus-visible{outline:3px solid var(--hf-link);outline-offset:2px}
[aria-invalid=true]{border-color:var(--hf-danger)}
.hf-options{display:grid;gap:.5rem}
.hf-option{display:flex;align-items:center;gap:.6rem;padding:.55rem .75rem;border:1px solid var(--hf-card-line);border-radius:8px;background:var(--hf-field-bg)}
.hf-option input{width:1.15rem;height:1.15rem;margin:0;flex:none}
.hf-option label{flex:1;cursor:pointer}
.hf-rating{display:flex;flex-wrap:wrap;gap:.4rem}
.hf-rating .hf-option{padding:0;border:0;background:none;position:relative}
.hf-rating input{position:absolute;opacity:0;width:100%;height:100%;cursor:pointer}
.hf-rating label{display:inline-flex;align-items:center;justify-content:center;min-width:2.75rem;min-height:2.75rem;border:1px solid var(--hf-field-line);border-radius:8px;background:var(--hf-field-bg);font-weight:600}
.hf-rating input:checked+label{background:var(--hf-accent);border-color:var(--hf-accent);color:var(--hf-on-accent)}
.hf-rating input:focus-visible+label{outline:3px solid var(--hf-link);outline-offset:2px}
.hf-scale-ends{display:flex;justify-content:space-between;gap:1rem;margin:.35rem 0 0;color:var(--hf-muted);font-size:.9rem}
.hf-consent a{color:var(--hf-link)}
.hf-ranking{display:grid;gap:.5rem}
.hf-matrix{overflow-x:auto}
.hf-matrix table{border-collapse:collapse;width:100%}
.hf-matrix th,.hf-matrix td{padding:.45rem .35rem;text-align:center;border-bottom:1px solid var(--hf-card-line)}
.hf-matrix th[scope=row]{text-align:left;font-weight:400}
.hf-matrix th[scope=col]{font-weight:600;font-size:.9rem}
.hf-matrix input{width:1.25rem;height:1.25rem;margin:0}
.hf-place{display:grid;grid-template-columns:auto 1fr;align-items:center;gap:.6rem}
.hf-multi summary{cursor:pointer;padding:.6rem .75rem;border:1px solid var(--hf-field-line);border-radius:8px;background:var(--hf-field-bg)}
.hf-multi[open] summary{margin-bottom:.5rem}
.hf-multi-search{display:block;width:100%;font:inherit;padding:.6rem .75rem;border:1px solid var(--hf-field-line);border-radius:8px;margin:0 0 .5rem;background:var(--hf-field-bg);color:inherit}
.hf-error{color:var(--hf-danger);font-weight:600;margin:.4rem 0 0}
.hf-error:empty{display:none}
.hf-summary{border:2px solid var(--hf-danger);border-radius:8px;padding:.75rem 1rem;margin:0 0 1.5rem;background:var(--hf-danger-soft)}
.hf-summary:empty{display:none}
.hf-summary p{margin:0}
.hf-summary ul{margin:.25rem 0 0;padding-inline-start:1.25rem}
.hf-summary a{color:var(--hf-danger)}
.hf-files{list-style:none;margin:.5rem 0 0;padding:0}
.hf-files li{display:flex;align-items:center;gap:.5rem;padding:.35rem 0;word-break:break-all}
.hf-pad{display:block;width:100%;height:auto;aspect-ratio:3/1;border:1px dashed var(--hf-field-line);border-radius:8px;background:#fff;touch-action:none;cursor:crosshair}
.hf-pad-actions{margin:.4rem 0 .75rem}
.hf-note{color:var(--hf-muted);font-size:.875rem;margin:.25rem 0 0}
.hf-nav{display:flex;flex-wrap:wrap;gap:.75rem;justify-content:space-between;margin-top:1.5rem}
.hf-nav .hf-submit,.hf-nav .hf-next{margin-inline-start:auto}
.hf-nav .hf-back{order:-1}
button,.hf-button{font:inherit;cursor:pointer;border-radius:var(--hf-radius);padding:.6rem 1.25rem;border:1px solid var(--hf-field-line);background:var(--hf-field-bg);color:var(--hf-text);min-height:2.75rem}
.hf-submit,.hf-next,.hf-button{background:var(--hf-accent);border-color:var(--hf-accent);color:var(--hf-on-accent);font-weight:600}
.hf-button{display:inline-flex;align-items:center;text-decoration:none;border:1px solid var(--hf-accent)}
button:disabled{opacity:.6;cursor:progress}
.hf-link{border:0;background:none;padding:.25rem;min-height:0;color:var(--hf-link);text-decoration:underline}
.hf-progress{margin:0 0 1.25rem}
.hf-progress-label{font-size:.875rem;color:var(--hf-muted);margin-bottom:.25rem}
.hf-progress-track{height:.5rem;background:var(--hf-card-line);border-radius:999px;overflow:hidden}
.hf-progress-fill{height:100%;width:0;background:var(--hf-accent);transition:width .2s}
.hf-resume{background:var(--hf-info);border-radius:8px;padding:.5rem .75rem;margin:0 0 1.25rem}
.hf-thanks:focus{outline:none}
.hf-thanks>h2:first-child{margin-top:0}
.hf-branding{text-align:center;font-size:.875rem;padding:1rem 0 2rem}
.hf-branding a{color:var(--hf-text)}
.hf-languages ul{display:flex;flex-wrap:wrap;justify-content:flex-end;gap:.25rem .75rem;list-style:none;margin:0 0 1rem;padding:0;font-size:.875rem}
.hf-languages a{color:var(--hf-text)}
.hf-languages a[aria-current]{font-weight:600;text-decoration:none}
.hf-logo{margin:0 0 1rem;text-align:center}
.hf-logo img{max-height:4rem;max-width:100%;width:auto;vertical-align:middle}
.hf-js .hf-page:not(.hf-current){display:none}
.hf-trap{position:absolute;inset-inline-start:-10000px;top:auto;width:1px;height:1px;overflow:hidden}
.hf-sr{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
[hidden]{display:none!important}
@media (max-width:30rem){main{padding:1rem .5rem}.hf-card{padding:1rem;border-radius:8px}h1{font-size:1.45rem}.hf-nav button{flex:1 1 auto}}
@media (prefers-reduced-motion:reduce){.hf-progress-fill{transition:none}}
`;

/**
 * The theme as CSS variables the stylesheet reads. Only values from fixed lists and colours that are
 * `#rrggbb` reach the `<style>` (where HTML escaping would not apply); anything else takes the default.
 */
function themeStyle(theme: FormTheme): string {
  const colour = (value: string, fallback: string) => (hexColorPattern.test(value) ? value : fallback);
  const font = Object.hasOwn(fontStacks, theme.font) ? fontStacks[theme.font] : fontStacks.system;
  const radius = Object.hasOwn(buttonRadii, theme.buttonStyle) ? buttonRadii[theme.buttonStyle] : buttonRadii.rounded;
  const accent = colour(theme.accentColor, defaultTheme.accentColor);
  const scheme = (colorSchemes as readonly string[]).includes(theme.colorScheme) ? theme.colorScheme : defaultTheme.colorScheme;
  const own = (background: string, palette: "light" | "dark") =>
    `--hf-accent:${accent};--hf-on-accent:${themeText.onAccent};--hf-bg:${background};--hf-text:${schemePalettes[palette].text};--hf-font:${font.stack};--hf-radius:${radius};${paletteVariables(palette, accent)}`;
  const background = colour(theme.backgroundColor, scheme === "dark" ? schemePalettes.dark.background : defaultTheme.backgroundColor);
  if (scheme === "dark") return `<style id="hf-theme">:root{${own(background, "dark")}}</style>`;
  const light = `:root{${own(background, "light")}}`;
  if (scheme === "light") return `<style id="hf-theme">${light}</style>`;
  // Automatic: the respondent's system picks; in dark, the dark palette's own background.
  return `<style id="hf-theme">${light}@media (prefers-color-scheme:dark){:root{${own(schemePalettes.dark.background, "dark")}}}</style>`;
}

/** The fixed colours of a scheme (schemePalettes) as the stylesheet's variables; links take the accent in light. */
function paletteVariables(palette: "light" | "dark", accent: string): string {
  const p = schemePalettes[palette];
  return (
    `color-scheme:${palette};--hf-muted:${p.muted};--hf-card:${p.card};--hf-card-line:${p.cardLine};--hf-field-line:${p.fieldLine};` +
    `--hf-field-bg:${p.fieldBackground};--hf-danger:${p.danger};--hf-danger-soft:${p.dangerSoft};--hf-info:${p.info};--hf-link:${p.link ?? accent}`
  );
}

/** The theme's logo above the form (its alt text is empty: the form's title follows it). */
function logoOf(theme: FormTheme | undefined): string {
  return theme?.logo ? `<div class="hf-logo"><img src="${escapeHtml(theme.logo)}" alt=""></div>\n` : "";
}

interface ShellOptions {
  texts: PageTexts;
  showBranding?: boolean;
  brandingUrl?: string;
  script?: string;
  noindex?: boolean;
  theme?: FormTheme;
  /** Goes on to `url` after `seconds` without script (a thank-you screen's redirect). */
  refresh?: { seconds: number; url: string };
}

function shell(title: string, body: string, options: ShellOptions): string {
  const { texts } = options;
  const branding = options.showBranding
    ? `<footer class="hf-branding"><a href="${escapeHtml(options.brandingUrl ?? "/")}">${escapeHtml(texts.text("madeWith", { product: productName }))}</a></footer>`
    : "";
  const script = options.script ? `<script src="${escapeHtml(options.script)}"></script>` : "";
  return `<!doctype html>
<html lang="${escapeHtml(texts.language)}" dir="${texts.dir}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
${options.noindex ? '<meta name="robots" content="noindex">\n' : ""}<title>${escapeHtml(title)}</title>
<style>${styles}${oneQuestionStyles}</style>
${themeStyle(options.theme ?? defaultTheme)}
${options.refresh ? `<meta http-equiv="refresh" content="${options.refresh.seconds};url=${escapeHtml(options.refresh.url)}">\n` : ""}</head>
<body>
<main>
${logoOf(options.theme)}${body}
</main>
${branding}
${script}
</body>
</html>
`;
}

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

function attrs(list: Record<string, string | number | boolean | undefined>): string {
  return Object.entries(list)
    .filter(([, v]) => v !== undefined && v !== false)
    .map(([name, v]) => (v === true ? ` ${name}` : ` ${name}="${escapeHtml(v)}"`))
    .join("");
}

interface QuestionContext {
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

function renderBlock(block: Block, ctx: QuestionContext): string {
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

/** Markup left out of the page until the browser script opens it (a form with logic rules). */
function later(html: string): string {
  return `<template class="hf-later">${html}</template>`;
}

/** A block of the page shown one at a time: left out when the rules hide it, required as they say. */
function stepBlock(block: Block, ctx: QuestionContext, step: LogicStep): string {
  const key = "key" in block ? block.key : undefined;
  const shown = key === undefined ? block : ({ ...block, required: step.state.required.has(key) } as Block);
  const html = renderBlock(shown, ctx);
  return step.state.hidden.has(block.id ?? "") ? later(html) : html;
}

/** The page-at-a-time post's own fields: the page, the blocks it shows, and the other pages' answers. */
function stepFields(doc: FormDocument, values: FieldValues | undefined, step: LogicStep): string {
  const carried = carriedFields(doc, values, step.page)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join("\n");
  return `<input type="hidden" name="${pageField}" value="${step.page}">
<input type="hidden" name="${shownField}" value="${escapeHtml(shownBlocks(doc, step).join(","))}">
<div class="hf-carried">${carried}</div>
`;
}

/**
 * The buttons of a page shown one at a time, each a submit button saying where to go. The one Enter
 * presses (the first) is Next, or Submit on the last page; Back is shown first (CSS order).
 */
function stepNav(doc: FormDocument, step: LogicStep, submitLabel: string, texts: PageTexts): string {
  const { previous, next } = neighbours(doc, step);
  const nextButton = `<button type="submit" name="${navField}" value="next" class="hf-next" id="hf-next"${next === undefined ? " hidden" : ""}>${escapeHtml(texts.text("next"))}</button>`;
  const submit = `<button type="submit" class="hf-submit" id="hf-submit"${next === undefined ? "" : " hidden"}>${escapeHtml(submitLabel)}</button>`;
  return `<div class="hf-nav">
${next === undefined ? submit + "\n" + nextButton : nextButton + "\n" + submit}
<button type="submit" name="${navField}" value="back" class="hf-back" id="hf-back" formnovalidate${previous === undefined ? " hidden" : ""}>${escapeHtml(texts.text("back"))}</button>
</div>`;
}

function titleOf(doc: FormDocument, name: string, texts: PageTexts): string {
  return doc.title?.trim() || name || texts.text("untitledForm");
}

/** A language's name in itself ("Deutsch"), from CLDR; the tag when Intl does not know it. */
function languageName(language: string): string {
  try {
    return new Intl.DisplayNames([language], { type: "language" }).of(language) ?? language;
  } catch {
    return language;
  }
}

/** Links to the page in each language the form offers, each named in its own language. */
function languageSwitch(links: FormPageInput["languageLinks"], texts: PageTexts): string {
  if (!links || links.length < 2) return "";
  const items = links.map(({ language, href }) => {
    const current = language.toLowerCase() === texts.language.toLowerCase() ? ' aria-current="true"' : "";
    return `<li><a href="${escapeHtml(href)}" hreflang="${escapeHtml(language)}" lang="${escapeHtml(language)}"${current}>${escapeHtml(languageName(language))}</a></li>`;
  });
  return `<nav class="hf-languages" aria-label="${escapeHtml(texts.text("language"))}"><ul>${items.join("")}</ul></nav>\n`;
}

function errorSummary(input: FormPageInput, texts: PageTexts, recall: RecallValues): string {
  const items: string[] = [];
  if (input.formError) items.push(`<p>${escapeHtml(input.formError)}</p>`);
  const byKey = input.errors ?? {};
  const links = input.document.blocks
    .filter((b): b is InputBlock => "key" in b && typeof b.key === "string" && byKey[b.key] !== undefined)
    .map((b) => `<li><a href="#q-${escapeHtml(b.id ?? b.key)}-field">${escapeHtml(recalledText(b.question, recall))}: ${escapeHtml(byKey[b.key!])}</a></li>`);
  if (links.length > 0) items.push(`<p>${escapeHtml(texts.text("checkAnswers"))}</p><ul>${links.join("")}</ul>`);
  return items.join("");
}

/** The published form as respondents see it. */
export function renderFormPage(input: FormPageInput): string {
  const { document: doc, settings } = input;
  const texts = input.texts ?? englishTexts;
  const t = texts.text;
  const title = titleOf(doc, input.name, texts);
  const submitLabel = ownerOrDefault(settings.submitLabel, defaultSettings.submitLabel, texts, "submit");
  const action = `${input.urls.base}/${encodeURIComponent(input.formId)}`;
  const linkQuery = input.linkToken ? `?t=${encodeURIComponent(input.linkToken)}` : "";
  const recall = postedRecallValues(doc, input.values, input.hidden);
  const ctx = { values: input.values, errors: input.errors, texts, recall };
  const pages = documentPages(doc);
  const hiddenInputs = (doc.hiddenFields ?? [])
    .map((f) => `<input type="hidden" name="${escapeHtml(hiddenFieldPrefix + f.name)}" value="${escapeHtml(input.hidden[f.name] ?? "")}">`)
    .join("\n");
  // With logic rules, one page at a time (logic-steps.ts): what it does not show waits in templates.
  const step = postsPageByPage(doc) ? logicStep(doc, input.values, input.page) : undefined;
  const current = step?.page ?? 0;
  // One question at a time (one-question.ts): its screens are the pages, and each is a question.
  const oneQuestion = step !== undefined && hasScreens(doc);
  const pageOf = oneQuestion ? "questionOf" : "pageOf";
  const pageSections = pages
    .map((blocks, i) => {
      // The script shows and hides blocks by their ids.
      const rendered = blocks.map((b) => (step && i === current ? stepBlock(b, { ...ctx, blockIds: true }, step) : renderBlock(b, { ...ctx, blockIds: step !== undefined }))).join("\n");
      const section = `<section class="hf-page${i === current ? " hf-current" : ""}" data-page="${i}" tabindex="-1"${pages.length > 1 ? ` aria-label="${escapeHtml(t(pageOf, { page: i + 1, pages: pages.length }))}"` : ""}>\n${rendered}\n</section>`;
      return step && i !== current ? later(section) : section;
    })
    .join("\n");
  const config = {
    formId: input.formId,
    version: input.version,
    language: texts.language,
    pages: pages.length,
    saveProgress: settings.saveProgress,
    showProgressBar: settings.showProgressBar,
    oneQuestion,
    redirectUrl: settings.redirectUrl,
    // The thank-you screen's own redirect, after its delay (the plain post's page has a meta refresh instead).
    thanksRedirect: thanksRedirectOf(settings.thankYou),
    responsesUrl: `${action}/responses${linkQuery}`,
    uploadsUrl: `${action}/uploads`,
    maxUploadBytes,
    hiddenFields: (doc.hiddenFields ?? []).map((f) => f.name),
    honeypotField: settings.honeypot ? honeypotField : null,
    // What the browser's copy of the evaluator needs (form-logic.js): the blocks' ids, types, keys and pages, and the rules.
    messages: texts.scriptTemplates(),
    // What recall (recall.ts) needs of the questions recalled; null when no text recalls.
    recall: recallConfig(doc, settings),
    logic: step
      ? {
          blocks: doc.blocks.map(({ id, type, ...b }) => ({ id, type, key: "key" in b ? b.key : undefined, required: "required" in b ? b.required : undefined, screen: "screen" in b ? b.screen : undefined })),
          logic: browserRules(doc.logic),
        }
      : null,
  };
  // Off screen and out of the accessibility tree and tab order: only bots fill it in.
  const honeypot = settings.honeypot
    ? `<div class="hf-trap" aria-hidden="true"><label for="hf-website">${escapeHtml(t("honeypotLabel"))}</label><input type="text" id="hf-website" name="${honeypotField}" value="" tabindex="-1" autocomplete="off"></div>\n`
    : "";
  const scriptNote = needsScript(doc)
    ? `<noscript><p class="hf-summary">${escapeHtml(t("needsScript"))}</p></noscript>\n`
    : "";
  // One question at a time shows its progress from the server (for pages without script); pages show theirs once the script runs.
  const progress = pages.length < 2 ? "" : !oneQuestion ? progressBar(pages.length, texts) : settings.showProgressBar ? questionProgress(doc, step, texts) : "";
  const body = `${languageSwitch(input.languageLinks, texts)}<div class="hf-card">
<form id="hf-form" class="hf-form${oneQuestion ? " hf-one" : ""}" method="post" action="${escapeHtml(action + linkQuery)}" accept-charset="utf-8" aria-labelledby="hf-title">
<h1 id="hf-title">${escapeHtml(title)}</h1>
${scriptNote}<p class="hf-resume" id="hf-resume" hidden>${escapeHtml(t("resumed"))} <button type="button" class="hf-link" id="hf-restart">${escapeHtml(t("startOver"))}</button></p>
${progress}<div class="hf-summary" id="hf-summary" role="alert" tabindex="-1">${errorSummary(input, texts, recall)}</div>
<input type="hidden" name="${versionField}" value="${escapeHtml(input.version)}">
<input type="hidden" name="${languageField}" value="${escapeHtml(texts.language)}">
${hiddenInputs}
${step ? stepFields(doc, input.values, step) : ""}${honeypot}${pageSections}
${input.captchaHtml ?? ""}${step ? stepNav(doc, step, submitLabel, texts) : `<div class="hf-nav">
<button type="button" class="hf-back" id="hf-back" hidden>${escapeHtml(t("back"))}</button>
<button type="button" class="hf-next" id="hf-next" hidden>${escapeHtml(t("next"))}</button>
<button type="submit" class="hf-submit" id="hf-submit">${escapeHtml(submitLabel)}</button>
</div>`}
${oneQuestion ? keysHint(texts) : ""}</form>
</div>
${thankYouSection(settings.thankYou, true, texts, recall)}
<script type="application/json" id="hf-config">${jsonForScript(config)}</script>`;
  return shell(title, body, { texts, showBranding: input.showBranding, brandingUrl: input.urls.branding, script: input.urls.script, theme: settings.theme });
}

function progressBar(pages: number, texts: PageTexts): string {
  return `<div class="hf-progress" id="hf-progress" hidden>
<div class="hf-progress-label" id="hf-progress-label" aria-live="polite">${escapeHtml(texts.text("pageOf", { page: 1, pages }))}</div>
<div class="hf-progress-track" role="progressbar" aria-labelledby="hf-progress-label" aria-valuemin="1" aria-valuemax="${pages}" aria-valuenow="1"><div class="hf-progress-fill"></div></div>
</div>
`;
}

/**
 * The rules as the browser needs them: what shows, hides, requires and jumps. SET actions are left out
 * (and the rules that only set): their values are the server's to apply, and may be what a respondent
 * is not to see (a discount code, an internal tier).
 */
function browserRules(rules: FormDocument["logic"]): NonNullable<FormDocument["logic"]> {
  return (rules ?? []).flatMap((rule) => {
    const then = rule.then.filter((action) => action.action !== "SET");
    return then.length > 0 ? [{ ...rule, then }] : [];
  });
}

/** Where and when the thank-you screen goes on by itself; null when it stays. */
function thanksRedirectOf(screen: ThankYouScreen | undefined): { seconds: number; url: string } | null {
  return screen?.buttonUrl && screen.redirectSeconds !== null ? { seconds: screen.redirectSeconds, url: screen.buttonUrl } : null;
}

/** The thank-you screen of the settings: title, text, its button and the note of its redirect. */
function thankYouSection(screen: ThankYouScreen = defaultThankYou, hidden: boolean, texts: PageTexts, recall: RecallValues): string {
  const redirect = thanksRedirectOf(screen);
  const title = ownerOrDefault(screen.title, defaultThankYou.title, texts, "thankYouTitle");
  const text = screen.text && ownerOrDefault(screen.text, defaultThankYou.text, texts, "thankYouText");
  // target _top: in an embed's frame the button leads the whole page on, not the frame.
  const button =
    screen.buttonLabel && screen.buttonUrl ? `<p><a class="hf-button" id="hf-thanks-button" href="${escapeHtml(screen.buttonUrl)}" target="_top">${escapeHtml(screen.buttonLabel)}</a></p>\n` : "";
  const note = redirect ? `<p class="hf-note" id="hf-thanks-redirect">${redirectNote(redirect, texts)}</p>\n` : "";
  return `<section class="hf-card hf-thanks" id="hf-thanks" tabindex="-1"${hidden ? " hidden" : ""}>
<h2 id="hf-thanks-title">${recalledHtml(title, recall)}</h2>
${text ? `<p id="hf-thanks-text">${recalledHtml(text, recall, true)}</p>\n` : ""}${button}${note}</section>`;
}

/** "You will be taken to <a>site</a> in n seconds.": the message formatted around a placeholder the link replaces. */
function redirectNote(redirect: { seconds: number; url: string }, texts: PageTexts): string {
  const placeholder = "\u0000site\u0000";
  const link = `<a href="${escapeHtml(redirect.url)}">${escapeHtml(new URL(redirect.url).host)}</a>`;
  return escapeHtml(texts.text("redirectNote", { site: placeholder, seconds: redirect.seconds })).replace(placeholder, link);
}

export interface FormInfo {
  name: string;
  document: FormDocument;
  showBranding: boolean;
  /** The form's theme; the default look without one. */
  theme?: FormTheme;
  brandingUrl: string;
  /** The page script, which reports the page's height to an embed's frame (see form-page.js). */
  script?: string;
  /** The page's language and its system texts; English when absent. */
  texts?: PageTexts;
}

/** A closed form: its closed message, and nothing to answer. */
export function renderClosedPage(info: FormInfo & { closedMessage: string }): string {
  const texts = info.texts ?? englishTexts;
  const title = titleOf(info.document, info.name, texts);
  const message = ownerOrDefault(info.closedMessage, defaultSettings.closedMessage, texts, "closed");
  return shell(
    title,
    `<div class="hf-card">\n<h1>${escapeHtml(title)}</h1>\n<p class="hf-closed">${multiline(message)}</p>\n</div>`,
    { texts, showBranding: info.showBranding, brandingUrl: info.brandingUrl, theme: info.theme, script: info.script },
  );
}

/** After a plain (no JavaScript) post that was accepted: the form's thank-you screen, going on by itself when it says so. */
export function renderThankYouPage(info: FormInfo & { thankYou?: ThankYouScreen; recall?: RecallValues }): string {
  const texts = info.texts ?? englishTexts;
  const title = titleOf(info.document, info.name, texts);
  const refresh = thanksRedirectOf(info.thankYou) ?? undefined;
  return shell(title, `<h1 class="hf-sr">${escapeHtml(title)}</h1>\n${thankYouSection(info.thankYou, false, texts, info.recall ?? {})}`, {
    texts,
    showBranding: info.showBranding,
    brandingUrl: info.brandingUrl,
    theme: info.theme,
    refresh,
  });
}

/** What a form asks before its questions (access-gate.ts: its password, an address to confirm): `body` under its title, in its look. */
export function renderGatePage(info: FormInfo, body: string): string {
  const texts = info.texts ?? englishTexts;
  const title = titleOf(info.document, info.name, texts);
  return shell(title, `<div class="hf-card">\n<h1 id="hf-title">${escapeHtml(title)}</h1>\n${body}\n</div>`, {
    texts,
    showBranding: info.showBranding,
    brandingUrl: info.brandingUrl,
    theme: info.theme,
    noindex: true,
  });
}

/** Drafts, the Trash and unknown ids all look like this. */
export function renderNotFoundPage(texts: PageTexts = englishTexts): string {
  const title = texts.text("notFoundTitle");
  return shell(title, `<div class="hf-card">\n<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(texts.text("notFoundText"))}</p>\n</div>`, { texts, noindex: true });
}

/**
 * Any other failure of a page request (rate limit, services unavailable, a request that cannot be read).
 * A request refused for what it sent also shows the gateway's own (English) words for it, as a technical note.
 */
/** The page of a respondent a form's rules turn away (403: no usable single-use link), saying why. */
export function renderRefusedPage(texts: PageTexts, reason: string): string {
  const title = texts.text("refusedTitle");
  return shell(title, `<div class="hf-card">\n<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(reason)}</p>\n</div>`, { texts, noindex: true });
}

export function renderErrorPage(status: number, texts: PageTexts = englishTexts, detail?: string): string {
  const [title, message] =
    status === 429
      ? (["tooManyRequestsTitle", "tooManyRequestsText"] as const)
      : status >= 500
        ? (["unavailableTitle", "unavailableText"] as const)
        : (["badRequestTitle", "badRequestText"] as const);
  const note = detail ? `\n<p class="hf-note"><code lang="en">${escapeHtml(detail)}</code></p>` : "";
  return shell(texts.text(title), `<div class="hf-card">\n<h1>${escapeHtml(texts.text(title))}</h1>\n<p>${escapeHtml(texts.text(message))}</p>${note}\n</div>`, { texts, noindex: true });
}
