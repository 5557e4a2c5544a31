// One question at a time (settings.oneQuestionAtATime), on the server. The document is shown as screens:
// every question starts one of its own (headings and paragraphs go with the question after them), marked
// as screen breaks (`screen: true` on a PAGE_BREAK) that the logic evaluator tells from the owner's page
// breaks, so jumps still name and leave the owner's pages. Everything that goes page by page (the
// no-JavaScript posts of logic-steps.ts, form-page.js's pages, partial saves between them) then goes
// question by question; one-at-a-time.js adds the keyboard, the transitions and the focus.
import { isInputBlock, pageShows, type Block, type FormDocument, type FormSettings, type LogicState } from "@formsvc/form-document";
import { escapeHtml } from "./html-text.ts";
import type { PageTexts } from "./page-messages.ts";

const screenBreak = { type: "PAGE_BREAK", screen: true } as unknown as Block;

/** Whether `block` starts a screen rather than one of the owner's pages. */
const isScreenBreak = (block: Block) => block.type === "PAGE_BREAK" && (block as { screen?: boolean }).screen === true;

/** `doc` with a screen break before each question that follows another on its page. */
export function questionScreens(doc: FormDocument): FormDocument {
  const blocks: Block[] = [];
  let waiting: Block[] = []; // headings and paragraphs, for the next question
  let asked = false; // the screen being filled has its question
  for (const block of doc.blocks) {
    if (block.type === "PAGE_BREAK") {
      blocks.push(...waiting, block);
      [waiting, asked] = [[], false];
    } else if (!isInputBlock(block)) {
      waiting.push(block);
    } else {
      if (asked) blocks.push(screenBreak);
      blocks.push(...waiting, block);
      [waiting, asked] = [[], true];
    }
  }
  blocks.push(...waiting); // after a page's last question: on its screen
  return { ...doc, blocks };
}

/** The document as the hosted page shows it under `settings`: in screens when one question at a time. */
export function shownDocument(doc: FormDocument, settings: Pick<FormSettings, "oneQuestionAtATime">): FormDocument {
  return settings.oneQuestionAtATime ? questionScreens(doc) : doc;
}

/** Whether `doc` is shown one question at a time (it has screens). */
export function hasScreens(doc: FormDocument): boolean {
  return doc.blocks.some(isScreenBreak);
}

/**
 * The page's progress bar with one question at a time: "Question n of m" over the screens of the
 * respondent's path that show anything. Shown without JavaScript too (the script keeps it up to date);
 * its label is announced politely.
 */
export function questionProgress(doc: FormDocument, step: { page: number; state: LogicState }, texts: PageTexts): string {
  const path = step.state.path.filter((p) => pageShows(doc, step.state, p));
  const at = Math.max(0, path.indexOf(step.page)) + 1;
  const of = Math.max(path.length, at, 1);
  const label = escapeHtml(texts.text("questionOf", { page: at, pages: of }));
  return `<div class="hf-progress" id="hf-progress">
<div class="hf-progress-label" id="hf-progress-label" aria-live="polite">${label}</div>
<div class="hf-progress-track" role="progressbar" aria-labelledby="hf-progress-label" aria-valuemin="1" aria-valuemax="${of}" aria-valuenow="${at}"><div class="hf-progress-fill" style="width:${(at / of) * 100}%"></div></div>
</div>
`;
}

/** The keys that move between questions, said under the buttons (the script shows it: without it they do not work so). */
export function keysHint(texts: PageTexts): string {
  return `<p class="hf-keys" id="hf-keys" hidden>${escapeHtml(texts.text("keysHint"))}</p>\n`;
}

/**
 * Its look: a larger question, and a screen that comes in from below (from above going back) unless the
 * respondent asks for less motion. Only vertical movement, so a phone never scrolls sideways.
 */
export const oneQuestionStyles = `
.hf-one .hf-label,.hf-one legend.hf-label{font-size:1.2rem}
.hf-js .hf-one .hf-page.hf-current{animation:hf-in .25s ease-out}
.hf-js .hf-one[data-direction=back] .hf-page.hf-current{animation-name:hf-in-back}
@keyframes hf-in{from{opacity:0;transform:translateY(1.25rem)}to{opacity:1;transform:none}}
@keyframes hf-in-back{from{opacity:0;transform:translateY(-1.25rem)}to{opacity:1;transform:none}}
.hf-keys{color:var(--hf-muted);font-size:.875rem;margin:.75rem 0 0;text-align:end}
@media (hover:none){.hf-keys{display:none}}
@media (prefers-reduced-motion:reduce){.hf-js .hf-one .hf-page.hf-current{animation:none}}
`;
