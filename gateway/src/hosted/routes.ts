// Hosted forms: the public, respondent-facing side of the gateway, mounted at /f (no key).
//   GET  /f/:formId             the published form as HTML (hidden fields from the query string)
//   POST /f/:formId             the same form posted without JavaScript (urlencoded) -> thank-you page
//   GET  /f/:formId/definition  {formId, name, version, document}
//   POST /f/:formId/uploads     multipart, field `file` -> {uploadId, name, size, contentType}
//   POST /f/:formId/responses   {version?, answers, hidden?, completed?, responseId?} -> {responseId, completed}
//   POST /f/:formId/insights    the page script's beacons (insights.ts) -> 204
//   POST /f/:formId/password, /email, /email/confirm: what a form asks first (access-gate.ts)
//   GET  /f/assets/form-page.js the page's script
// JSON endpoints leave errors to the app's error handler ({"error"} with the mapped status, and "fields"
// naming each answer's problem by key); the HTML routes answer with HTML pages themselves.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response, type Router } from "express";
import type multer from "multer";
import { z } from "zod";
import {
  describeZodError,
  formLanguages,
  isPastClosingDate,
  isRecordId,
  jsonInputProblem,
  languageTagPattern,
  maxAnswerDepth,
  maxInt32,
  maxUploadBytes,
  resolveSettings,
  textProblem,
  translateForm,
  type FormDocument,
  type FormSettings,
} from "@formsvc/form-document";
import { defaultResponseRatePerIp, defaultUploadBytesPerIp, defaultUploadRatePerIp } from "@formsvc/platform/config.ts";
import { newId } from "@formsvc/platform/ids.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { FormStatus, type Form, type FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import type { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { recordIdSchema } from "../routes/route.ts";
import { errorAnswer, fieldProblems, HttpError } from "../http-errors.ts";
import { idempotencyKeyOf, type IdempotentRequests } from "../idempotency.ts";
import { rejectUnsafeQueryAndBody } from "../input-safety.ts";
import { rateLimit } from "../rate-limit/rate-limit-middleware.ts";
import type { RateLimitStore } from "../rate-limit/sliding-window.ts";
import { accessGate, type GateForm } from "./access-gate.ts";
import { linkRefusal, linkTokenOf, refusalCodeOf, refusalText } from "./access-rules.ts";
import { proofOfWork, type CaptchaDeps } from "./captcha.ts";
import { thirdPartyCaptcha } from "./captcha-providers.ts";
import { securityHeaders, sendHtml } from "./page-headers.ts";
import { countryOf, defaultLookupCountry, type LookupCountry } from "./country.ts";
import { insightsBeaconRoute, insightsScriptFile } from "./insights-beacon.ts";
import { countNothing, isPersonVisit, type InsightsRecorder } from "./insights.ts";
import { responseSaver } from "./response-saves.ts";
import { uploadBudget } from "./upload-budget.ts";
import { streamingUploadStorage, type StreamedFile } from "./upload-storage.ts";
import { answersFromFields, documentOf, first, honeypotField, languageField, problemsByQuestion, type FieldValues } from "./form-fields.ts";
import { formLogicFile } from "./form-logic-build.ts";
import { logicStep, pageWithProblems, postsPageByPage, stepAfterPost } from "./logic-steps.ts";
import { shownDocument } from "./one-question.ts";
import { thankYouCalculated, thankYouRecallValues, type RecallValues } from "./recall.ts";
import {
  renderClosedPage,
  renderErrorPage,
  renderRefusedPage,
  renderFormPage,
  renderNotFoundPage,
  renderThankYouPage,
  type PageUrls,
} from "./render-form.ts";
import { negotiateLanguage, pageLanguages, pageTexts, type PageTexts } from "./page-messages.ts";
import { newRouter } from "../routing.ts";

