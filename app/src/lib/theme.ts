// The app's colour theme: the system's (prefers-color-scheme, followed live by the CSS) unless the person
// picks light or dark in the account menu; the choice is kept in this browser.

export const themeChoices = ["system", "light", "dark"] as const;
export type ThemeChoice = (typeof themeChoices)[number];

const storageKey = "formsvc-theme";

export function storedTheme(storage: Pick<Storage, "getItem"> | undefined = globalThis.localStorage): ThemeChoice {
  let saved: string | null = null;
  try {
    saved = storage?.getItem(storageKey) ?? null;
  } catch {
    // Storage refused (a private window's policy): the system's theme.
  }
  return (themeChoices as readonly string[]).includes(saved ?? "") ? (saved as ThemeChoice) : "system";
}

/** Shows `choice` now (data-theme on <html> sets color-scheme; none follows the system) and keeps it. */
export function applyTheme(choice: ThemeChoice, root: HTMLElement = document.documentElement, storage: Pick<Storage, "setItem" | "removeItem"> | undefined = globalThis.localStorage): void {
  if (choice === "system") delete root.dataset.theme;
  else root.dataset.theme = choice;
  try {
    if (choice === "system") storage?.removeItem(storageKey);
    else storage?.setItem(storageKey, choice);
  } catch {
    // Not kept: shown for this page only.
  }
}
