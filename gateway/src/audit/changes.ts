// What an audit event says a request changed: the names of the fields it set, and the values of the harmless
// ones only. Values are recorded by an allow-list, never a deny-list, so a field added later (a new secret,
// an answer) is named without its value until someone decides it is harmless.

export interface AuditChange {
  field: string;
  value?: string;
}

/** Fields whose values are recorded: words that say what changed, never a secret, password, token, key or answer. */
const valuedFields = new Set([
  "name",
  "title",
  "status",
  "role",
  "plan",
  "enabled",
  "eventTypes",
  "eventType",
  "email",
  "format",
  "filter",
  "closesAt",
  "responseLimit",
  "branding",
  "honeypot",
  "submissionsPerMinute",
  "deleteResponsesAfterDays",
  "domains",
  "required",
]);
/** A URL's host alone: its path and query may carry a receiver's token. */
const hostOnlyFields = new Set(["url"]);
/** Objects whose own fields are named (one level down), as `settings.closesAt`; any other object is named whole. */
const expandedFields = new Set(["settings"]);

const maxFields = 100;

/** The changes a validated request part (a body or query) makes, in its field order. */
export function changesOf(part: unknown): AuditChange[] {
  if (!isObject(part)) return [];
  const changes: AuditChange[] = [];
  for (const [field, value] of Object.entries(part)) {
    if (value === undefined) continue;
    if (expandedFields.has(field) && isObject(value)) {
      for (const [inner, innerValue] of Object.entries(value)) {
        if (innerValue !== undefined) changes.push(change(`${field}.${inner}`, inner, innerValue));
      }
    } else changes.push(change(field, field, value));
  }
  return changes.slice(0, maxFields);
}

function change(path: string, name: string, value: unknown): AuditChange {
  if (hostOnlyFields.has(name) && typeof value === "string") return { field: path, value: hostOf(value) };
  if (!valuedFields.has(name)) return { field: path };
  const shown = shownValue(value);
  return shown === undefined ? { field: path } : { field: path, value: shown };
}

/** A scalar, or a list of scalars, as text; anything else has no value shown. */
function shownValue(value: unknown): string | undefined {
  if (value === null) return "null";
  if (["string", "number", "boolean"].includes(typeof value)) return String(value);
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value) && value.every((v) => ["string", "number", "boolean"].includes(typeof v))) return value.join(",");
  return undefined;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "";
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);
}
