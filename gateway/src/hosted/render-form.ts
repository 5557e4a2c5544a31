// Server-rendered HTML of hosted forms: the form page, and the closed, thank-you, not-found and error
// pages. Pure functions from data to an HTML string; every value from a document, the settings or the
// request is escaped. The page works without JavaScript (one long form posted as
// application/x-www-form-urlencoded); form-page.js turns it into one page at a time with saving,
// uploads and signatures. Every system text comes from the page language's catalogue (page-messages.ts). The
// document around a page is page-shell.ts's, each block's markup render-question.ts's.
import { defaultSettings, defaultThankYou, documentPages, maxUploadBytes, type Block, type FormDocument, type FormSettings, type FormTheme, type InputBlock, type ThankYouScreen } from "@formsvc/form-document";
import { escapeHtml, multiline } from "./html-text.ts";
import { hiddenFieldPrefix, honeypotField, languageField, needsScript, versionField, type FieldValues } from "./form-fields.ts";
import { carriedFields, logicStep, navField, neighbours, pageField, postsPageByPage, shownBlocks, shownField, type LogicStep } from "./logic-steps.ts";
import { postedRecallValues, recallConfig, recalledHtml, recalledText, type RecallValues } from "./recall.ts";
import { pageTexts, type PageTexts } from "./page-messages.ts";
import { hasScreens, keysHint, questionProgress } from "./one-question.ts";
import { shell } from "./page-shell.ts";
import { renderBlock, type QuestionContext } from "./render-question.ts";

export interface PageUrls {
  /** Where the hosted-form router is mounted, e.g. `/f`. */
  base: string;
  /** The browser script, e.g. `/f/assets/form-page.js?v=...`. */
  script: string;
  /** Where the "Made with formsvc" link goes. */
  branding: string;
}

export interface FormPageInput {
  formId: string;
  name: string;
  version: number;
  document: FormDocument;
  settings: FormSettings;
  showBranding: boolean;
  /** Hidden field values by name: from the query string, or posted back. */
  hidden: Record<string, string>;
  /** Values to show again after a plain post with problems, by question key. */
  values?: FieldValues;
  /** Problems by question key. */
  errors?: Record<string, string>;
  /** A problem not tied to one question. */
  formError?: string;
  /** A form with logic rules: the page shown (logic-steps.ts); the first one when absent. */
  page?: number;
  urls: PageUrls;
  /** A single-use link's token (access-rules.ts): the plain post and the script's saves carry it on as `?t=`. */
  linkToken?: string;
  /** The proof-of-work widget (captcha.ts), before the form's buttons. */
  captchaHtml?: string;
  /** The page's language and its system texts; English when absent. */
  texts?: PageTexts;
  /** The languages the form offers, each with the address of the page in it; a switch shows with two or more. */
  languageLinks?: { language: string; href: string }[];
}

const englishTexts = pageTexts();


/**
 * An owner's setting left at its English default (the submit label, the closed message, the thank-you
 * screen's title and text) reads in the page's language; one the owner wrote stays as written.
 */
function ownerOrDefault(value: string, englishDefault: string, texts: PageTexts, key: "submit" | "closed" | "thankYouTitle" | "thankYouText"): string {
  return value === englishDefault ? texts.text(key) : value;
}


/** JSON that is safe inside a `<script type="application/json">` element. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}


/** Markup left out of the page until the browser script opens it (a form with logic rules). */
function later(html: string): string {
  return `<template class="hf-later">${html}</template>`;
}

/** A block of the page shown one at a time: left out when the rules hide it, required as they say. */
function stepBlock(block: Block, ctx: QuestionContext, step: LogicStep): string {
  const key = "key" in block ? block.key : undefined;
  const shown = key === undefined ? block : ({ ...block, required: step.state.required.has(key) } as Block);
  const html = renderBlock(shown, ctx);
  return step.state.hidden.has(block.id ?? "") ? later(html) : html;
}

