// The editor's undo and redo: a history of drafts (the form page keeps it, so it survives a change of tab).
// Every change is a step, except that typing on in the same field soon after is folded into the step
// before it (`coalesce` names the field), so Undo takes back a word or a sentence, not one letter.

/** The most steps kept back; the oldest go first. */
export const historyLimit = 200;
/** Changes to the same field closer together than this (ms) are one step. */
export const coalesceMs = 1000;

export interface History<T> {
  past: T[];
  present: T;
  future: T[];
  /** The field the last step typed in, and when, while it may still be folded into. */
  last?: { coalesce: unknown; at: number };
}

export function startHistory<T>(present: T): History<T> {
  return { past: [], present, future: [] };
}

/** `history` after a change to `next`; `coalesce` (a field's identity) folds it into the step before when the same field changed last, within `coalesceMs`. */
export function record<T>(history: History<T>, next: T, coalesce: unknown, at: number, limit = historyLimit): History<T> {
  if (next === history.present) return history;
  const folds = coalesce !== undefined && history.last?.coalesce === coalesce && at - history.last.at < coalesceMs && history.future.length === 0;
  if (folds) return { ...history, present: next, last: { coalesce, at } };
  const past = [...history.past, history.present];
  if (past.length > limit) past.splice(0, past.length - limit);
  return { past, present: next, future: [], last: coalesce === undefined ? undefined : { coalesce, at } };
}

export function undo<T>(history: History<T>): History<T> {
  if (history.past.length === 0) return history;
  const past = history.past.slice(0, -1);
  return { past, present: history.past[history.past.length - 1], future: [history.present, ...history.future] };
}

export function redo<T>(history: History<T>): History<T> {
  if (history.future.length === 0) return history;
  const [present, ...future] = history.future;
  return { past: [...history.past, history.present], present, future };
}

/** Every draft of `history` changed by `f` (e.g. keys the server gave new questions), the steps kept. */
export function mapHistory<T>(history: History<T>, f: (value: T) => T): History<T> {
  return { ...history, past: history.past.map(f), present: f(history.present), future: history.future.map(f) };
}
