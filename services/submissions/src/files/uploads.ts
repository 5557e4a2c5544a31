// Rules for uploaded files: name and content type (their size is the question types', form-document's
// maxUploadBytes).

/** The longest file name kept, in characters. */
export const maxFileNameLength = 200;
export const defaultContentType = "application/octet-stream";

const controlOrFormatting = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const token = "[A-Za-z0-9!#$&^_.+-]+";
const contentTypePattern = new RegExp(`^${token}/${token}(\\s*;\\s*${token}=(${token}|"[^"\\\\]*"))*$`);

/**
 * The name to keep for an uploaded file: its last path segment (no '/' or '\'), without control or
 * bidirectional-formatting characters, whitespace collapsed, at most 200 characters (the extension kept
 * when it is short), and "file" when nothing is left.
 */
export function sanitizeFileName(raw: string): string {
  const lastSegment = raw.split(/[/\\]/).pop() ?? "";
  let name = lastSegment.normalize("NFC").replace(/\s+/g, " ").replace(controlOrFormatting, "").replace(/ {2,}/g, " ").trim();
  if (name === "" || name === "." || name === "..") return "file";
  const chars = Array.from(name);
  if (name.length <= maxFileNameLength) return name;
  const dot = name.lastIndexOf(".");
  const extension = dot > 0 && name.length - dot <= 16 ? Array.from(name.slice(dot)) : [];
  const base = chars.slice(0, chars.length - extension.length);
  // Cut by code points so no surrogate pair is split; the limit is on UTF-16 length, the stricter one.
  while (base.join("").length + extension.join("").length > maxFileNameLength) base.pop();
  name = (base.join("").trimEnd() || "file") + extension.join("");
  return name;
}

/** The content type as given when it is a well-formed media type, lowercased; the default otherwise. */
export function normalizeContentType(raw: string): string {
  const value = raw.trim();
  if (value === "" || value.length > 255 || !contentTypePattern.test(value)) return defaultContentType;
  const [essence, ...params] = value.split(";");
  return [essence.trim().toLowerCase(), ...params.map((p) => p.trim())].join("; ");
}
