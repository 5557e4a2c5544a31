// Columns of the Responses table: the form's current questions, then the columns of older versions that
// the responses still carry (kept under the label they had), in the order first seen.
import type { Question, Submission } from "../types.ts";

export interface Column {
  key: string;
  label: string;
  type: string;
  /** Not a question of the current version. */
  older: boolean;
}

export function responseColumns(questions: Question[], submissions: Pick<Submission, "answers">[]): Column[] {
  const columns: Column[] = questions.map((q) => ({ key: q.key, label: q.label, type: q.type, older: false }));
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

/** Hides columns no response has an answer for, except the questions of the current version. */
export function columnsWithAnswers(columns: Column[], submissions: Pick<Submission, "answers">[]): Column[] {
  return columns.filter((c) => !c.older || submissions.some((s) => s.answers[c.key]));
}