export interface HostedFormDeps {
  logger: Logger;
  forms: Client<typeof FormsService>;
  submissions: Client<typeof SubmissionsService>;
  rateLimits: {
    store: RateLimitStore;
    /** Requests a minute per client address (RATE_LIMIT_PER_IP), shared with the rest of the gateway. */
    perIp: number;
    /** Posts (responses, uploads) a minute per address, bucket "public" (RESPONSE_RATE_PER_IP, 60 by default). */
    publicWritesPerIp?: number;
    /** Uploads (UPLOAD_RATE_PER_IP) and bytes uploaded (UPLOAD_BYTES_PER_IP) per address in 10 minutes; see upload-budget.ts. */
    uploadsPerIp?: number;
    uploadBytesPerIp?: number;
  };
  /**
   * Header carrying the respondent's two-letter country (COUNTRY_HEADER); `cf-ipcountry` by default.
   * Believed only from a proxy the app trusts (TRUST_PROXY, see country.ts).
   */
  countryHeader?: string;
  /** Where "Made with formsvc" links (BRANDING_URL). */
  brandingUrl: string;
  /** Offline country of a client address; geoip-country by default. */
  lookupCountry?: LookupCountry;
  /** Where uploads with an Idempotency-Key are stored once (responses' keys are kept by submissions). */
  idempotency: IdempotentRequests;
  /** Where views, starts and completions are counted; nothing is counted when absent. */
  insights?: InsightsRecorder;
  /** The proof-of-work captcha's secret and replay store (captcha.ts), and the third-party captchas' verify URLs (captcha-providers.ts). */
  captcha?: CaptchaDeps;
}

/** Largest JSON body of POST /f/:formId/responses. */
const maxResponseBodyBytes = 256 * 1024;

/** Fields of a plain HTML form post: far more than any form has inputs (checkboxes repeat their name). */
const maxPostedFields = 1000;
const scriptFile = join(import.meta.dirname, "form-page.js");
const oneQuestionScriptFile = join(import.meta.dirname, "one-at-a-time.js");

/** Body of POST /f/:formId/responses (DESIGN.md "Hosted forms"). The service checks the answers themselves. */
export const responseBodySchema = z.strictObject({
  version: z.number().int().min(0).max(maxInt32).optional(),
  answers: z.record(z.string().min(1).max(200), z.json()),
  hidden: z.record(z.string().min(1).max(200), z.string().max(10_000)).optional(),
  completed: z.boolean().optional(),
  responseId: recordIdSchema.optional(),
  /** The honeypot's value (settings.honeypot): a body carrying one is answered like a success and not stored. */
  honeypot: z.string().max(10_000).optional(),
  /** The proof-of-work widget's solution (settings.proofOfWork), with a completion. */
  captcha: z.string().max(20_000).optional(),
  /** The language the page was in; submissions records one the form does not offer (any longer) as the form's own. */
  language: z.string().max(35).regex(languageTagPattern, "must be a BCP 47 language tag, e.g. en, de or pt-BR").optional(),
});

/**
 * Whether the page shows the closed message: closed by its owner, past its closing date, or at its
 * response limit as far as the form's count tells (submissions' own count is the one that binds).
 */
function showsClosed(form: Form, settings: FormSettings, now: Date): boolean {
  if (form.status === FormStatus.CLOSED || isPastClosingDate(settings, now)) return true;
  return settings.responseLimit !== null && form.responseCount >= BigInt(settings.responseLimit);
}

/** A form's secrets as a forms without FormAccess answers them: none. */
const noAccessSecrets = { passwordHash: "", captchaSecret: "" };

/** How long a form's settings are kept for its posts (submissionsPerMinute, its captcha, its password) before forms is asked again. */
const formRateTtlMs = 5_000;

/**
 * A respondent's Idempotency-Key bound to their address: a repeat from the same client is answered as the
 * first, while someone elsewhere who learnt the key (a shared proxy's log) gets a claim of their own, never
 * the first respondent's responseId (with which they could complete that partial response) or upload. Only
 * the hash of address and key is stored. "" without a key.
 */
