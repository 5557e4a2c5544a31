// The built web app (app/dist, made by `vite build`) at /app: hashed assets cached for good, and
// index.html, never cached, for /app itself and every other path under it (the app routes in the
// browser). Without a build, a page says how to make one.
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import express, { type Response, type Router } from "express";
import { newRouter } from "../routing.ts";

/** app/dist of the repository (this file is gateway/src/app-api/static.ts). */
const defaultAppDist = resolve(import.meta.dirname, "../../../app/dist");

const appCsp = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "frame-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "object-src 'none'",
  "frame-ancestors 'none'",
].join("; ");

function pageHeaders(res: Response): void {
  res.setHeader("Content-Security-Policy", appCsp);
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("X-Frame-Options", "DENY");
  res.setHeader("Referrer-Policy", "same-origin");
  res.setHeader("Cache-Control", "no-cache");
}

const notBuilt = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>App not built</title></head>
<body><main><h1>The app is not built</h1><p>Run <code>npm run build -w app</code> (or <code>npm start</code>, which builds what is missing), then reload.</p></main></body></html>`;

export function appStaticRoutes(distDir = defaultAppDist): Router {
  const router = newRouter();
  const indexFile = join(distDir, "index.html");
  // Read per request while small and cheap; a rebuild is served without a restart.
  const index = (): string | undefined => (existsSync(indexFile) ? readFileSync(indexFile, "utf8") : undefined);

  router.use(
    "/assets",
    express.static(join(distDir, "assets"), {
      index: false,
      immutable: true,
      maxAge: "365d",
      setHeaders: (res) => res.setHeader("X-Content-Type-Options", "nosniff"),
    }),
    (_req, res) => {
      res.setHeader("Cache-Control", "no-store");
      res.status(404).type("text").send("not found");
    },
  );
  router.use(express.static(distDir, { index: false, maxAge: "1h", setHeaders: (res) => res.setHeader("X-Content-Type-Options", "nosniff") }));

  router.get("/{*path}", (_req, res) => {
    const html = index();
    pageHeaders(res);
    if (!html) {
      res.status(503).type("html").send(notBuilt);
      return;
    }
    res.type("html").send(html);
  });
  return router;
}
