// A form's Design tab: the hosted page's theme (accent and background colours, a system font, the
// buttons' corners, a logo) with both contrast ratios shown as the colours change, a small preview, and
// the thank-you screen shown after a completed submission. The server checks the same ratios
// (@formsvc/form-document/theme) and refuses a theme below WCAG AA, naming the colour.
import { useId, useState, type ChangeEvent, type CSSProperties, type FormEvent } from "react";
import {
  buttonRadii,
  buttonStyles,
  colorSchemes,
  defaultTheme,
  defaultThankYou,
  fontChoices,
  fontStacks,
  formatRatio,
  hexColorPattern,
  logoTypes,
  maxLogoDataUrlLength,
  minContrast,
  schemePalettes,
  textOnBackground,
  themeContrast,
  themeText,
  type ColorScheme,
  type FormTheme,
} from "@formsvc/form-document/theme";
import { ApiError, patch } from "../api.ts";
import { InlineMessage, useNotify } from "../components/ui.tsx";
import type { Form, FormSettings } from "../types.ts";
import { t, type MessageKey } from "../i18n/messages.ts";
import { tRich } from "../i18n/react.tsx";

type ThankYou = FormSettings["thankYou"];

const buttonStyleLabels: Record<FormTheme["buttonStyle"], MessageKey> = { rounded: "design.rounded", square: "design.square", pill: "design.pill" };
const colorSchemeLabels: Record<ColorScheme, MessageKey> = { light: "design.schemeLight", dark: "design.schemeDark", auto: "design.schemeAuto" };

/** A link to show the field of one (an address, the same in every language). */
const exampleUrl = "https://example.com/";

/** A scheme chosen: the background follows to that scheme's default when it was the other's. */
function withColorScheme(theme: FormTheme, colorScheme: ColorScheme): FormTheme {
  const darkPage = colorScheme === "dark";
  const defaults = [schemePalettes.light.background, schemePalettes.dark.background];
  const backgroundColor = defaults.includes(theme.backgroundColor.toLowerCase() as never) ? (darkPage ? schemePalettes.dark.background : schemePalettes.light.background) : theme.backgroundColor;
  return { ...theme, colorScheme, backgroundColor };
}

/** Reads a chosen image as a data: URL. */
function readAsDataUrl(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error("the file could not be read"));
    reader.readAsDataURL(file);
  });
}

/** A colour as a swatch picker beside its #rrggbb text, which may be typed. */
function ColourField({
  id,
  label,
  value,
  onChange,
  describedBy,
  problem,
}: {
  id: string;
  label: string;
  value: string;
  onChange(value: string): void;
  describedBy: string;
  /** What the server refused about it, until it changes. */
  problem?: string;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <div className="row">
        <input
          type="color"
          aria-label={t("design.picker", { label })}
          value={hexColorPattern.test(value) ? value.toLowerCase() : "#000000"}
          onChange={(e) => onChange(e.target.value)}
          className="colour-picker"
        />
        <input
          id={id}
          value={value}
          maxLength={7}
          spellCheck={false}
          aria-describedby={problem ? `${id}-problem ${describedBy}` : describedBy}
          aria-invalid={problem ? true : undefined}
          onChange={(e) => onChange(e.target.value.trim())}
          className="colour-value"
        />
      </div>
      {problem && (
        <p className="error-text" id={`${id}-problem`}>
          {problem}
        </p>
      )}
    </div>
  );
}

