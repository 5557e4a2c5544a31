// Security headers of /developers (the Scalar reference page, its script and the OpenAPI document).
// The page runs Scalar's script from our own origin and one inline script that starts it; the CSP allows
// exactly those (the inline one by its hash, so no 'unsafe-inline' for scripts). Scalar sets styles
// inline at run time, hence style-src 'unsafe-inline'. Nothing may frame the page.
import { createHash } from "node:crypto";
import type { RequestHandler } from "express";

/** The CSP source of every inline <script> (one without src) of an HTML page: 'sha256-...'. */
export function inlineScriptHashes(html: string): string[] {
  const hashes: string[] = [];
  for (const [, attributes, body] of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
    if (/\bsrc\s*=/i.test(attributes)) continue;
    hashes.push(`'sha256-${createHash("sha256").update(body, "utf8").digest("base64")}'`);
  }
  return hashes;
}

/** The Content-Security-Policy of a page whose inline scripts are those of `html`. */
export function developersContentSecurityPolicy(html: string): string {
  return [
    "default-src 'none'",
    `script-src 'self' ${inlineScriptHashes(html).join(" ")}`.trimEnd(),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** Sets the headers on every response of the router it is used in. */
export function developersSecurityHeaders(html: string): RequestHandler {
  const policy = developersContentSecurityPolicy(html);
  return (_req, res, next) => {
    res.setHeader("Content-Security-Policy", policy);
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.setHeader("X-Frame-Options", "DENY");
    res.setHeader("Referrer-Policy", "same-origin");
    next();
  };
}