function respondentIdempotencyKey(req: Request): string {
  const key = idempotencyKeyOf(req);
  return key && createHash("sha256").update(`${req.ip ?? ""}\n${key}`).digest("base64url");
}

function formIdOf(req: Request): string {
  const id = String(req.params.formId ?? "");
  if (!isRecordId(id)) throw new HttpError(404, "form not found");
  return id;
}

/** Query string values of the document's hidden fields (first value of repeated names). */
function hiddenFromQuery(req: Request, names: string[]): Record<string, string> {
  const hidden: Record<string, string> = {};
  for (const name of names) {
    const raw = req.query[name];
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (typeof value === "string" && value !== "") hidden[name] = value.slice(0, 10_000);
  }
  return hidden;
}

/** `asked` when the form offers it (any case), as the form names it; else undefined. */
function offeredLanguage(settings: FormSettings, asked: unknown): string | undefined {
  return typeof asked === "string" ? formLanguages(settings).find((language) => language.toLowerCase() === asked.toLowerCase()) : undefined;
}

/** The language a respondent gets: ?lang= when the form offers it, else the best match of Accept-Language among the form's, else the form's own. */
function respondentLanguage(req: Request, settings: FormSettings): string {
  return offeredLanguage(settings, req.query.lang) ?? negotiateLanguage(req.get("accept-language"), formLanguages(settings)) ?? settings.language;
}

/** The form in `language`: its translated document (as the page shows it: one-question.ts) and settings, and the page's system texts. */
function formIn(document: FormDocument, settings: FormSettings, language: string) {
  const translated = translateForm(document, settings, language);
  return { ...translated, document: shownDocument(translated.document, translated.settings), texts: pageTexts(language) };
}

/** The page in each language the form offers: this request's address with its `lang` set. */
function languageLinks(req: Request, settings: FormSettings): { language: string; href: string }[] {
  return formLanguages(settings).map((language) => {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(req.query)) if (name !== "lang" && typeof value === "string") query.set(name, value);
    query.set("lang", language);
    return { language, href: `${req.baseUrl}${req.path}?${query}` };
  });
}

/** The texts of a page no form decides the language of (not found, errors): the respondent's browser's, else English. */
function requestTexts(req: Request): PageTexts {
  return pageTexts(negotiateLanguage(req.get("accept-language"), pageLanguages));
}

/** The JSON endpoints; every other path under /f is answered with HTML, errors included (but for a JSON request's). */
const jsonPath = /^\/[^/]*\/(definition|uploads|responses|insights|captcha)\/?$/;

