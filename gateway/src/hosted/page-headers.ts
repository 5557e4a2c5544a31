// The headers of the hosted form pages: a CSP that allows the page's own scripts (and a third-party
// captcha's, on its form's pages only), where a plain post may go and who may frame the page.
import type { Response } from "express";
import type { FormSettings } from "@formsvc/form-document";
import { captchaCspSources } from "./captcha-providers.ts";

/** What a form's settings say about its pages' headers: where a plain post may redirect, who may frame it, whose captcha it loads. */
export type PagePolicy = Partial<Pick<FormSettings, "redirectUrl" | "embedOrigins" | "captcha">>;

/**
 * The CSP `frame-ancestors` of a form's pages: the sites its embedOrigins name ('none' for an empty list),
 * or nothing when any site may embed it (null, the default), as an embed needs.
 */
function frameAncestors(embedOrigins: readonly string[] | null | undefined): string | undefined {
  if (!embedOrigins) return undefined;
  return `frame-ancestors ${embedOrigins.length > 0 ? embedOrigins.join(" ") : "'none'"}`;
}

export function securityHeaders(res: Response, page: PagePolicy = {}): void {
  let formAction = "'self'";
  if (page.redirectUrl) {
    try {
      formAction += ` ${new URL(page.redirectUrl).origin}`;
    } catch {
      // Settings are validated; an odd value only narrows where a plain post may redirect.
    }
  }
  const framing = frameAncestors(page.embedOrigins);
  // A third-party captcha's widget (captcha-providers.ts): its script and frames, on its form's pages only.
  const more = (directive: Parameters<typeof captchaCspSources>[1]) => captchaCspSources(page, directive).map((source) => ` ${source}`).join("");
  const frames = more("frame-src");
  res.setHeader(
    "Content-Security-Policy",
    `default-src 'none'; script-src 'self'${more("script-src")}; style-src 'unsafe-inline'${more("style-src")}; img-src 'self' data: blob:; connect-src 'self'${more("connect-src")}; worker-src blob:;${frames ? ` frame-src${frames};` : ""} form-action ${formAction}; base-uri 'none'${framing ? `; ${framing}` : ""}`,
  );
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Referrer-Policy", "same-origin");
}

export function sendHtml(res: Response, status: number, html: string, page?: PagePolicy): void {
  securityHeaders(res, page);
  res.setHeader("Cache-Control", "no-store");
  res.status(status).type("html").send(html);
}
