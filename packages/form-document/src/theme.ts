// A form's look on its hosted page (settings.theme): colours, a font stack, the buttons' corners and a
// logo, and the contrast rule the colours must meet. Shared by the settings' validation, the hosted page
// and the app's Design card, so the ratio the app shows live is the one the server checks.

/** A colour as `#rrggbb`. */
export const hexColorPattern = /^#[0-9a-fA-F]{6}$/;

/** WCAG 2.x AA for normal text: the least contrast the theme's text may have on its colours. */
export const minContrast = 4.5;

/**
 * The text colours the hosted page draws on the theme's colours: labels of the accent's buttons (and
 * the accent's links on the white card, the same ratio), and the page's text on its background.
 */
export const themeText = { onAccent: "#ffffff", onBackground: "#1f2328" } as const;

/** Fonts people choose from: system font stacks only, so the page downloads no font. */
export const fontStacks = {
  system: { label: "System sans-serif", stack: 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif' },
  humanist: { label: "Humanist", stack: 'Seravek, "Gill Sans Nova", Ubuntu, Calibri, "DejaVu Sans", source-sans-pro, sans-serif' },
  rounded: { label: "Rounded", stack: 'ui-rounded, "Hiragino Maru Gothic ProN", Quicksand, Comfortaa, Manjari, "Arial Rounded MT", Calibri, sans-serif' },
  serif: { label: "Serif", stack: 'Charter, "Bitstream Charter", "Sitka Text", Cambria, Georgia, "DejaVu Serif", serif' },
  mono: { label: "Monospace", stack: 'ui-monospace, "Cascadia Code", "Source Code Pro", Menlo, Consolas, "DejaVu Sans Mono", monospace' },
} as const;
export type FontChoice = keyof typeof fontStacks;
export const fontChoices = Object.keys(fontStacks) as [FontChoice, ...FontChoice[]];

/** The corners of buttons and inputs, by button style. */
export const buttonRadii = { rounded: "8px", square: "0", pill: "999px" } as const;
export type ButtonStyle = keyof typeof buttonRadii;
export const buttonStyles = Object.keys(buttonRadii) as [ButtonStyle, ...ButtonStyle[]];

/** Image types a logo may be, as a data: URL (kept with the settings, so every replica has it). */
export const logoTypes = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;
export const logoDataUrlPattern = /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/]+={0,2}$/;
/** The longest logo data: URL: an image of about 50 KB, small enough to travel inline in each page. */
export const maxLogoDataUrlLength = 70_000;

/**
 * Light and dark pages, or `auto`: the respondent's system chooses (prefers-color-scheme), the light page
 * with the theme's background, the dark one with the dark palette's.
 */
export const colorSchemes = ["light", "dark", "auto"] as const;
export type ColorScheme = (typeof colorSchemes)[number];

/**
 * The fixed colours of each scheme around the theme's own two. Every pair drawn is WCAG AA (4.5:1 for text,
 * 3:1 for the lines people must see), checked in theme.test.ts: text, muted text, errors and links on the
 * card; the text on the palette's background. In dark, links and focus rings take `link`, since no accent
 * can hold white labels and show as text on a dark card both.
 */
export const schemePalettes = {
  light: {
    text: themeText.onBackground,
    muted: "#57606a",
    background: "#f6f7f9",
    card: "#ffffff",
    cardLine: "#d8dce1",
    fieldLine: "#8c959f",
    fieldBackground: "#ffffff",
    danger: "#a4262c",
    dangerSoft: "#fff5f5",
    info: "#eef6ff",
    link: null,
  },
  dark: {
    text: "#e6edf3",
    muted: "#9198a1",
    background: "#0d1117",
    card: "#161b22",
    cardLine: "#3d444d",
    fieldLine: "#768390",
    fieldBackground: "#0d1117",
    danger: "#ff7b72",
    dangerSoft: "#25171c",
    info: "#121d2f",
    link: "#79c0ff",
  },
} as const satisfies Record<"light" | "dark", Record<string, string | null>>;

export interface FormTheme {
  accentColor: string;
  backgroundColor: string;
  font: FontChoice;
  buttonStyle: ButtonStyle;
  /** A data: URL of a PNG, JPEG, GIF or WebP image; null: no logo. */
  logo: string | null;
  colorScheme: ColorScheme;
}

export const defaultTheme: Readonly<FormTheme> = Object.freeze({
  accentColor: "#0969da",
  backgroundColor: schemePalettes.light.background,
  font: "system",
  buttonStyle: "rounded",
  logo: null,
  colorScheme: "light",
});

/** What the hosted page shows after a completed submission (unless `redirectUrl` sends people away at once). */
export interface ThankYouScreen {
  title: string;
  text: string;
  buttonLabel: string | null;
  buttonUrl: string | null;
  redirectSeconds: number | null;
}

export const defaultThankYou: Readonly<ThankYouScreen> = Object.freeze({
  title: "Thank you!",
  text: "Your response has been recorded.",
  buttonLabel: null,
  buttonUrl: null,
  redirectSeconds: null,
});

/** The relative luminance of a `#rrggbb` colour (WCAG 2.x). */
export function relativeLuminance(hex: string): number {
  if (!hexColorPattern.test(hex)) throw new Error(`not a #rrggbb colour: ${hex}`);
  const channel = (i: number) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/** The contrast ratio of two `#rrggbb` colours, from 1 (none) to 21 (black on white). */
export function contrastRatio(a: string, b: string): number {
  const [light, dark] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x);
  return (light + 0.05) / (dark + 0.05);
}

/** A ratio as people read it, `4.49:1`: cut (not rounded) to two decimals, so a failing ratio never reads 4.5. */
export function formatRatio(ratio: number): string {
  return `${(Math.floor(ratio * 100) / 100).toFixed(2)}:1`;
}

export interface ContrastCheck {
  /** The theme's property the ratio is about. */
  field: "accentColor" | "backgroundColor";
  /** What is drawn on what, in words. */
  pair: string;
  ratio: number;
  passes: boolean;
}

/** The text the page draws on the theme's background: the dark palette's on a dark page, else the light one's. */
export function textOnBackground(colorScheme: ColorScheme | undefined): string {
  return colorScheme === "dark" ? schemePalettes.dark.text : themeText.onBackground;
}

/**
 * Both ratios the theme is held to: white button labels on the accent, the page's text on the background
 * (light text on a dark page; an automatic page uses the background in light and the dark palette's in dark).
 */
export function themeContrast(theme: Pick<FormTheme, "accentColor" | "backgroundColor"> & { colorScheme?: ColorScheme }): ContrastCheck[] {
  const check = (field: ContrastCheck["field"], pair: string, text: string, colour: string): ContrastCheck => {
    const ratio = hexColorPattern.test(colour) ? contrastRatio(text, colour) : 0;
    return { field, pair, ratio, passes: ratio >= minContrast };
  };
  return [
    check("accentColor", "white text on the accent colour", themeText.onAccent, theme.accentColor),
    check("backgroundColor", "the text on the background colour", textOnBackground(theme.colorScheme), theme.backgroundColor),
  ];
}

/** Why a check fails, as the API says it after the property's path. */
export function contrastProblem(check: ContrastCheck): string {
  return `${check.pair} has a contrast of ${formatRatio(check.ratio)}; at least ${minContrast}:1 is needed (WCAG AA)`;
}
