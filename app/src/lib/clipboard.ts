/**
 * Copies text with the Clipboard API, or, where it is missing (plain http away from localhost), the copy
 * command over `field` (left selected, so a refused copy is one Ctrl+C away) or, without one, a hidden
 * textarea. False when neither copied.
 */
export async function copyText(text: string, field?: HTMLInputElement | null): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const focused = document.activeElement;
    const area = field ? undefined : document.createElement("textarea");
    if (area) {
      area.value = text;
      area.setAttribute("readonly", "");
      Object.assign(area.style, { position: "fixed", top: "0", opacity: "0" });
      document.body.append(area);
    }
    const selected = field ?? area!;
    selected.focus();
    selected.select();
    try {
      return document.execCommand("copy");
    } catch {
      return false;
    } finally {
      if (area) {
        area.remove();
        if (focused instanceof HTMLElement) focused.focus();
      }
    }
  }
}
