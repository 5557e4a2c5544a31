// Text into HTML for the hosted pages: every value from a document, the settings or the request passes here.
const htmlEscapes: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Text or attribute value, escaped for HTML. */
export function escapeHtml(value: unknown): string {
  return String(value ?? "").replace(/[&<>"']/g, (c) => htmlEscapes[c]);
}

/** Escaped text whose line breaks are kept. */
export function multiline(value: string): string {
  return escapeHtml(value).replace(/\r?\n/g, "<br>");
}