export function hostedFormRoutes(deps: HostedFormDeps): Router {
  const router = newRouter();
  const lookupCountry = deps.lookupCountry ?? defaultLookupCountry;
  const countryHeader = deps.countryHeader || "cf-ipcountry";
  const { store, perIp } = deps.rateLimits;
  const writesPerIp = deps.rateLimits.publicWritesPerIp ?? defaultResponseRatePerIp;
  const address = (_res: Response, req: Request) => req.ip ?? "unknown";
  const saveResponse = responseSaver(deps.submissions);
  const captcha = proofOfWork(deps.captcha);
  const insights = deps.insights ?? countNothing;
  const providerCaptcha = thirdPartyCaptcha(deps.captcha?.verifyUrls);

  // The logic evaluator's browser copy first: the page's script evaluates rules with it.
  const script = Buffer.concat([readFileSync(formLogicFile), readFileSync(insightsScriptFile), readFileSync(scriptFile), readFileSync(oneQuestionScriptFile)]);
  const scriptVersion = createHash("sha256").update(script).digest("hex").slice(0, 12);

  const urlsOf = (req: Request): PageUrls => ({
    base: req.baseUrl,
    script: `${req.baseUrl}/assets/form-page.js?v=${scriptVersion}`,
    branding: deps.brandingUrl,
  });

  const publicForm = async (id: string) => {
    const { form, showBranding, access } = await deps.forms.getPublicForm({ id });
    if (!form) throw new ConnectError("form not found", Code.NotFound);
    return { form, showBranding, document: documentOf(form.document), settings: resolveSettings(form.settings), access: access ?? noAccessSecrets };
  };
  const gate = accessGate({
    submissions: deps.submissions,
    secret: deps.captcha?.secret,
    store,
    formOf: async (req): Promise<GateForm> => {
      const { form, showBranding, document: ownDocument, settings: ownSettings, access } = await publicForm(formIdOf(req));
      const { document, settings, texts } = formIn(ownDocument, ownSettings, respondentLanguage(req, ownSettings));
      return { formId: form.id, settings, access, info: { name: form.name, document, showBranding, brandingUrl: deps.brandingUrl, theme: settings.theme, texts } };
    },
    send: (res, status, html, settings) => sendHtml(res, status, html, settings),
  });

  // The script: same bytes for every form; a page links it with its hash, so that URL never changes.
  router.get("/assets/form-page.js", (req, res) => {
    res.setHeader("Content-Type", "text/javascript; charset=utf-8");
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.setHeader("Cache-Control", req.query.v === scriptVersion ? "public, max-age=31536000, immutable" : "public, max-age=300");
    res.send(script);
  });

  // The captcha widget (captcha.ts), from our own origin: no page calls anyone else.
  router.get("/assets/altcha.js", captcha.script);

  // Every other request under /f counts against the address's limit, as on /api/v1; posts also
  // against their own, tighter bucket.
  router.use(rateLimit(store, "address", perIp, address));
  const writeLimit = rateLimit(store, "public", writesPerIp, address);

  // A form's settings as posts to it need them (its own rate limit, its captcha, its password), kept a few
  // seconds, so a post does not ask forms for them each time. null: unknown or unreachable.
  type KeptForm = Pick<Awaited<ReturnType<typeof publicForm>>, "settings" | "access">;
  const keptForms = new Map<string, { form: KeptForm | null; until: number }>();
  const keptFormOf = async (formId: string): Promise<KeptForm | null> => {
    const known = keptForms.get(formId);
    if (known && known.until > Date.now()) return known.form;
    const form = await publicForm(formId).then(
      ({ settings, access }) => ({ settings, access }),
      () => null,
    );
    if (keptForms.size >= 10_000) keptForms.clear();
    keptForms.set(formId, { form, until: Date.now() + formRateTtlMs });
    return form;
  };
  const settingsOf = async (formId: string) => (await keptFormOf(formId))?.settings ?? null;
  // Unknown settings are asked for again: a save is never let through unchecked.
  const checkedFormOf = async (formId: string): Promise<KeptForm> => (await keptFormOf(formId)) ?? (await publicForm(formId));
  // The password and confirmed email a save needs (access-gate.ts); the verification goes on to submissions.
  const saveAccess: RequestHandler = async (req, res, next) => {
    const formId = formIdOf(req);
    const { settings, access } = await checkedFormOf(formId);
    res.locals.emailVerification = gate.saveAccess(req, formId, settings, access);
    next();
  };
  // Each form's own limit (settings.submissionsPerMinute) on the posts to it from everyone, bucket "form".
  const formLimit: RequestHandler = async (req, res, next) => {
    const formId = formIdOf(req);
    // Unknown or unreachable: the route's own call answers that.
    const perMinute = (await settingsOf(formId))?.submissionsPerMinute ?? null;
    if (perMinute === null) return next();
    await rateLimit(store, "form", perMinute, () => formId)(req, res, next);
  };

  router.get("/:formId", async (req, res) => {
    const formId = formIdOf(req);
    rejectUnsafeQueryAndBody(req);
    const { form, showBranding, document: ownDocument, settings: ownSettings, access } = await publicForm(formId);
    // The page depends on the browser's languages when the query names none.
    res.setHeader("Vary", "Accept-Language");
    const { document, settings, texts } = formIn(ownDocument, ownSettings, respondentLanguage(req, ownSettings));
    const info = { name: form.name, document, showBranding, brandingUrl: deps.brandingUrl, theme: settings.theme, texts };
    if (showsClosed(form, settings, new Date())) {
      sendHtml(res, 200, renderClosedPage({ ...info, closedMessage: settings.closedMessage, script: urlsOf(req).script }), settings);
      return;
    }
    const refusal = await linkRefusal(deps.submissions, form.id, settings, req);
    if (refusal) return sendHtml(res, 403, renderRefusedPage(texts, refusalText(texts, refusal)), settings);
    if (await gate.pageGate(req, res, { formId: form.id, settings, access, info })) return;
    const hidden = hiddenFromQuery(req, (document.hiddenFields ?? []).map((f) => f.name));
    if (isPersonVisit(req)) insights.view(req, form.id);
    const links = languageLinks(req, settings);
    sendHtml(
      res,
      200,
      renderFormPage({
        formId: form.id,
        name: form.name,
        version: form.version,
        document,
        settings,
        showBranding,
        hidden,
        urls: urlsOf(req),
        texts,
        languageLinks: links,
        linkToken: linkTokenOf(req),
        captchaHtml: captcha.widgetHtml(req, form.id, settings) ?? providerCaptcha.widgetHtml(settings),
      }),
      settings,
    );
  });

  router.get("/:formId/definition", async (req, res) => {
    const { form, document, access } = await publicForm(formIdOf(req));
    gate.readAccess(req, form.id, access);
    res.setHeader("Cache-Control", "no-cache");
    res.json({ formId: form.id, name: form.name, version: form.version, document });
  });

  // Without JavaScript: the whole form posted at once, completed.
  router.post(
    "/:formId",
    writeLimit,
    formLimit,
    express.urlencoded({ extended: false, limit: maxResponseBodyBytes, parameterLimit: maxPostedFields }),
    async (req, res) => {
      const formId = formIdOf(req);
      rejectUnsafeQueryAndBody(req);
      const { form, showBranding, document: ownDocument, settings: ownSettings, access } = await publicForm(formId);
      const fields = (req.body ?? {}) as FieldValues;
      // The language the page was in (its hidden field), when the form still offers it.
      const language = offeredLanguage(ownSettings, first(fields[languageField])) ?? ownSettings.language;
      const { document, settings, texts } = formIn(ownDocument, ownSettings, language);
      const info = { name: form.name, document, showBranding, brandingUrl: deps.brandingUrl, theme: settings.theme, texts };
      const closed = () => sendHtml(res, 409, renderClosedPage({ ...info, closedMessage: settings.closedMessage }), settings);
      if (showsClosed(form, settings, new Date())) return closed();

      // The thank-you screen recalls the response's answers (recall.ts); the honeypot's is thanked without.
      const thanked = (recall?: RecallValues) => {
        if (!settings.redirectUrl) return sendHtml(res, 200, renderThankYouPage({ ...info, thankYou: settings.thankYou, recall }), settings);
        securityHeaders(res, settings);
        res.redirect(303, settings.redirectUrl);
      };
      // A bot that filled the honeypot learns nothing: thanked as anyone, nothing stored.
      if (settings.honeypot && fields[honeypotField]) return thanked();
      const posted = answersFromFields(document, fields, texts);
      const again = (errors: Record<string, string>, formError?: string, page?: number, status = 400) =>
        sendHtml(
          res,
          status,
          renderFormPage({
            formId: form.id,
            name: form.name,
            version: posted.version || form.version,
            document,
            settings,
            showBranding,
            hidden: posted.hidden,
            values: fields,
            errors,
            formError,
            page,
            urls: urlsOf(req),
            linkToken: linkTokenOf(req),
            captchaHtml: captcha.widgetHtml(req, form.id, settings) ?? providerCaptcha.widgetHtml(settings),
            texts,
          }),
          settings,
        );
      // A form with logic rules is posted page by page (logic-steps.ts): on to the page the rules lead to.
      if (postsPageByPage(document)) {
        const step = stepAfterPost(document, fields, posted.errors);
        if (!("complete" in step)) return again(step.errors, undefined, step.page, Object.keys(step.errors).length > 0 ? 400 : 200);
      }
      if (Object.keys(posted.errors).length > 0) return again(posted.errors);
      let emailVerification: string;
      try {
        emailVerification = gate.saveAccess(req, form.id, settings, access);
      } catch (err) {
        // Without the password's pass or a confirmed address (expired meanwhile): the form's first step again.
        return sendHtml(res, 403, renderRefusedPage(texts, refusalText(texts, err)), settings);
      }
      try {
        await captcha.check(form.id, settings, typeof fields.captcha === "string" ? fields.captcha : undefined);
        await providerCaptcha.check(settings, access.captchaSecret, providerCaptcha.tokenOfFields(settings, fields), req);
      } catch (err) {
        if (!refusalCodeOf(err)) throw err;
        return again({}, refusalText(texts, err), undefined, (err as HttpError).status);
      }

      let saved: Awaited<ReturnType<typeof saveResponse>>;
      try {
        saved = await saveResponse({
          formId: form.id,
          version: posted.version,
          answers: posted.answers as JsonObject,
          hidden: posted.hidden,
          completed: true,
          responseId: "",
          country: countryOf(req, countryHeader, lookupCountry),
          linkToken: linkTokenOf(req),
          language: texts.language,
          emailVerification,
        });
        // Without script, the respondent's start shows only now.
        insights.start(form.id);
        insights.completion(form.id);
      } catch (err) {
        const connectErr = err instanceof ConnectError ? err : undefined;
        if (connectErr?.code === Code.FailedPrecondition) return closed();
        // A response rule's refusal (access-rules.ts): what is wrong, in the page's language.
        if (connectErr?.code === Code.PermissionDenied) return sendHtml(res, 403, renderRefusedPage(texts, refusalText(texts, connectErr)), settings);
        if (connectErr?.code === Code.InvalidArgument) {
          const errors = problemsByQuestion(document, fieldProblems(connectErr));
          // A form with logic rules shows the page of the first problem.
          const page = postsPageByPage(document) ? pageWithProblems(document, logicStep(document, fields).state, errors) : undefined;
          return Object.keys(errors).length > 0 ? again(errors, undefined, page) : again({}, connectErr.rawMessage);
        }
        throw err;
      }
      thanked(thankYouRecallValues(document, settings, posted.answers, posted.hidden, saved.calculated));
    },
  );

  const fileTooLarge = () => new HttpError(413, `file is larger than ${maxUploadBytes / 1024 / 1024} MiB`);
  // A failed CreateUpload: a full storage quota of the form or its workspace means the file is too large to keep.
  const uploadFailure = (err: unknown) => (err instanceof ConnectError && err.code === Code.ResourceExhausted ? new HttpError(413, err.rawMessage) : err);
  const uploadOptions = {
    storage: streamingUploadStorage({
      submissions: deps.submissions,
      headerOf: (req, file) => {
        for (const [field, value] of [["file name", file.originalname], ["file content type", file.mimetype]]) {
          const problem = value ? textProblem(value) : undefined;
          if (problem) throw new HttpError(400, `${field}: ${problem}`);
        }
        return { formId: formIdOf(req), name: (file.originalname || "file").slice(0, 255), contentType: file.mimetype || "application/octet-stream" };
      },
      maxBytes: maxUploadBytes,
      tooLarge: fileTooLarge,
    }),
    limits: { fileSize: maxUploadBytes, files: 1, fields: 10, fieldSize: 1024, parts: 11 },
    // Browsers send UTF-8 file names without saying so.
    defParamCharset: "utf8",
  } as multer.Options;
  // multer (busboy with it) is read in on the first upload: a gateway may never take one.
  let uploadParser: Promise<{ upload: RequestHandler; MulterError: typeof multer.MulterError }> | undefined;
  const parseUpload = () =>
    (uploadParser ??= import("multer").then(
      ({ default: multer }) => ({ upload: multer(uploadOptions).single("file"), MulterError: multer.MulterError }),
      (err: unknown) => {
        // A failed read is tried again by the next upload, not kept.
        uploadParser = undefined;
        throw err;
      },
    ));
  // Returned, so that Express passes a failed read on as the request's error.
  const receiveFile: RequestHandler = (req, res, next) =>
    parseUpload().then(({ upload, MulterError }) => upload(req, res, (err: unknown) => {
      if (!err) return next();
      if (err instanceof MulterError) {
        if (err.code === "LIMIT_FILE_SIZE") return next(fileTooLarge());
        if (err.code === "LIMIT_UNEXPECTED_FILE") return next(new HttpError(400, `unexpected file field "${err.field}": send one file in field "file"`));
        return next(new HttpError(400, `invalid upload: ${err.message}`));
      }
      if (err instanceof HttpError) return next(err);
      if (err instanceof ConnectError) return next(uploadFailure(err));
      // Busboy's parse errors: a malformed multipart body.
      next(new HttpError(400, "malformed multipart body"));
    }));

  const knownFormId: RequestHandler = (req, _res, next) => {
    formIdOf(req);
    next();
  };
  const budget = uploadBudget({
    store,
    uploads: deps.rateLimits.uploadsPerIp ?? defaultUploadRatePerIp,
    bytes: deps.rateLimits.uploadBytesPerIp ?? defaultUploadBytesPerIp,
    addressOf: (req) => req.ip ?? "unknown",
  });
  router.post("/:formId/uploads", writeLimit, knownFormId, formLimit, saveAccess, budget.admit, receiveFile, async (req, res) => {
    const file = req.file as (Express.Multer.File & StreamedFile) | undefined;
    if (!file) throw new HttpError(400, 'missing file: send multipart/form-data with the file in field "file"');
    // Charged once all of it came and before submissions is told to keep it: a refused file is not stored.
    try {
      await budget.charge(req, file.size);
    } catch (err) {
      await file.discard(err as Error);
      throw err;
    }
    const store = async () => {
      const created = await file.store().catch((err: unknown) => {
        throw uploadFailure(err);
      });
      return { status: 200, body: { uploadId: created.uploadId, name: created.name, size: Number(created.size), contentType: created.contentType } };
    };
    const key = respondentIdempotencyKey(req);
    if (!key) {
      const answer = await store();
      res.status(answer.status).json(answer.body);
      return;
    }
    // A repeat is the same bytes (their hash) under the same name and type.
    const claim = { scope: `form:${formIdOf(req)}`, key, content: ["uploadFile", file.originalname, file.mimetype, file.sha256] };
    let stored = false;
    let answer: Awaited<ReturnType<typeof deps.idempotency.run>>;
    try {
      answer = await deps.idempotency.run(claim, () => ((stored = true), store()));
    } finally {
      // A repeat's bytes (or those of a refused one) are not kept, and let go before the client is answered:
      // the first upload's stand.
      if (!stored) await file.discard(new Error("not stored: a repeat of an earlier upload"));
    }
    if (answer.replayed) res.setHeader("Idempotent-Replayed", "true");
    res.status(answer.status).json(answer.body);
  });

  router.post("/:formId/responses", writeLimit, formLimit, saveAccess, express.json({ limit: maxResponseBodyBytes }), async (req, res) => {
    const formId = formIdOf(req);
    if (!req.is("application/json")) throw new HttpError(415, "Content-Type must be application/json");
    // Before the schema, whose JSON check recurses through the answers; the answers' own bound first.
    const answersProblem = jsonInputProblem((req.body as { answers?: unknown } | undefined)?.answers, "body.answers", maxAnswerDepth);
    if (answersProblem) throw new HttpError(400, answersProblem);
    rejectUnsafeQueryAndBody(req);
    const parsed = responseBodySchema.safeParse(req.body ?? {});
    if (!parsed.success) throw new HttpError(400, describeZodError(parsed.error, "body"));
    const body = parsed.data;
    // A bot that filled the honeypot learns nothing: answered as a save would be, nothing stored.
    if (body.honeypot) {
      res.json({ responseId: body.responseId ?? newId(), completed: body.completed ?? false });
      return;
    }
    if (body.completed) {
      const { settings, access } = await checkedFormOf(formId);
      await captcha.check(formId, settings, body.captcha);
      await providerCaptcha.check(settings, access.captchaSecret, body.captcha, req);
    }
    const saved = await saveResponse({
      formId,
      version: body.version ?? 0,
      answers: body.answers as JsonObject,
      hidden: body.hidden ?? {},
      completed: body.completed ?? false,
      responseId: body.responseId ?? "",
      country: countryOf(req, countryHeader, lookupCountry),
      idempotencyKey: respondentIdempotencyKey(req),
      linkToken: linkTokenOf(req),
      language: body.language,
      emailVerification: res.locals.emailVerification as string,
    });
    if (saved.idempotencyKeyReused) throw new HttpError(422, "Idempotency-Key was already used with a different request");
    if (saved.replayed) res.setHeader("Idempotent-Replayed", "true");
    // A replay is the same completion again, not another one.
    else if (body.completed && saved.completed) insights.completion(formId);
    // The calculated fields the thank-you screen recalls, for the page to fill in (recall.ts); no others.
    const settings = saved.calculated && Object.keys(saved.calculated).length > 0 ? await settingsOf(formId) : null;
    const calculated = settings && saved.calculated ? thankYouCalculated(settings, saved.calculated) : {};
    res.json({ responseId: saved.responseId, completed: saved.completed, ...(Object.keys(calculated).length > 0 && { calculated }) });
  });

  gate.routes(router);

  router.get("/:formId/captcha", async (req, res) => {
    const formId = formIdOf(req);
    await captcha.sendChallenge(res, formId, (await publicForm(formId)).settings);
  });

  router.post("/:formId/insights", ...insightsBeaconRoute(insights, async (req) => (await publicForm(formIdOf(req))).document));

  // Anything else under /f: the not-found page; a JSON endpoint's path without a form id, the form's 404.
  router.use((req, res) => {
    if (jsonPath.test(req.path)) throw new HttpError(404, "form not found");
    sendHtml(res, 404, renderNotFoundPage(requestTexts(req)));
  });

  // HTML routes answer their errors with a page; JSON routes leave them to the app's error handler.
  const htmlErrors: ErrorRequestHandler = (err, req, res, next) => {
    if (jsonPath.test(req.path) || req.is("application/json") || res.headersSent) return next(err);
    const answer = errorAnswer(err);
    if (answer.status >= 500) deps.logger.error({ err, method: req.method, path: req.path, requestId: res.locals.requestId }, "hosted form page failed");
    for (const [name, value] of Object.entries(answer.headers ?? {})) res.setHeader(name, value);
    if (answer.status === 404) return sendHtml(res, 404, renderNotFoundPage(requestTexts(req)));
    sendHtml(res, answer.status, renderErrorPage(answer.status, requestTexts(req), answer.status < 500 && answer.status !== 429 ? answer.message : undefined));
  };
  router.use(htmlErrors);
  return router;
}