/** The page-at-a-time post's own fields: the page, the blocks it shows, and the other pages' answers. */
function stepFields(doc: FormDocument, values: FieldValues | undefined, step: LogicStep): string {
  const carried = carriedFields(doc, values, step.page)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join("\n");
  return `<input type="hidden" name="${pageField}" value="${step.page}">
<input type="hidden" name="${shownField}" value="${escapeHtml(shownBlocks(doc, step).join(","))}">
<div class="hf-carried">${carried}</div>
`;
}

/**
 * The buttons of a page shown one at a time, each a submit button saying where to go. The one Enter
 * presses (the first) is Next, or Submit on the last page; Back is shown first (CSS order).
 */
function stepNav(doc: FormDocument, step: LogicStep, submitLabel: string, texts: PageTexts): string {
  const { previous, next } = neighbours(doc, step);
  const nextButton = `<button type="submit" name="${navField}" value="next" class="hf-next" id="hf-next"${next === undefined ? " hidden" : ""}>${escapeHtml(texts.text("next"))}</button>`;
  const submit = `<button type="submit" class="hf-submit" id="hf-submit"${next === undefined ? "" : " hidden"}>${escapeHtml(submitLabel)}</button>`;
  return `<div class="hf-nav">
${next === undefined ? submit + "\n" + nextButton : nextButton + "\n" + submit}
<button type="submit" name="${navField}" value="back" class="hf-back" id="hf-back" formnovalidate${previous === undefined ? " hidden" : ""}>${escapeHtml(texts.text("back"))}</button>
</div>`;
}

function titleOf(doc: FormDocument, name: string, texts: PageTexts): string {
  return doc.title?.trim() || name || texts.text("untitledForm");
}

/** A language's name in itself ("Deutsch"), from CLDR; the tag when Intl does not know it. */
function languageName(language: string): string {
  try {
    return new Intl.DisplayNames([language], { type: "language" }).of(language) ?? language;
  } catch {
    return language;
  }
}

/** Links to the page in each language the form offers, each named in its own language. */
function languageSwitch(links: FormPageInput["languageLinks"], texts: PageTexts): string {
  if (!links || links.length < 2) return "";
  const items = links.map(({ language, href }) => {
    const current = language.toLowerCase() === texts.language.toLowerCase() ? ' aria-current="true"' : "";
    return `<li><a href="${escapeHtml(href)}" hreflang="${escapeHtml(language)}" lang="${escapeHtml(language)}"${current}>${escapeHtml(languageName(language))}</a></li>`;
  });
  return `<nav class="hf-languages" aria-label="${escapeHtml(texts.text("language"))}"><ul>${items.join("")}</ul></nav>\n`;
}

function errorSummary(input: FormPageInput, texts: PageTexts, recall: RecallValues): string {
  const items: string[] = [];
  if (input.formError) items.push(`<p>${escapeHtml(input.formError)}</p>`);
  const byKey = input.errors ?? {};
  const links = input.document.blocks
    .filter((b): b is InputBlock => "key" in b && typeof b.key === "string" && byKey[b.key] !== undefined)
    .map((b) => `<li><a href="#q-${escapeHtml(b.id ?? b.key)}-field">${escapeHtml(recalledText(b.question, recall))}: ${escapeHtml(byKey[b.key!])}</a></li>`);
  if (links.length > 0) items.push(`<p>${escapeHtml(texts.text("checkAnswers"))}</p><ul>${links.join("")}</ul>`);
  return items.join("");
}

