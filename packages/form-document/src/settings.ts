import { z } from "zod";
import { fieldViolationParams } from "./errors.ts";
import type { FormDocument } from "./schema.ts";
import { captchaProviders } from "./response-rules.ts";
import { defaultClosedMessage, defaultSubmitLabel } from "./page-text-defaults.ts";
import {
  buttonStyles,
  colorSchemes,
  contrastProblem,
  defaultThankYou,
  defaultTheme,
  fontChoices,
  hexColorPattern,
  logoDataUrlPattern,
  maxLogoDataUrlLength,
  themeContrast,
  type FormTheme,
  type ThankYouScreen,
} from "./theme.ts";
export { defaultThankYou, type ThankYouScreen };

const httpUrl = z.url({ protocol: /^https?$/, error: "must be an http or https URL" }).max(2000);
/** A captcha provider's site or secret key: printable ASCII, no spaces. */
const captchaKey = z.string().min(1).max(500).regex(/^[\x21-\x7e]+$/, "must be a key as the provider gives it (no spaces)");
const hexColor = z.string().regex(hexColorPattern, "must be a colour as #rrggbb");


/** An origin a frame-ancestors source may name: scheme, host (a leading `*.` for its subdomains), optional port. */
const embedOriginPattern = /^https?:\/\/(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?$/;

/** A BCP 47 language tag as forms name their languages: a language subtag, then optional script, region or variant subtags. */
export const languageTagPattern = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;
const languageTag = z.string().max(35).regex(languageTagPattern, "must be a BCP 47 language tag, e.g. en, de or pt-BR");

/** Texts one translation (settings.languages) holds at most. */
const maxTranslatedTexts = 5000;

/** The longest `deleteResponsesAfterDays`: ten years. */
export const maxRetentionDays = 3650;

const fields = {
  language: languageTag.describe(
    "The language of the form's own texts and of its hosted page (a BCP 47 tag): the page says so (`<html lang>`, right to left for ar and he) and shows its own texts (buttons, validation messages, the thank-you and closed defaults) in it, or in the closest language the hosted pages speak (see /developers), else in English.",
  ),
  languages: z
    .array(
      z.strictObject({
        language: languageTag.describe("The language of this translation (a BCP 47 tag)."),
        texts: z
          .record(z.string().min(1).max(300), z.string().max(10_000))
          .refine((texts) => Object.keys(texts).length <= maxTranslatedTexts, `must have at most ${maxTranslatedTexts} texts`)
          .describe(
            "The form's texts in this language, by where each is: `title`; `<blockId>.question`, `.description`, `.placeholder` or `.text` (headings, paragraphs); `<blockId>.options.<optionId>`; `submitLabel`, `closedMessage`, `thankYou.title`, `thankYou.text`, `thankYou.buttonLabel` (settings left at their defaults need none). Ids, not texts, name what is translated: answers in every language are filed under the same keys. A translation may recall (`{{key}}`) what the text it translates may.",
          ),
      }),
    )
    .max(30)
    .superRefine((languages, ctx) => {
      const seen = new Set<string>();
      languages.forEach(({ language }, i) => {
        if (seen.has(language.toLowerCase())) ctx.addIssue({ code: "custom", path: [i, "language"], message: `duplicate language "${language}"`, params: fieldViolationParams });
        seen.add(language.toLowerCase());
      });
    })
    .describe(
      "Further languages the form offers, each with a translation of every owner text. Respondents get `?lang=<tag>` when the form offers it, else the best match of their browser's Accept-Language, else `language`; the page shows a switch between them. Publishing is refused while a translation misses a text (the error names each).",
    ),
  branding: z
    .boolean()
    .describe("Whether the service's branding is shown on the form. `false` needs a plan with the branding entitlement."),
  closedMessage: z.string().max(1000).describe("What a closed form shows instead of its questions."),
  redirectUrl: httpUrl
    .nullable()
    .describe("Where respondents are sent after submitting; null shows the thank-you screen."),
  submitLabel: z.string().min(1).max(60).regex(/\S/, "must not be blank").describe("Label of the submit button."),
  showProgressBar: z.boolean().describe("Whether a multi-page form shows a progress bar."),
  saveProgress: z.boolean().describe("Whether answers are saved as a partial response between pages."),
  oneQuestionAtATime: z
    .boolean()
    .describe(
      "Whether the hosted form shows one question per screen (headings and paragraphs with the question after them): Enter moves on, Shift+Enter back (Ctrl/Cmd+Enter in a long text), a pick of one choice moves on, the progress bar counts questions. Without JavaScript each question is a page of its own. Logic, recall and partial saves work as with pages; a jump goes to the first question of the page it names.",
    ),
  closesAt: z.iso
    .datetime({ offset: true, error: "must be an ISO 8601 date-time, e.g. 2027-01-31T17:00:00Z" })
    .nullable()
    .describe("When the form stops taking responses (ISO 8601 date-time); from then on it answers as a closed form. null: no date."),
  responseLimit: z
    .number()
    .int()
    .min(1)
    .max(2_147_483_647)
    .nullable()
    .describe("Completed responses the form takes at most; past them it answers as a closed form (deleting responses makes room again). null: no limit."),
  deleteResponsesAfterDays: z
    .number()
    .int()
    .min(1)
    .max(maxRetentionDays)
    .nullable()
    .describe(
      `Days a response is kept (1 to ${maxRetentionDays}): a completed response goes this long after it was submitted, a partial one this long after its last save, with its uploaded files, and the form's responseCount drops by the completed ones. Deletion runs periodically (every 10 minutes by default), so a response may outlive its days by that much. null: responses are kept until deleted.`,
    ),
  honeypot: z
    .boolean()
    .describe("Whether the hosted page carries a field hidden from people: a submission that fills it is answered like a success but not stored."),
  submissionsPerMinute: z
    .number()
    .int()
    .min(1)
    .max(100_000)
    .nullable()
    .describe("Responses and uploads the hosted form admits a minute from everyone together (a sliding minute); more are answered 429 with Retry-After. null: no limit of the form's own."),
  embedOrigins: z
    .array(
      z
        .string()
        .max(300)
        .regex(embedOriginPattern, "must be an origin: http(s)://host with an optional port and no path, e.g. https://example.com or https://*.example.com"),
    )
    .max(50)
    .nullable()
    .describe(
      "The sites that may show the hosted form in a frame (an embed), as origins (`https://example.com`, `https://*.example.com`, `http://localhost:3000`); sent as the page's CSP `frame-ancestors`. null: any site may embed it; []: no site may.",
    ),
  requireSingleUseLink: z
    .boolean()
    .describe(
      "Whether the form takes responses only through a single-use link (`/f/:id?t=TOKEN`, minted by POST /forms/:id/links): without a usable token the page says so and saves are answered 403, and each token completes one response.",
    ),
  proofOfWork: z
    .strictObject({
      workFactor: z
        .number()
        .int()
        .min(10)
        .max(1_000_000)
        .default(5000)
        .describe("How hard the challenge is: the browser tries about three quarters of this many keys (PBKDF2, 100 iterations each); 5000 takes a phone about a second."),
    })
    .nullable()
    .describe(
      "A proof-of-work captcha (the ALTCHA protocol, no third party): the hosted page solves a challenge from our own server before a response completes, and a completion without a valid, unspent solution is answered 403. null: none.",
    ),
  password: z
    .boolean()
    .describe(
      "Whether the form asks for a password before its questions (the hosted page asks first; saves without it are answered 403, code passwordRequired). Read as true or false: the password itself is never returned, and only its scrypt hash is stored. In a patch: a string (4 to 200 characters) sets it, null or false removes it, true keeps the current one.",
    ),
  requireEmailVerification: z
    .boolean()
    .describe(
      "Whether the respondent confirms an email address by a mailed 6-digit code before answering (the hosted page asks first; saves without it are answered 403, code emailRequired). The address is stored with the response (`verifiedEmail` on the submission record and the webhook payload), and each address completes one response of the form.",
    ),
  captcha: z
    .strictObject({
      provider: z.enum(captchaProviders).describe("Whose captcha: Cloudflare Turnstile, hCaptcha or Google reCAPTCHA (v2 checkbox or invisible)."),
      siteKey: captchaKey.describe("The provider's site key (public: it is on the page)."),
      secretHint: z.string().max(20).optional().describe("The end of the stored secret key (read only; ignored in a patch): the secret itself is never returned."),
    })
    .nullable()
    .describe(
      "A third party's captcha with the owner's keys: the hosted page loads the provider's widget, and the gateway verifies each completion's token at the provider's verify endpoint; a completion without a valid token is answered 403 (code captchaMissing or captchaInvalid). null: none.",
    ),
  notifications: z
    .strictObject({
      owner: z.boolean().default(false).describe("Email the workspace's owner each completed response."),
      members: z
        .array(z.email({ error: "must be an email address" }).max(254))
        .max(20)
        .default([])
        .describe("Members of the workspace to email each completed response too, by their account's email; an address of no member is ignored."),
      receiptQuestionId: z
        .string()
        .min(1)
        .max(100)
        .nullable()
        .default(null)
        .describe(
          "Email each respondent a copy of their answers, at their answer to this EMAIL question of the form, given by its block id or its key (stored and shown as its block id); any other value is refused (400). null sends no receipt.",
        ),
    })
    .describe("Emails sent for each completed response (never for partial saves), after the response is stored. Given whole in a patch: absent properties take their defaults."),
  theme: z
    .strictObject({
      accentColor: hexColor.default(defaultTheme.accentColor).describe("Colour of the submit and next buttons, links, focus rings and the progress bar (#rrggbb); their labels are white on it."),
      backgroundColor: hexColor
        .default(defaultTheme.backgroundColor)
        .describe(
          "Colour of the page around the form's card (#rrggbb); the page's text is drawn on it (#1f2328, or #e6edf3 when colorScheme is dark). An automatic page uses it in light and #0d1117 in dark.",
        ),
      font: z.enum(fontChoices).default(defaultTheme.font).describe("The page's font, a system font stack (nothing is downloaded)."),
      buttonStyle: z.enum(buttonStyles).default(defaultTheme.buttonStyle).describe("Corners of buttons and inputs: rounded (8px), square or pill."),
      logo: z
        .string()
        .max(maxLogoDataUrlLength, `must be at most ${maxLogoDataUrlLength} characters (an image of about 50 KB)`)
        .regex(logoDataUrlPattern, "must be a data: URL of a PNG, JPEG, GIF or WebP image (data:image/png;base64,...)")
        .nullable()
        .default(defaultTheme.logo)
        .describe("The logo shown above the form: a base64 data: URL of a PNG, JPEG, GIF or WebP image; null: none."),
      colorScheme: z
        .enum(colorSchemes)
        .default(defaultTheme.colorScheme)
        .describe("light, dark (a dark card and light text; backgroundColor must be dark), or auto: the respondent's system chooses (prefers-color-scheme), light with backgroundColor, dark with the dark palette."),
    })
    .superRefine((theme, ctx) => {
      for (const check of themeContrast(theme)) {
        if (!check.passes && hexColorPattern.test(theme[check.field])) ctx.addIssue({ code: "custom", path: [check.field], message: contrastProblem(check), params: fieldViolationParams });
      }
    })
    .describe(
      "The hosted page's look. Refused when white text on the accent colour or the page's text on the background colour has a contrast below 4.5:1 (WCAG AA). Given whole in a patch: absent properties take their defaults.",
    ),
  thankYou: z
    .strictObject({
      title: z.string().min(1).max(200).regex(/\S/, "must not be blank").default(defaultThankYou.title).describe("Heading of the thank-you screen; may recall answers and calculated fields as `{{key}}` (see FormDocument)."),
      text: z.string().max(2000).default(defaultThankYou.text).describe("Text under the heading (line breaks kept); may recall as the title does."),
      buttonLabel: z.string().min(1).max(60).regex(/\S/, "must not be blank").nullable().default(null).describe("Label of a button linking to buttonUrl; null: no button."),
      buttonUrl: httpUrl.nullable().default(null).describe("Where the button (and redirectSeconds) leads: an http or https URL."),
      redirectSeconds: z
        .number()
        .int()
        .min(0)
        .max(600)
        .nullable()
        .default(null)
        .describe("Seconds after which the screen goes on to buttonUrl by itself; null: it stays."),
    })
    .superRefine((screen, ctx) => {
      if (screen.buttonUrl === null) {
        if (screen.buttonLabel !== null) ctx.addIssue({ code: "custom", path: ["buttonUrl"], message: "is required with a buttonLabel", params: fieldViolationParams });
        if (screen.redirectSeconds !== null) ctx.addIssue({ code: "custom", path: ["buttonUrl"], message: "is required with redirectSeconds (where to go)", params: fieldViolationParams });
      } else if (screen.buttonLabel === null && screen.redirectSeconds === null) {
        ctx.addIssue({ code: "custom", path: ["buttonUrl"], message: "needs a buttonLabel or redirectSeconds to be used", params: fieldViolationParams });
      }
    })
    .describe(
      "The screen shown after a completed submission, with and without JavaScript; `redirectUrl` (at once) takes precedence. Given whole in a patch: absent properties take their defaults.",
    ),
};

/** Who is emailed for each completed response of a form. */
export type NotificationSettings = {
  owner: boolean;
  members: readonly string[];
  receiptQuestionId: string | null;
};

export type FormSettings = {
  language: string;
  languages: { language: string; texts: Record<string, string> }[];
  branding: boolean;
  closedMessage: string;
  redirectUrl: string | null;
  submitLabel: string;
  showProgressBar: boolean;
  saveProgress: boolean;
  oneQuestionAtATime: boolean;
  closesAt: string | null;
  responseLimit: number | null;
  deleteResponsesAfterDays: number | null;
  honeypot: boolean;
  submissionsPerMinute: number | null;
  embedOrigins: string[] | null;
  requireSingleUseLink: boolean;
  proofOfWork: { workFactor: number } | null;
  password: boolean;
  requireEmailVerification: boolean;
  captcha: { provider: (typeof captchaProviders)[number]; siteKey: string; secretHint?: string } | null;
  notifications: NotificationSettings;
  theme: FormTheme;
  thankYou: ThankYouScreen;
};

export const defaultSettings: Readonly<FormSettings> = Object.freeze({
  language: "en",
  languages: Object.freeze([]) as unknown as FormSettings["languages"],
  branding: true,
  closedMessage: defaultClosedMessage,
  redirectUrl: null,
  submitLabel: defaultSubmitLabel,
  showProgressBar: true,
  saveProgress: true,
  oneQuestionAtATime: false,
  closesAt: null,
  responseLimit: null,
  deleteResponsesAfterDays: null,
  honeypot: true,
  submissionsPerMinute: null,
  embedOrigins: null,
  requireSingleUseLink: false,
  proofOfWork: null,
  password: false,
  requireEmailVerification: false,
  captcha: null,
  notifications: Object.freeze({ owner: false, members: Object.freeze([]), receiptQuestionId: null }),
  theme: defaultTheme,
  thankYou: defaultThankYou,
});

/** Whether a form's settings ask for any email per completed response. */
export function sendsNotifications(settings: Pick<FormSettings, "notifications">): boolean {
  const { owner, members, receiptQuestionId } = settings.notifications;
  return owner || members.length > 0 || receiptQuestionId !== null;
}

/**
 * The block id of the receipt question `idOrKey` names, by its block id or by its key (the API shows keys),
 * or why it cannot be one: a receipt goes to the answer of an EMAIL question of the form, so any other
 * value would never send one.
 */
export function receiptQuestionOf(document: Pick<FormDocument, "blocks">, idOrKey: string): { id: string } | { problem: string } {
  const block = document.blocks.find((b) => b.id === idOrKey) ?? document.blocks.find((b) => "key" in b && b.key === idOrKey);
  if (!block) return { problem: `no question of the form has the id or key "${idOrKey}"` };
  if (block.type !== "EMAIL") return { problem: `"${idOrKey}" is a ${block.type} question; a receipt needs an EMAIL question` };
  return { id: block.id ?? idOrKey };
}

/** Whether the form's closing date has come (`closesAt` at or before `now`). */
export function isPastClosingDate(settings: Pick<FormSettings, "closesAt">, now: Date): boolean {
  return settings.closesAt !== null && Date.parse(settings.closesAt) <= now.getTime();
}

/** The full settings of a form; absent values take their defaults. Unknown properties are dropped. */
export const formSettingsSchema = z
  .object({
    language: fields.language.default(defaultSettings.language),
    languages: fields.languages.default([]),
    branding: fields.branding.default(defaultSettings.branding),
    closedMessage: fields.closedMessage.default(defaultSettings.closedMessage),
    redirectUrl: fields.redirectUrl.default(defaultSettings.redirectUrl),
    submitLabel: fields.submitLabel.default(defaultSettings.submitLabel),
    showProgressBar: fields.showProgressBar.default(defaultSettings.showProgressBar),
    saveProgress: fields.saveProgress.default(defaultSettings.saveProgress),
    oneQuestionAtATime: fields.oneQuestionAtATime.default(defaultSettings.oneQuestionAtATime),
    closesAt: fields.closesAt.default(defaultSettings.closesAt),
    responseLimit: fields.responseLimit.default(defaultSettings.responseLimit),
    deleteResponsesAfterDays: fields.deleteResponsesAfterDays.default(defaultSettings.deleteResponsesAfterDays),
    honeypot: fields.honeypot.default(defaultSettings.honeypot),
    submissionsPerMinute: fields.submissionsPerMinute.default(defaultSettings.submissionsPerMinute),
    embedOrigins: fields.embedOrigins.default(defaultSettings.embedOrigins),
    requireSingleUseLink: fields.requireSingleUseLink.default(defaultSettings.requireSingleUseLink),
    proofOfWork: fields.proofOfWork.default(defaultSettings.proofOfWork),
    password: fields.password.default(defaultSettings.password),
    requireEmailVerification: fields.requireEmailVerification.default(defaultSettings.requireEmailVerification),
    captcha: fields.captcha.default(defaultSettings.captcha),
    notifications: fields.notifications.default({ ...defaultSettings.notifications, members: [] }),
    theme: fields.theme.default({ ...defaultTheme }),
    thankYou: fields.thankYou.default({ ...defaultThankYou }),
  })
  .describe("The form's settings.");

/** A change of settings (PATCH): only the given properties change; unknown properties are an error. */
export const formSettingsPatchSchema = z
  .strictObject({
    language: fields.language.optional(),
    languages: fields.languages.optional(),
    branding: fields.branding.optional(),
    closedMessage: fields.closedMessage.optional(),
    redirectUrl: fields.redirectUrl.optional(),
    submitLabel: fields.submitLabel.optional(),
    showProgressBar: fields.showProgressBar.optional(),
    saveProgress: fields.saveProgress.optional(),
    oneQuestionAtATime: fields.oneQuestionAtATime.optional(),
    closesAt: fields.closesAt.optional(),
    responseLimit: fields.responseLimit.optional(),
    deleteResponsesAfterDays: fields.deleteResponsesAfterDays.optional(),
    honeypot: fields.honeypot.optional(),
    submissionsPerMinute: fields.submissionsPerMinute.optional(),
    embedOrigins: fields.embedOrigins.optional(),
    requireSingleUseLink: fields.requireSingleUseLink.optional(),
    proofOfWork: fields.proofOfWork.optional(),
    password: z
      .union([z.string().min(4).max(200), z.boolean(), z.null()])
      .optional()
      .describe("The form's password: a string (4 to 200 characters) sets it (only its hash is kept), null or false removes it, true keeps the current one."),
    requireEmailVerification: fields.requireEmailVerification.optional(),
    captcha: z
      .strictObject({
        provider: z.enum(captchaProviders),
        siteKey: captchaKey,
        secret: captchaKey.optional().describe("The provider's secret key, stored by the service and never returned; absent keeps the stored one (of the same provider)."),
        secretHint: z.string().max(20).optional().describe("Ignored (what a read returns of the secret)."),
      })
      .nullable()
      .optional()
      .describe("A third party's captcha: provider, site key and secret key; null removes it."),
    notifications: fields.notifications.optional(),
    theme: fields.theme.optional(),
    thankYou: fields.thankYou.optional(),
  })
  .meta({
    description: "Settings to change; the others keep their values.",
    examples: [{ branding: false, submitLabel: "Send", redirectUrl: "https://example.com/thanks" }],
  });

export type FormSettingsPatch = z.infer<typeof formSettingsPatchSchema>;

/**
 * Full settings from a stored value: every property that is absent or no longer valid takes its default,
 * so stored settings never make a form unreadable.
 */
export function resolveSettings(stored: unknown): FormSettings {
  const source = readableSettings(stored && typeof stored === "object" ? (stored as Record<string, unknown>) : {});
  const out: Record<string, unknown> = { ...defaultSettings };
  for (const name of Object.keys(fields) as (keyof typeof fields)[]) {
    if (!(name in source)) continue;
    const parsed = fields[name].safeParse(source[name]);
    if (parsed.success) out[name] = parsed.data;
  }
  return out as FormSettings;
}

/** The settings after a (validated) patch, as a read shows them (a password as true, a captcha's secret as its hint). */
export function applySettingsPatch(current: FormSettings, patch: FormSettingsPatch): FormSettings {
  const next: Record<string, unknown> = { ...current };
  for (const [name, value] of Object.entries(patch)) {
    if (value !== undefined) next[name] = value;
  }
  return resolveSettings(readableSettings(next));
}

/**
 * What stored settings hold that no read answers: the password's scrypt hash (stored as `passwordHash`) and
 * the captcha's secret key (`captcha.secret`). Forms writes them (updateForm) and hands them to the gateway
 * with the public form (GetPublicForm's access); "" when unset.
 */
export function settingsSecrets(stored: unknown): { passwordHash: string; captchaSecret: string } {
  const source = stored && typeof stored === "object" ? (stored as Record<string, unknown>) : {};
  const captcha = source.captcha && typeof source.captcha === "object" ? (source.captcha as Record<string, unknown>) : {};
  return {
    passwordHash: typeof source.passwordHash === "string" ? source.passwordHash : "",
    captchaSecret: typeof captcha.secret === "string" ? captcha.secret : "",
  };
}

/** What a read shows of a captcha's secret key: its last four characters. */
export function secretHint(secret: string): string {
  return `…${secret.slice(-4)}`;
}

/** Stored (or patched) settings as a read sees them: a password as true, a captcha's secret as its hint, a plain password as true. */
function readableSettings(source: Record<string, unknown>): Record<string, unknown> {
  const view = { ...source };
  const { passwordHash, captchaSecret } = settingsSecrets(source);
  if (passwordHash || typeof source.password === "string") view.password = true;
  delete view.passwordHash;
  if (view.captcha && typeof view.captcha === "object") {
    const { secret: _secret, ...captcha } = view.captcha as Record<string, unknown>;
    view.captcha = captchaSecret ? { ...captcha, secretHint: secretHint(captchaSecret) } : captcha;
  }
  return view;
}
