// Hosted forms: the public, respondent-facing side of the gateway, mounted at /f (no key).
//   GET  /f/:formId             the published form as HTML (hidden fields from the query string)
//   POST /f/:formId             the same form posted without JavaScript (urlencoded) -> thank-you page
//   GET  /f/:formId/definition  {formId, name, version, document}
//   POST /f/:formId/uploads     multipart, field `file` -> {uploadId, name, size, contentType}
//   POST /f/:formId/responses   {version?, answers, hidden?, completed?, responseId?} -> {responseId, completed}
//   GET  /f/assets/form-page.js the page's script
// JSON endpoints leave errors to the app's error handler ({"error"} with the mapped status); the HTML
// routes answer with HTML pages themselves.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response, type Router } from "express";
import geoip from "geoip-country";
import multer from "multer";
import { z } from "zod";
import { describeZodError, resolveSettings } from "@formsvc/form-document";
import type { Logger } from "@formsvc/platform/logger.ts";
import { FormStatus, type FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import type { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { errorAnswer, HttpError } from "../http-errors.ts";
import { rateLimit } from "../rate-limit/rate-limit-middleware.ts";
import type { RateLimitStore } from "../rate-limit/sliding-window.ts";
import { answersFromFields, documentOf, messageForQuestion, questionNamedBy, type FieldValues } from "./form-fields.ts";
import {
  maxUploadBytes,
  renderClosedPage,
  renderErrorPage,
  renderFormPage,
  renderNotFoundPage,
  renderThankYouPage,
  type PageUrls,
} from "./render-form.ts";

export interface HostedFormDeps {
  logger: Logger;
  forms: Client<typeof FormsService>;
  submissions: Client<typeof SubmissionsService>;
  rateLimits: {
    store: RateLimitStore;
    /** Requests a minute per client address (RATE_LIMIT_PER_IP), shared with the rest of the gateway. */
    perIp: number;
    /** Posts (responses, uploads) a minute per address, bucket "public"; a fifth of `perIp` by default. */
    publicWritesPerIp?: number;
  };
  /** Header carrying the respondent's two-letter country (COUNTRY_HEADER); `cf-ipcountry` by default. */
  countryHeader?: string;
  /** Where "Made with Formsvc" links to; `/` by default. */
  publicUrl?: string;
  /** Offline country of a client address; geoip-country by default. */
  lookupCountry?: (ip: string) => string | undefined;
}

/** Largest JSON body of POST /f/:formId/responses. */
const maxResponseBodyBytes = 256 * 1024;

const formIdPattern = /^[A-Za-z0-9_-]{1,64}$/;
const scriptFile = join(import.meta.dirname, "form-page.js");

/** Body of POST /f/:formId/responses (DESIGN.md "Hosted forms"). The service checks the answers themselves. */
const responseBodySchema = z.strictObject({
  version: z.number().int().min(0).optional(),
  answers: z.record(z.string().min(1).max(200), z.json()),
  hidden: z.record(z.string().min(1).max(200), z.string().max(10_000)).optional(),
  completed: z.boolean().optional(),
  responseId: z.string().min(1).max(100).optional(),
});

function defaultLookupCountry(ip: string): string | undefined {
  const address = ip.startsWith("::ffff:") ? ip.slice(7) : ip;
  return geoip.lookup(address)?.country || undefined;
}

/** The respondent's country: the configured header (two letters), else GeoIP of the client address. */
function countryOf(req: Request, header: string, lookup: (ip: string) => string | undefined): string {
  const sent = req.get(header)?.trim();
  // Cloudflare sends XX for unknown and T1 for Tor; neither is a country.
  if (sent && /^[A-Za-z]{2}$/.test(sent) && sent.toUpperCase() !== "XX") return sent.toUpperCase();
  if (!req.ip) return "";
  try {
    const found = lookup(req.ip)?.toUpperCase();
    return found && /^[A-Z]{2}$/.test(found) ? found : "";
  } catch {
    return "";
  }
}

function formIdOf(req: Request): string {
  const id = String(req.params.formId ?? "");
  if (!formIdPattern.test(id)) throw new HttpError(404, "form not found");
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

function securityHeaders(res: Response, redirectUrl?: string | null): void {
  let formAction = "'self'";
  if (redirectUrl) {
    try {
      formAction += ` ${new URL(redirectUrl).origin}`;
    } catch {
      // Settings are validated; an odd value only narrows where a plain post may redirect.
    }
  }
  res.setHeader(
    "Content-Security-Policy",
    `default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; form-action ${formAction}; base-uri 'none'`,
  );
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Referrer-Policy", "same-origin");
}

function sendHtml(res: Response, status: number, html: string, redirectUrl?: string | null): void {
  securityHeaders(res, redirectUrl);
  res.setHeader("Cache-Control", "no-store");
  res.status(status).type("html").send(html);
}

/** The JSON endpoints; every other path under /f is answered with HTML, errors included. */
const jsonPath = /^\/[^/]+\/(definition|uploads|responses)\/?$/;

export function hostedFormRoutes(deps: HostedFormDeps): Router {
  const router = express.Router();
  const lookupCountry = deps.lookupCountry ?? defaultLookupCountry;
  const countryHeader = deps.countryHeader || "cf-ipcountry";
  const brandingUrl = deps.publicUrl ? `${deps.publicUrl.replace(/\/+$/, "")}/` : "/";
  const { store, perIp } = deps.rateLimits;
  const writesPerIp = deps.rateLimits.publicWritesPerIp ?? Math.max(1, Math.floor(perIp / 5));
  const address = (_res: Response, req: Request) => req.ip ?? "unknown";

  const script = readFileSync(scriptFile);
  const scriptVersion = createHash("sha256").update(script).digest("hex").slice(0, 12);

  const urlsOf = (req: Request): PageUrls => ({
    base: req.baseUrl,
    script: `${req.baseUrl}/assets/form-page.js?v=${scriptVersion}`,
    branding: brandingUrl,
  });

  const publicForm = async (id: string) => {
    const { form, showBranding } = await deps.forms.getPublicForm({ id });
    if (!form) throw new ConnectError("form not found", Code.NotFound);
    return { form, showBranding, document: documentOf(form.document), settings: resolveSettings(form.settings) };
  };

  // The script: same bytes for every form; a page links it with its hash, so that URL never changes.
  router.get("/assets/form-page.js", (req, res) => {
    res.setHeader("Content-Type", "text/javascript; charset=utf-8");
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.setHeader("Cache-Control", req.query.v === scriptVersion ? "public, max-age=31536000, immutable" : "public, max-age=300");
    res.send(script);
  });

  // Every other request under /f counts against the address's limit, as on /api/v1; posts also
  // against their own, tighter bucket.
  router.use(rateLimit(store, "address", perIp, address));
  const writeLimit = rateLimit(store, "public", writesPerIp, address);

  router.get("/:formId", async (req, res) => {
    const { form, showBranding, document, settings } = await publicForm(formIdOf(req));
    const info = { name: form.name, document, showBranding, brandingUrl };
    if (form.status === FormStatus.CLOSED) {
      sendHtml(res, 200, renderClosedPage({ ...info, closedMessage: settings.closedMessage }));
      return;
    }
    const hidden = hiddenFromQuery(req, (document.hiddenFields ?? []).map((f) => f.name));
    sendHtml(
      res,
      200,
      renderFormPage({ formId: form.id, name: form.name, version: form.version, document, settings, showBranding, hidden, urls: urlsOf(req) }),
      settings.redirectUrl,
    );
  });

  router.get("/:formId/definition", async (req, res) => {
    const { form, document } = await publicForm(formIdOf(req));
    res.setHeader("Cache-Control", "no-cache");
    res.json({ formId: form.id, name: form.name, version: form.version, document });
  });

  // Without JavaScript: the whole form posted at once, completed.
  router.post(
    "/:formId",
    writeLimit,
    express.urlencoded({ extended: false, limit: maxResponseBodyBytes, parameterLimit: 5000 }),
    async (req, res) => {
      const { form, showBranding, document, settings } = await publicForm(formIdOf(req));
      const info = { name: form.name, document, showBranding, brandingUrl };
      const closed = () => sendHtml(res, 409, renderClosedPage({ ...info, closedMessage: settings.closedMessage }));
      if (form.status === FormStatus.CLOSED) return closed();

      const fields = (req.body ?? {}) as FieldValues;
      const posted = answersFromFields(document, fields);
      const again = (errors: Record<string, string>, formError?: string) =>
        sendHtml(
          res,
          400,
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
            urls: urlsOf(req),
          }),
          settings.redirectUrl,
        );
      if (Object.keys(posted.errors).length > 0) return again(posted.errors);

      try {
        await deps.submissions.saveResponse({
          formId: form.id,
          version: posted.version,
          answers: posted.answers as JsonObject,
          hidden: posted.hidden,
          completed: true,
          responseId: "",
          country: countryOf(req, countryHeader, lookupCountry),
        });
      } catch (err) {
        const connectErr = err instanceof ConnectError ? err : undefined;
        if (connectErr?.code === Code.FailedPrecondition) return closed();
        if (connectErr?.code === Code.InvalidArgument) {
          const question = questionNamedBy(document, connectErr.rawMessage);
          if (question) return again({ [question.key!]: messageForQuestion(connectErr.rawMessage, question) });
          return again({}, connectErr.rawMessage);
        }
        throw err;
      }
      if (settings.redirectUrl) {
        securityHeaders(res, settings.redirectUrl);
        res.redirect(303, settings.redirectUrl);
        return;
      }
      sendHtml(res, 200, renderThankYouPage(info));
    },
  );

  const upload = multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: maxUploadBytes, files: 1, fields: 10, fieldSize: 1024, parts: 11 },
    // Browsers send UTF-8 file names without saying so.
    defParamCharset: "utf8",
  } as multer.Options).single("file");
  const receiveFile: RequestHandler = (req, res, next) => {
    upload(req, res, (err: unknown) => {
      if (!err) return next();
      if (err instanceof multer.MulterError) {
        if (err.code === "LIMIT_FILE_SIZE") return next(new HttpError(413, `file is larger than ${maxUploadBytes / 1024 / 1024} MiB`));
        if (err.code === "LIMIT_UNEXPECTED_FILE") return next(new HttpError(400, `unexpected file field "${err.field}": send one file in field "file"`));
        return next(new HttpError(400, `invalid upload: ${err.message}`));
      }
      if (err instanceof HttpError) return next(err);
      // Busboy's parse errors: a malformed multipart body.
      next(new HttpError(400, "malformed multipart body"));
    });
  };

  const knownFormId: RequestHandler = (req, _res, next) => {
    formIdOf(req);
    next();
  };
  router.post("/:formId/uploads", writeLimit, knownFormId, receiveFile, async (req, res) => {
    const formId = formIdOf(req);
    const file = req.file;
    if (!file) throw new HttpError(400, 'missing file: send multipart/form-data with the file in field "file"');
    const created = await deps.submissions.createUpload({
      formId,
      name: (file.originalname || "file").slice(0, 255),
      contentType: file.mimetype || "application/octet-stream",
      content: file.buffer,
    });
    res.json({ uploadId: created.uploadId, name: created.name, size: Number(created.size), contentType: created.contentType });
  });

  router.post("/:formId/responses", writeLimit, express.json({ limit: maxResponseBodyBytes }), async (req, res) => {
    const formId = formIdOf(req);
    if (!req.is("application/json")) throw new HttpError(415, "Content-Type must be application/json");
    const parsed = responseBodySchema.safeParse(req.body ?? {});
    if (!parsed.success) throw new HttpError(400, describeZodError(parsed.error, "body"));
    const body = parsed.data;
    const saved = await deps.submissions.saveResponse({
      formId,
      version: body.version ?? 0,
      answers: body.answers as JsonObject,
      hidden: body.hidden ?? {},
      completed: body.completed ?? false,
      responseId: body.responseId ?? "",
      country: countryOf(req, countryHeader, lookupCountry),
    });
    res.json({ responseId: saved.responseId, completed: saved.completed });
  });

  // Anything else under /f: the not-found page.
  router.use((_req, res) => sendHtml(res, 404, renderNotFoundPage()));

  // HTML routes answer their errors with a page; JSON routes leave them to the app's error handler.
  const htmlErrors: ErrorRequestHandler = (err, req, res, next) => {
    if (jsonPath.test(req.path) || res.headersSent) return next(err);
    const answer = errorAnswer(err);
    if (answer.status >= 500) deps.logger.error({ err, method: req.method, path: req.path, requestId: res.locals.requestId }, "hosted form page failed");
    for (const [name, value] of Object.entries(answer.headers ?? {})) res.setHeader(name, value);
    if (answer.status === 404) return sendHtml(res, 404, renderNotFoundPage());
    const message =
      answer.status === 429
        ? "You have sent too many requests. Please wait a minute and try again."
        : answer.status >= 500
          ? "The form cannot be shown right now. Please try again in a moment."
          : answer.message;
    sendHtml(res, answer.status, renderErrorPage(answer.status, message));
  };
  router.use(htmlErrors);
  return router;
}

