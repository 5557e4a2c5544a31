// The app's preview of a form: the hosted page of the form as it is now (drafts too), shown in a frame of
// the app, whose answers go nowhere. Served under /app/api (see routes/app-door.ts).
import express, { type RequestHandler, type Response, type Router } from "express";
import { resolveSettings } from "@formsvc/form-document";
import { asCaller } from "@formsvc/platform/caller.ts";
import type { User } from "@formsvc/proto/identity/v1/identity_pb.js";
import type { GatewayDeps } from "../deps.ts";
import { pathId } from "../input-safety.ts";
import { documentOf } from "./form-fields.ts";
import { renderFormPage, renderThankYouPage } from "./render-form.ts";

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

/** GET /forms/:id/preview for a signed-in member: the page, posting to `previewSink` at `<base>/preview`. */
export function formPreview(forms: GatewayDeps["forms"], brandingUrl: string): RequestHandler {
  return async (req, res) => {
    const { form } = await forms.getForm({ id: pathId(req, "id") }, asCaller((res.locals.user as User).id));
    const settings = resolveSettings(form!.settings);
    const html = renderFormPage({
      formId: `preview-${form!.id}`,
      name: form!.name,
      version: form!.version,
      document: documentOf(form!.document),
      // A preview never redirects away from the app, and does not keep answers between visits.
      settings: { ...settings, redirectUrl: null, saveProgress: false },
      showBranding: settings.branding,
      hidden: {},
      urls: { base: `${req.baseUrl}/preview`, script: "/f/assets/form-page.js", branding: brandingUrl },
    });
    previewHeaders(res);
    res.type("html").send(html);
  };
}

/**
 * Where the previewed page posts: it takes the post and keeps nothing. It changes nothing, so it needs
 * neither a session nor the CSRF header.
 */
export function previewSink(): Router {
  const sink = express.Router();
  sink.post("/:pid/responses", express.json({ limit: "1mb" }), (req, res) => {
    res.json({ responseId: "preview", completed: Boolean((req.body as { completed?: unknown } | undefined)?.completed) });
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