/** The published form as respondents see it. */
export function renderFormPage(input: FormPageInput): string {
  const { document: doc, settings } = input;
  const texts = input.texts ?? englishTexts;
  const t = texts.text;
  const title = titleOf(doc, input.name, texts);
  const submitLabel = ownerOrDefault(settings.submitLabel, defaultSettings.submitLabel, texts, "submit");
  const action = `${input.urls.base}/${encodeURIComponent(input.formId)}`;
  const linkQuery = input.linkToken ? `?t=${encodeURIComponent(input.linkToken)}` : "";
  const recall = postedRecallValues(doc, input.values, input.hidden);
  const ctx = { values: input.values, errors: input.errors, texts, recall };
  const pages = documentPages(doc);
  const hiddenInputs = (doc.hiddenFields ?? [])
    .map((f) => `<input type="hidden" name="${escapeHtml(hiddenFieldPrefix + f.name)}" value="${escapeHtml(input.hidden[f.name] ?? "")}">`)
    .join("\n");
  // With logic rules, one page at a time (logic-steps.ts): what it does not show waits in templates.
  const step = postsPageByPage(doc) ? logicStep(doc, input.values, input.page) : undefined;
  const current = step?.page ?? 0;
  // One question at a time (one-question.ts): its screens are the pages, and each is a question.
  const oneQuestion = step !== undefined && hasScreens(doc);
  const pageOf = oneQuestion ? "questionOf" : "pageOf";
  const pageSections = pages
    .map((blocks, i) => {
      // The script shows and hides blocks by their ids.
      const rendered = blocks.map((b) => (step && i === current ? stepBlock(b, { ...ctx, blockIds: true }, step) : renderBlock(b, { ...ctx, blockIds: step !== undefined }))).join("\n");
      const section = `<section class="hf-page${i === current ? " hf-current" : ""}" data-page="${i}" tabindex="-1"${pages.length > 1 ? ` aria-label="${escapeHtml(t(pageOf, { page: i + 1, pages: pages.length }))}"` : ""}>\n${rendered}\n</section>`;
      return step && i !== current ? later(section) : section;
    })
    .join("\n");
  const config = {
    formId: input.formId,
    version: input.version,
    language: texts.language,
    pages: pages.length,
    saveProgress: settings.saveProgress,
    showProgressBar: settings.showProgressBar,
    oneQuestion,
    redirectUrl: settings.redirectUrl,
    // The thank-you screen's own redirect, after its delay (the plain post's page has a meta refresh instead).
    thanksRedirect: thanksRedirectOf(settings.thankYou),
    responsesUrl: `${action}/responses${linkQuery}`,
    uploadsUrl: `${action}/uploads`,
    maxUploadBytes,
    hiddenFields: (doc.hiddenFields ?? []).map((f) => f.name),
    honeypotField: settings.honeypot ? honeypotField : null,
    // What the browser's copy of the evaluator needs (form-logic.js): the blocks' ids, types, keys and pages, and the rules.
    messages: texts.scriptTemplates(),
    // What recall (recall.ts) needs of the questions recalled; null when no text recalls.
    recall: recallConfig(doc, settings),
    logic: step
      ? {
          blocks: doc.blocks.map(({ id, type, ...b }) => ({ id, type, key: "key" in b ? b.key : undefined, required: "required" in b ? b.required : undefined, screen: "screen" in b ? b.screen : undefined })),
          logic: browserRules(doc.logic),
        }
      : null,
  };
  // Off screen and out of the accessibility tree and tab order: only bots fill it in.
  const honeypot = settings.honeypot
    ? `<div class="hf-trap" aria-hidden="true"><label for="hf-website">${escapeHtml(t("honeypotLabel"))}</label><input type="text" id="hf-website" name="${honeypotField}" value="" tabindex="-1" autocomplete="off"></div>\n`
    : "";
  const scriptNote = needsScript(doc)
    ? `<noscript><p class="hf-summary">${escapeHtml(t("needsScript"))}</p></noscript>\n`
    : "";
  // One question at a time shows its progress from the server (for pages without script); pages show theirs once the script runs.
  const progress = pages.length < 2 ? "" : !oneQuestion ? progressBar(pages.length, texts) : settings.showProgressBar ? questionProgress(doc, step, texts) : "";
  const body = `${languageSwitch(input.languageLinks, texts)}<div class="hf-card">
<form id="hf-form" class="hf-form${oneQuestion ? " hf-one" : ""}" method="post" action="${escapeHtml(action + linkQuery)}" accept-charset="utf-8" aria-labelledby="hf-title">
<h1 id="hf-title">${escapeHtml(title)}</h1>
${scriptNote}<p class="hf-resume" id="hf-resume" hidden>${escapeHtml(t("resumed"))} <button type="button" class="hf-link" id="hf-restart">${escapeHtml(t("startOver"))}</button></p>
${progress}<div class="hf-summary" id="hf-summary" role="alert" tabindex="-1">${errorSummary(input, texts, recall)}</div>
<input type="hidden" name="${versionField}" value="${escapeHtml(input.version)}">
<input type="hidden" name="${languageField}" value="${escapeHtml(texts.language)}">
${hiddenInputs}
${step ? stepFields(doc, input.values, step) : ""}${honeypot}${pageSections}
${input.captchaHtml ?? ""}${step ? stepNav(doc, step, submitLabel, texts) : `<div class="hf-nav">
<button type="button" class="hf-back" id="hf-back" hidden>${escapeHtml(t("back"))}</button>
<button type="button" class="hf-next" id="hf-next" hidden>${escapeHtml(t("next"))}</button>
<button type="submit" class="hf-submit" id="hf-submit">${escapeHtml(submitLabel)}</button>
</div>`}
${oneQuestion ? keysHint(texts) : ""}</form>
</div>
${thankYouSection(settings.thankYou, true, texts, recall)}
<script type="application/json" id="hf-config">${jsonForScript(config)}</script>`;
  return shell(title, body, { texts, showBranding: input.showBranding, brandingUrl: input.urls.branding, script: input.urls.script, theme: settings.theme });
}

