// The columns of a form's responses, shared by the app's Responses table and the gateway's CSV export.
// Imports nothing, so the app bundles it as it is.

export interface ResponseColumn {
  key: string;
  label: string;
  type: string;
  /** Not a question of the current version. */
  older: boolean;
}

/**
 * The form's current questions, then every other key found in the responses (questions of older versions,
 * kept under the label they had), in the order first seen.
 */
export function responseColumns(
  questions: { key: string; label: string; type: string }[],
  submissions: { answers: Record<string, { label: string; type: string }> }[],
): ResponseColumn[] {
  const columns: ResponseColumn[] = questions.map((q) => ({ key: q.key, label: q.label, type: q.type, older: false }));
  const seen = new Set(columns.map((c) => c.key));
  for (const sub of submissions) {
    for (const [key, answer] of Object.entries(sub.answers)) {
      if (seen.has(key)) continue;
      seen.add(key);
      columns.push({ key, label: answer.label || key, type: answer.type, older: true });
    }
  }
  return columns;
}
