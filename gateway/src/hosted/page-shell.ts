// The document every hosted page is: its head (language and direction, the page's style sheet
// with the one-question flow's, the form's theme as CSS variables for light and dark), logo, branding and
// script. Every value is escaped.
import { buttonRadii, colorSchemes, defaultTheme, fontStacks, hexColorPattern, schemePalettes, themeText, type FormTheme } from "@formsvc/form-document";
import { escapeHtml } from "./html-text.ts";
import { type PageTexts } from "./page-messages.ts";
import { productName } from "@formsvc/platform/product.ts";
import { oneQuestionStyles } from "./one-question.ts";

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

export interface ShellOptions {
  texts: PageTexts;
  showBranding?: boolean;
  brandingUrl?: string;
  script?: string;
  noindex?: boolean;
  theme?: FormTheme;
  /** Goes on to `url` after `seconds` without script (a thank-you screen's redirect). */
  refresh?: { seconds: number; url: string };
}

export function shell(title: string, body: string, options: ShellOptions): string {
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