function progressBar(pages: number, texts: PageTexts): string {
  return `<div class="hf-progress" id="hf-progress" hidden>
<div class="hf-progress-label" id="hf-progress-label" aria-live="polite">${escapeHtml(texts.text("pageOf", { page: 1, pages }))}</div>
<div class="hf-progress-track" role="progressbar" aria-labelledby="hf-progress-label" aria-valuemin="1" aria-valuemax="${pages}" aria-valuenow="1"><div class="hf-progress-fill"></div></div>
</div>
`;
}

/**
 * The rules as the browser needs them: what shows, hides, requires and jumps. SET actions are left out
 * (and the rules that only set): their values are the server's to apply, and may be what a respondent
 * is not to see (a discount code, an internal tier).
 */
function browserRules(rules: FormDocument["logic"]): NonNullable<FormDocument["logic"]> {
  return (rules ?? []).flatMap((rule) => {
    const then = rule.then.filter((action) => action.action !== "SET");
    return then.length > 0 ? [{ ...rule, then }] : [];
  });
}

/** Where and when the thank-you screen goes on by itself; null when it stays. */
function thanksRedirectOf(screen: ThankYouScreen | undefined): { seconds: number; url: string } | null {
  return screen?.buttonUrl && screen.redirectSeconds !== null ? { seconds: screen.redirectSeconds, url: screen.buttonUrl } : null;
}

/** The thank-you screen of the settings: title, text, its button and the note of its redirect. */
function thankYouSection(screen: ThankYouScreen = defaultThankYou, hidden: boolean, texts: PageTexts, recall: RecallValues): string {
  const redirect = thanksRedirectOf(screen);
  const title = ownerOrDefault(screen.title, defaultThankYou.title, texts, "thankYouTitle");
  const text = screen.text && ownerOrDefault(screen.text, defaultThankYou.text, texts, "thankYouText");
  // target _top: in an embed's frame the button leads the whole page on, not the frame.
  const button =
    screen.buttonLabel && screen.buttonUrl ? `<p><a class="hf-button" id="hf-thanks-button" href="${escapeHtml(screen.buttonUrl)}" target="_top">${escapeHtml(screen.buttonLabel)}</a></p>\n` : "";
  const note = redirect ? `<p class="hf-note" id="hf-thanks-redirect">${redirectNote(redirect, texts)}</p>\n` : "";
  return `<section class="hf-card hf-thanks" id="hf-thanks" tabindex="-1"${hidden ? " hidden" : ""}>
<h2 id="hf-thanks-title">${recalledHtml(title, recall)}</h2>
${text ? `<p id="hf-thanks-text">${recalledHtml(text, recall, true)}</p>\n` : ""}${button}${note}</section>`;
}

/** "You will be taken to <a>site</a> in n seconds.": the message formatted around a placeholder the link replaces. */
function redirectNote(redirect: { seconds: number; url: string }, texts: PageTexts): string {
  const placeholder = "\u0000site\u0000";
  const link = `<a href="${escapeHtml(redirect.url)}">${escapeHtml(new URL(redirect.url).host)}</a>`;
  return escapeHtml(texts.text("redirectNote", { site: placeholder, seconds: redirect.seconds })).replace(placeholder, link);
}

