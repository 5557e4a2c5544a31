// GET /embed.js: the script a site puts beside an embedded form (see embed.js). One URL for every form
// and every version of the script, so it is cached for an hour, not for good. Its few texts come before it,
// in every language the hosted pages speak, within a block of their own (nothing global on the site).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { RequestHandler } from "express";
import { embedCatalogues, sourceLanguage } from "./page-messages.ts";

const embedScriptFile = join(import.meta.dirname, "embed.js");

export function embedScript(): RequestHandler {
  const script = `{\nconst embedMessages = ${JSON.stringify({ sourceLanguage, catalogues: embedCatalogues() })};\n${readFileSync(embedScriptFile, "utf8")}}\n`;
  return (_req, res) => {
    res.setHeader("Content-Type", "text/javascript; charset=utf-8");
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.setHeader("Cache-Control", "public, max-age=3600");
    // Loaded by other sites' pages, also those that isolate themselves (COEP).
    res.setHeader("Cross-Origin-Resource-Policy", "cross-origin");
    res.send(script);
  };
}