/** The hosted page in miniature: the theme's background, logo, font, accent and button corners. */
function ThemePreview({ theme, submitLabel, thankYou }: { theme: FormTheme; submitLabel: string; thankYou: ThankYou }) {
  const valid = hexColorPattern.test(theme.accentColor) && hexColorPattern.test(theme.backgroundColor);
  const accent = valid ? theme.accentColor : defaultTheme.accentColor;
  // An automatic page is shown as most people see it first: light.
  const palette = schemePalettes[theme.colorScheme === "dark" ? "dark" : "light"];
  const page: CSSProperties = {
    background: valid ? theme.backgroundColor : defaultTheme.backgroundColor,
    color: textOnBackground(theme.colorScheme),
    fontFamily: fontStacks[theme.font].stack,
    padding: "1rem",
    borderRadius: 8,
    border: "1px solid var(--line)",
  };
  const card: CSSProperties = { background: palette.card, border: `1px solid ${palette.cardLine}`, borderRadius: 12, padding: "1rem", margin: "0 auto", maxWidth: "22rem" };
  const button: CSSProperties = {
    display: "inline-block",
    background: accent,
    border: `1px solid ${accent}`,
    color: themeText.onAccent,
    borderRadius: buttonRadii[theme.buttonStyle],
    fontWeight: 600,
    fontFamily: "inherit",
    padding: ".5rem 1.1rem",
  };
  return (
    <div className="stack" aria-label={t("formTabs.preview")} role="group">
      <div style={page} data-testid="design-preview">
        {theme.logo && (
          <p style={{ textAlign: "center", margin: "0 0 .75rem" }}>
            <img src={theme.logo} alt={t("design.logo")} style={{ maxHeight: "3rem", maxWidth: "100%" }} />
          </p>
        )}
        <div style={card}>
          <p style={{ fontWeight: 700, fontSize: "1.2rem", margin: "0 0 .5rem" }}>{t("design.yourForm")}</p>
          <p style={{ margin: "0 0 .25rem", fontWeight: 600 }}>{t("newBlock.question.SHORT_TEXT")}</p>
          <div style={{ border: `1px solid ${palette.fieldLine}`, borderRadius: 8, height: "2.2rem", background: palette.fieldBackground, marginBottom: ".75rem" }} />
          <p style={{ textAlign: "right", margin: 0 }}>
            <span style={button}>{submitLabel}</span>
          </p>
        </div>
        <div style={{ ...card, marginTop: ".75rem" }}>
          <p style={{ fontWeight: 700, margin: "0 0 .25rem" }}>{thankYou.title || defaultThankYou.title}</p>
          {thankYou.text && <p style={{ margin: "0 0 .5rem", whiteSpace: "pre-line" }}>{thankYou.text}</p>}
          {thankYou.buttonLabel && <span style={button}>{thankYou.buttonLabel}</span>}
        </div>
      </div>
    </div>
  );
}

