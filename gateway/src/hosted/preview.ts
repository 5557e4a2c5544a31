// The app's preview of a form: the hosted page of the form as it is now (drafts too), shown in a frame of
// the app, whose answers go nowhere; and the editor's live preview, the same page of a document not
// saved yet. Served under /app/api (see routes/app-door.ts).
import express, { type Request, type RequestHandler, type Response, type Router } from "express";
import { z } from "zod";
import { DocumentError, formDocumentSchema, normalizeDocument, resolveSettings, type FormDocument } from "@formsvc/form-document";
import type { Form } from "@formsvc/proto/forms/v1/forms_pb.js";
import { asCaller } from "@formsvc/platform/caller.ts";
import type { User } from "@formsvc/proto/identity/v1/identity_pb.js";
import type { GatewayDeps } from "../deps.ts";
import { HttpError } from "../http-errors.ts";
import { pathId } from "../input-safety.ts";
import { parse } from "../routes/route.ts";
import { documentOf } from "./form-fields.ts";
import { shownDocument } from "./one-question.ts";
import { pageTexts } from "./page-messages.ts";
import { renderFormPage, renderThankYouPage } from "./render-form.ts";
import { newRouter } from "../routing.ts";

/** The preview is shown in a frame of the app only, runs only our script, and is never stored. */
function previewHeaders(res: Response): void {
  res.setHeader(
    "Content-Security-Policy",
    "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'self'",
  );
  res.setHeader("X-Frame-Options", "SAMEORIGIN");
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Cache-Control", "no-store");
}

/** The hosted page of `form` showing `document` under `name`, posting to `previewSink` at `<base>/preview`. */
function previewPage(req: Request, res: Response, form: Form, name: string, document: FormDocument, brandingUrl: string): void {
  const settings = resolveSettings(form.settings);
  const html = renderFormPage({
    formId: `preview-${form.id}`,
    name,
    version: form.version,
    document: shownDocument(document, settings),
    // A preview never redirects away from the app (the owner's site is no frame-src of it: the frame
    // would show an error), neither at once nor from the thank-you screen, and does not keep answers
    // between visits.
    settings: { ...settings, redirectUrl: null, thankYou: { ...settings.thankYou, redirectSeconds: null }, saveProgress: false },
    showBranding: settings.branding,
    hidden: {},
    urls: { base: `${req.baseUrl}/preview`, script: "/f/assets/form-page.js", branding: brandingUrl },
    texts: pageTexts(settings.language),
  });
  previewHeaders(res);
  res.type("html").send(html);
}

/** GET /forms/:id/preview for a signed-in member: the form as stored. */
export function formPreview(forms: GatewayDeps["forms"], brandingUrl: string): RequestHandler {
  return async (req, res) => {
    const { form } = await forms.getForm({ id: pathId(req, "id") }, asCaller((res.locals.user as User).id));
    previewPage(req, res, form!, form!.name, documentOf(form!.document), brandingUrl);
  };
}

/** The editor's unsaved form: its name and document, checked as a save checks them. */
const draftPreviewBodySchema = z.strictObject({ name: z.string().max(200).optional(), document: formDocumentSchema });

/**
 * POST /forms/:id/preview for a signed-in member: the page of the editor's unsaved document (with the
 * form's stored settings), as HTML for the app to show in a frame. A document a save would refuse is a 400
 * naming the problem, so the editor can say why its preview waits.
 */
export function draftPreview(forms: GatewayDeps["forms"], brandingUrl: string): RequestHandler {
  return async (req, res) => {
    const { form } = await forms.getForm({ id: pathId(req, "id") }, asCaller((res.locals.user as User).id));
    // Its problems named from the document down (the editor shows them as they are).
    const body = parse(draftPreviewBodySchema, req.body, "");
    let document: FormDocument;
    try {
      // New blocks get ids and keys as a save would give them; nothing is stored.
      document = normalizeDocument(body.document).document;
    } catch (err) {
      if (err instanceof DocumentError) throw new HttpError(400, err.message);
      throw err;
    }
    previewPage(req, res, form!, body.name?.trim() || form!.name, document, brandingUrl);
  };
}

/**
 * Where the previewed page posts: it takes the post and keeps nothing. It changes nothing, so it needs
 * neither a session nor the CSRF header.
 */
export function previewSink(): Router {
  const sink = newRouter();
  sink.post("/:pid/responses", express.json({ limit: "1mb" }), (req, res) => {
    res.json({ responseId: "preview", completed: Boolean((req.body as { completed?: unknown } | undefined)?.completed) });
  });
  // The page's insights beacons: a preview is nobody's visit.
  sink.post("/:pid/insights", (req, res) => {
    req.resume();
    req.on("end", () => res.status(204).end());
  });
  sink.post("/:pid/uploads", (req, res) => {
    req.resume();
    req.on("end", () => res.json({ uploadId: "preview", name: "file", size: 0, contentType: "application/octet-stream" }));
  });
  sink.post("/:pid", (_req, res) => {
    previewHeaders(res);
    res.type("html").send(renderThankYouPage({ name: "Preview", document: { blocks: [] }, showBranding: false, brandingUrl: "/" }));
  });
  return sink;
}