export interface FormInfo {
  name: string;
  document: FormDocument;
  showBranding: boolean;
  /** The form's theme; the default look without one. */
  theme?: FormTheme;
  brandingUrl: string;
  /** The page script, which reports the page's height to an embed's frame (see form-page.js). */
  script?: string;
  /** The page's language and its system texts; English when absent. */
  texts?: PageTexts;
}

/** A closed form: its closed message, and nothing to answer. */
export function renderClosedPage(info: FormInfo & { closedMessage: string }): string {
  const texts = info.texts ?? englishTexts;
  const title = titleOf(info.document, info.name, texts);
  const message = ownerOrDefault(info.closedMessage, defaultSettings.closedMessage, texts, "closed");
  return shell(
    title,
    `<div class="hf-card">\n<h1>${escapeHtml(title)}</h1>\n<p class="hf-closed">${multiline(message)}</p>\n</div>`,
    { texts, showBranding: info.showBranding, brandingUrl: info.brandingUrl, theme: info.theme, script: info.script },
  );
}

/** After a plain (no JavaScript) post that was accepted: the form's thank-you screen, going on by itself when it says so. */
export function renderThankYouPage(info: FormInfo & { thankYou?: ThankYouScreen; recall?: RecallValues }): string {
  const texts = info.texts ?? englishTexts;
  const title = titleOf(info.document, info.name, texts);
  const refresh = thanksRedirectOf(info.thankYou) ?? undefined;
  return shell(title, `<h1 class="hf-sr">${escapeHtml(title)}</h1>\n${thankYouSection(info.thankYou, false, texts, info.recall ?? {})}`, {
    texts,
    showBranding: info.showBranding,
    brandingUrl: info.brandingUrl,
    theme: info.theme,
    refresh,
  });
}

/** What a form asks before its questions (access-gate.ts: its password, an address to confirm): `body` under its title, in its look. */
export function renderGatePage(info: FormInfo, body: string): string {
  const texts = info.texts ?? englishTexts;
  const title = titleOf(info.document, info.name, texts);
  return shell(title, `<div class="hf-card">\n<h1 id="hf-title">${escapeHtml(title)}</h1>\n${body}\n</div>`, {
    texts,
    showBranding: info.showBranding,
    brandingUrl: info.brandingUrl,
    theme: info.theme,
    noindex: true,
  });
}

/** Drafts, the Trash and unknown ids all look like this. */
export function renderNotFoundPage(texts: PageTexts = englishTexts): string {
  const title = texts.text("notFoundTitle");
  return shell(title, `<div class="hf-card">\n<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(texts.text("notFoundText"))}</p>\n</div>`, { texts, noindex: true });
}

/**
 * Any other failure of a page request (rate limit, services unavailable, a request that cannot be read).
 * A request refused for what it sent also shows the gateway's own (English) words for it, as a technical note.
 */
/** The page of a respondent a form's rules turn away (403: no usable single-use link), saying why. */
export function renderRefusedPage(texts: PageTexts, reason: string): string {
  const title = texts.text("refusedTitle");
  return shell(title, `<div class="hf-card">\n<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(reason)}</p>\n</div>`, { texts, noindex: true });
}

export function renderErrorPage(status: number, texts: PageTexts = englishTexts, detail?: string): string {
  const [title, message] =
    status === 429
      ? (["tooManyRequestsTitle", "tooManyRequestsText"] as const)
      : status >= 500
        ? (["unavailableTitle", "unavailableText"] as const)
        : (["badRequestTitle", "badRequestText"] as const);
  const note = detail ? `\n<p class="hf-note"><code lang="en">${escapeHtml(detail)}</code></p>` : "";
  return shell(texts.text(title), `<div class="hf-card">\n<h1>${escapeHtml(texts.text(title))}</h1>\n<p>${escapeHtml(texts.text(message))}</p>${note}\n</div>`, { texts, noindex: true });
}
