// The form's own theme (Design tab: settings.theme) as CSS variables for the Build tab's canvas, the same
// colours, font and corners the hosted page draws (gateway/src/hosted/render-form.ts), so the form is
// edited as respondents will see it. An automatic scheme is shown light, as most people see it first.
import type { CSSProperties } from "react";
import { buttonRadii, defaultTheme, fontStacks, hexColorPattern, schemePalettes, themeText, type FormTheme } from "@formsvc/form-document/theme";

export function canvasThemeStyle(theme: Partial<FormTheme> | undefined): CSSProperties {
  const colour = (value: string | undefined, fallback: string) => (value && hexColorPattern.test(value) ? value : fallback);
  const scheme = theme?.colorScheme === "dark" ? "dark" : "light";
  const palette = schemePalettes[scheme];
  const accent = colour(theme?.accentColor, defaultTheme.accentColor);
  const font = theme?.font && Object.hasOwn(fontStacks, theme.font) ? fontStacks[theme.font] : fontStacks.system;
  const radius = theme?.buttonStyle && Object.hasOwn(buttonRadii, theme.buttonStyle) ? buttonRadii[theme.buttonStyle] : buttonRadii.rounded;
  return {
    colorScheme: scheme,
    "--f-accent": accent,
    "--f-on-accent": themeText.onAccent,
    "--f-bg": colour(theme?.backgroundColor, palette.background),
    "--f-text": palette.text,
    "--f-muted": palette.muted,
    "--f-card": palette.card,
    "--f-card-line": palette.cardLine,
    "--f-field-line": palette.fieldLine,
    "--f-field-bg": palette.fieldBackground,
    "--f-danger": palette.danger,
    "--f-info": palette.info,
    "--f-link": palette.link ?? accent,
    "--f-font": font.stack,
    "--f-radius": radius,
  } as CSSProperties;
}
