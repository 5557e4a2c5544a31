import { describe, expect, it } from "vitest";
import { applyTheme, storedTheme } from "./theme.ts";

/** A Storage stand-in: the app keeps one value. */
function memoryStorage(initial: Record<string, string> = {}) {
  const values = new Map(Object.entries(initial));
  return {
    values,
    getItem: (key: string) => values.get(key) ?? null,
    setItem: (key: string, value: string) => void values.set(key, value),
    removeItem: (key: string) => void values.delete(key),
  };
}

describe("the app's theme", () => {
  it("follows the system unless light or dark was chosen; anything else stored counts as none", () => {
    expect(storedTheme(memoryStorage())).toBe("system");
    expect(storedTheme(memoryStorage({ "formsvc-theme": "dark" }))).toBe("dark");
    expect(storedTheme(memoryStorage({ "formsvc-theme": "purple" }))).toBe("system");
    expect(storedTheme(undefined)).toBe("system");
  });

  it("sets data-theme for a choice and removes it for the system's, keeping the choice", () => {
    const root = { dataset: {} as DOMStringMap } as HTMLElement;
    const storage = memoryStorage();
    applyTheme("dark", root, storage);
    expect(root.dataset.theme).toBe("dark");
    expect(storedTheme(storage)).toBe("dark");
    applyTheme("system", root, storage);
    expect(root.dataset.theme).toBeUndefined();
    expect(storage.values.size).toBe(0);
  });
});