export function DesignTab({ form, onSaved }: { form: Form; onSaved(form: Form): void }) {
  const id = useId();
  const notify = useNotify();
  const [theme, setTheme] = useState<FormTheme>(form.settings.theme);
  const [thankYou, setThankYou] = useState<ThankYou>(form.settings.thankYou);
  const [logoProblem, setLogoProblem] = useState<string>();
  const [error, setError] = useState<string>();
  // The server's field violations by path (`settings.theme.accentColor`), shown at their fields until edited.
  const [refused, setRefused] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const checks = themeContrast(theme);
  const changeTheme = (next: FormTheme) => {
    setTheme(next);
    setRefused({});
  };
  const changeThankYou = (next: ThankYou) => {
    setThankYou(next);
    setRefused({});
  };

  const chooseLogo = async (e: ChangeEvent<HTMLInputElement>) => {
    const file = e.target.files?.[0];
    e.target.value = "";
    setLogoProblem(undefined);
    if (!file) return;
    if (!(logoTypes as readonly string[]).includes(file.type)) return setLogoProblem(t("design.logoType"));
    const url = await readAsDataUrl(file);
    if (url.length > maxLogoDataUrlLength) return setLogoProblem(t("design.logoTooLarge", { size: Math.round(file.size / 1024) }));
    changeTheme({ ...theme, logo: url });
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    setRefused({});
    const text = (value: string | null) => (value?.trim() ? value.trim() : null);
    try {
      const saved = await patch<Form>(`/forms/${form.id}`, {
        settings: {
          theme,
          thankYou: { ...thankYou, title: thankYou.title.trim(), buttonLabel: text(thankYou.buttonLabel), buttonUrl: text(thankYou.buttonUrl) },
        },
      });
      onSaved(saved);
      setTheme(saved.settings.theme);
      setThankYou(saved.settings.thankYou);
      notify(t("design.saved"));
    } catch (err) {
      setError((err as Error).message);
      if (err instanceof ApiError) setRefused(Object.fromEntries(err.fields.map((f) => [f.key, f.message])));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="stack settings" onSubmit={submit} aria-label={t("formTabs.design")}>
      <div className="grid-2" style={{ alignItems: "start" }}>
        <fieldset className="card">
          <legend>{t("design.theme")}</legend>
          <div className="stack">
            <div className="field">
              <label htmlFor={`${id}-scheme`}>{t("design.colorScheme")}</label>
              <select id={`${id}-scheme`} value={theme.colorScheme} onChange={(e) => changeTheme(withColorScheme(theme, e.target.value as ColorScheme))}>
                {colorSchemes.map((scheme) => (
                  <option key={scheme} value={scheme}>
                    {t(colorSchemeLabels[scheme])}
                  </option>
                ))}
              </select>
            </div>
            <ColourField
              id={`${id}-accent`}
              label={t("design.accent")}
              value={theme.accentColor}
              describedBy={`${id}-contrast-accentColor`}
              problem={refused["settings.theme.accentColor"]}
              onChange={(accentColor) => changeTheme({ ...theme, accentColor })}
            />
            <ColourField
              id={`${id}-background`}
              label={t("design.background")}
              value={theme.backgroundColor}
              describedBy={`${id}-contrast-backgroundColor`}
              problem={refused["settings.theme.backgroundColor"]}
              onChange={(backgroundColor) => changeTheme({ ...theme, backgroundColor })}
            />
            <ul className="plain-list contrast-checks" aria-live="polite">
              {checks.map((check) => (
                <li key={check.field} id={`${id}-contrast-${check.field}`} data-contrast={check.field} data-passes={check.passes}>
                  <span className={check.passes ? "contrast-pass" : "contrast-fail"}>{check.passes ? "✓" : "✗"}</span> {t("design.contrastOf", { pair: check.pair })}{" "}
                  <strong>{check.ratio > 0 ? formatRatio(check.ratio) : t("design.notAColour")}</strong>
                  {!check.passes && ` ${t("design.needed", { min: minContrast })}`}
                </li>
              ))}
            </ul>
            <div className="field">
              <label htmlFor={`${id}-font`}>{t("design.font")}</label>
              <select id={`${id}-font`} value={theme.font} onChange={(e) => changeTheme({ ...theme, font: e.target.value as FormTheme["font"] })}>
                {fontChoices.map((font) => (
                  <option key={font} value={font} style={{ fontFamily: fontStacks[font].stack }}>
                    {fontStacks[font].label}
                  </option>
                ))}
              </select>
            </div>
            <fieldset>
              <legend>{t("design.buttons")}</legend>
              <div className="row">
                {buttonStyles.map((style) => (
                  <label className="check" key={style}>
                    <input type="radio" name={`${id}-buttons`} value={style} checked={theme.buttonStyle === style} onChange={() => changeTheme({ ...theme, buttonStyle: style })} />{" "}
                    {t(buttonStyleLabels[style])}
                  </label>
                ))}
              </div>
            </fieldset>
            <div className="field">
              <label htmlFor={`${id}-logo`}>{t("design.logo")}</label>
              <input id={`${id}-logo`} type="file" accept={logoTypes.join(",")} aria-describedby={`${id}-logo-hint`} onChange={(e) => void chooseLogo(e)} />
              <p className="hint" id={`${id}-logo-hint`}>
                {t("design.logoHint")}
              </p>
              {theme.logo && (
                <p className="row">
                  <img src={theme.logo} alt={t("design.currentLogo")} style={{ maxHeight: "2.5rem" }} />
                  <button type="button" onClick={() => changeTheme({ ...theme, logo: null })}>
                    {t("design.removeLogo")}
                  </button>
                </p>
              )}
              {logoProblem && <InlineMessage kind="error">{logoProblem}</InlineMessage>}
            </div>
          </div>
        </fieldset>
        <ThemePreview theme={theme} submitLabel={form.settings.submitLabel} thankYou={thankYou} />
      </div>
      <fieldset className="card">
        <legend>{t("design.thankYou")}</legend>
        <div className="stack">
          <p className="hint" style={{ margin: 0 }} id={`${id}-ty-hint`}>
            {form.settings.redirectUrl ? t("design.thankYouHintRedirect") : t("design.thankYouHint")}{" "}
            {tRich("design.thankYouRecall", { recall: <code>{"{{key}}"}</code>, fallback: <code>{"{{key|fallback}}"}</code> })}
          </p>
          {(["title", "text"] as const).map((property) => {
            const problem = refused[`settings.thankYou.${property}`];
            const fieldId = `${id}-ty-${property}`;
            const props = {
              id: fieldId,
              value: thankYou[property],
              "aria-invalid": problem ? true : undefined,
              "aria-describedby": problem ? `${id}-ty-hint ${fieldId}-problem` : `${id}-ty-hint`,
            };
            return (
              <div className="field" key={property}>
                <label htmlFor={fieldId}>{property === "title" ? t("design.title") : t("design.text")}</label>
                {property === "title" ? (
                  <input {...props} maxLength={200} required onChange={(e) => changeThankYou({ ...thankYou, title: e.target.value })} />
                ) : (
                  <textarea {...props} rows={3} maxLength={2000} onChange={(e) => changeThankYou({ ...thankYou, text: e.target.value })} />
                )}
                {problem && (
                  <p className="error-text" id={`${fieldId}-problem`}>
                    {problem}
                  </p>
                )}
              </div>
            );
          })}
          <div className="grid-2">
            <div className="field">
              <label htmlFor={`${id}-ty-label`}>{t("design.buttonLabel")}</label>
              <input id={`${id}-ty-label`} value={thankYou.buttonLabel ?? ""} maxLength={60} onChange={(e) => changeThankYou({ ...thankYou, buttonLabel: e.target.value })} />
            </div>
            <div className="field">
              <label htmlFor={`${id}-ty-url`}>{t("design.buttonLink")}</label>
              <input
                id={`${id}-ty-url`}
                type="url"
                value={thankYou.buttonUrl ?? ""}
                placeholder={exampleUrl}
                aria-invalid={refused["settings.thankYou.buttonUrl"] ? true : undefined}
                aria-describedby={refused["settings.thankYou.buttonUrl"] ? `${id}-ty-url-problem` : undefined}
                onChange={(e) => changeThankYou({ ...thankYou, buttonUrl: e.target.value })}
              />
              {refused["settings.thankYou.buttonUrl"] && (
                <p className="error-text" id={`${id}-ty-url-problem`}>
                  {refused["settings.thankYou.buttonUrl"]}
                </p>
              )}
            </div>
            <div className="field">
              <label htmlFor={`${id}-ty-redirect`}>{t("design.redirect")}</label>
              <input
                id={`${id}-ty-redirect`}
                type="number"
                min={0}
                max={600}
                step={1}
                value={thankYou.redirectSeconds ?? ""}
                aria-describedby={`${id}-ty-redirect-hint`}
                onChange={(e) => changeThankYou({ ...thankYou, redirectSeconds: e.target.value.trim() === "" ? null : Number(e.target.value) })}
              />
              <p className="hint" id={`${id}-ty-redirect-hint`}>
                {t("design.redirectHint")}
              </p>
            </div>
          </div>
        </div>
      </fieldset>
      {error && <InlineMessage kind="error">{error}</InlineMessage>}
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? t("editor.saving") : t("design.save")}
        </button>
      </div>
    </form>
  );
}
