// GET /embed.js: the script a site puts beside an embedded form (see embed.js). One URL for every form
// and every version of the script, so it is cached for an hour, not for good.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { RequestHandler } from "express";

const embedScriptFile = join(import.meta.dirname, "embed.js");

export function embedScript(): RequestHandler {
  const script = readFileSync(embedScriptFile);
  return (_req, res) => {
    res.setHeader("Content-Type", "text/javascript; charset=utf-8");
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.setHeader("Cache-Control", "public, max-age=3600");
    // Loaded by other sites' pages, also those that isolate themselves (COEP).
    res.setHeader("Cross-Origin-Resource-Policy", "cross-origin");
    res.send(script);
  };
}
