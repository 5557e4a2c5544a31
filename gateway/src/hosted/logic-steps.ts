// Forms with logic rules (or recall across pages, or one question at a time) without JavaScript: one page at a time, each a plain post. The page rendered
// shows what the rules show for the answers so far (the blocks they hide are left out), the answers of
// the other pages travel along as hidden inputs, and the next page is the one the rules lead to (jumps
// followed). The browser script takes the same markup over: what is left out is kept in <template>
// elements it opens. Pure functions over the document and the posted fields.
import { documentPages, hasLogic, nextPageOf, pageShows, previousPageOf, type FormDocument, type LogicState } from "@formsvc/form-document";
import { all, first, logicStateOf, questionsOf, type FieldValues } from "./form-fields.ts";
import { recallNeedsSteps } from "./recall.ts";
import { hasScreens } from "./one-question.ts";

/** Fields of a page-at-a-time post (keys start with a letter, so these never clash with answers). */
export const pageField = "_page";
export const navField = "_nav";
/** The ids of the blocks the posted page showed: a block the rules show only now is shown before moving on. */
export const shownField = "_shown";

/**
 * Whether the form goes one page at a time without JavaScript: it has logic rules, its later pages recall
 * earlier answers (recall.ts), or it shows one question at a time (one-question.ts).
 */
export function postsPageByPage(doc: FormDocument): boolean {
  return hasLogic(doc) || recallNeedsSteps(doc) || hasScreens(doc);
}

/** What a page-at-a-time render needs: the page shown, and what the rules make of the answers so far. */
export interface LogicStep {
  page: number;
  state: LogicState;
}

/** The rules over the posted fields, at `page` (absent: the first page that shows anything). */
export function logicStep(doc: FormDocument, fields: FieldValues | undefined, page?: number): LogicStep {
  const state = logicStateOf(doc, fields ?? {});
  const start = state.path.find((p) => pageShows(doc, state, p)) ?? 0;
  return { page: page ?? start, state };
}

/** The posted fields of the questions on other pages than `page`, to carry along as hidden inputs. */
export function carriedFields(doc: FormDocument, fields: FieldValues | undefined, page: number): [string, string][] {
  const here = new Set(documentPages(doc)[page]?.map((b) => b.id));
  const carried: [string, string][] = [];
  for (const block of questionsOf(doc)) {
    if (here.has(block.id)) continue;
    const value = fields?.[block.key!];
    for (const v of all(value)) carried.push([block.key!, v]);
  }
  return carried;
}

/** The pages before and after `step`'s page on the respondent's path (undefined: none). */
export function neighbours(doc: FormDocument, step: LogicStep): { previous?: number; next?: number } {
  return { previous: previousPageOf(doc, step.state, step.page), next: nextPageOf(doc, step.state, step.page) };
}

/** The ids of the blocks of `step`'s page that the rules show. */
export function shownBlocks(doc: FormDocument, step: LogicStep): string[] {
  return (documentPages(doc)[step.page] ?? []).map((b) => b.id ?? "").filter((id) => !step.state.hidden.has(id));
}

/** The first page on the respondent's path (as `state`, the rules over the answers, has it) with a question `errors` names (by key), if any. */
export function pageWithProblems(doc: FormDocument, state: LogicState, errors: Record<string, string>): number | undefined {
  const pages = documentPages(doc);
  return state.path.find((p) => questionsOf({ ...doc, blocks: pages[p] ?? [] }).some((b) => errors[b.key!] !== undefined));
}

/** After a page-at-a-time post: the page to show (with the problems of its questions), or that the response is complete. */
export type StepAfterPost = { page: number; errors: Record<string, string> } | { complete: true };

/**
 * Where a post of one page leads. Back: the page before it on the respondent's path. Otherwise the
 * page again when the rules now show a block it did not show (a follow-up question) or its questions
 * have problems; then the next page on the path (jumps followed); past the last page, the response is
 * complete unless a page on the way has problems, which is shown with them.
 */
export function stepAfterPost(doc: FormDocument, fields: FieldValues, errors: Record<string, string>): StepAfterPost {
  const pages = documentPages(doc);
  const posted = Number(first(fields[pageField]));
  const page = Number.isInteger(posted) && posted >= 0 && posted < pages.length ? posted : 0;
  const step = logicStep(doc, fields, page);
  const keysOf = (p: number) => new Set(questionsOf({ ...doc, blocks: pages[p] ?? [] }).map((b) => b.key!));
  const errorsOn = (p: number) => {
    const keys = keysOf(p);
    return Object.fromEntries(Object.entries(errors).filter(([key]) => keys.has(key)));
  };
  const nav = first(fields[navField]);
  if (nav === "back") return { page: previousPageOf(doc, step.state, page) ?? page, errors: {} };

  const shownBefore = new Set(first(fields[shownField]).split(",").filter(Boolean));
  const revealed = shownBlocks(doc, step).filter((id) => !shownBefore.has(id));
  const revealedKeys = new Set(questionsOf(doc).filter((b) => revealed.includes(b.id ?? "")).map((b) => b.key!));
  // A question shown only now has not been answered yet: no problem is named for it.
  const here = Object.fromEntries(Object.entries(errorsOn(page)).filter(([key]) => !revealedKeys.has(key)));
  if (revealed.length > 0 || Object.keys(here).length > 0) return { page, errors: here };
  const next = nextPageOf(doc, step.state, page);
  if (nav === "next" && next !== undefined) return { page: next, errors: {} };
  const withProblems = pageWithProblems(doc, step.state, errors);
  if (withProblems !== undefined) return { page: withProblems, errors: errorsOn(withProblems) };
  // Submitted before the last page (Enter in a field of a page with a next one): on to that page.
  if (next !== undefined) return { page: next, errors: {} };
  return { complete: true };
}
