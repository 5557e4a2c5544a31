import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Router } from "express";
import { compressedAsset, type CompressedAsset } from "./compressed-assets.ts";
import { developersSecurityHeaders } from "./security-headers.ts";
import { newRouter } from "../routing.ts";

// The browser build of Scalar from node_modules: its standalone script holds everything the page needs.
const scalarPackageDir = join(dirname(fileURLToPath(import.meta.resolve("@scalar/api-reference"))), "..");
const scalarBrowserDir = join(scalarPackageDir, "dist", "browser");
// The script's URL carries Scalar's version, so it can be cached for good.
const scalarVersion = (JSON.parse(readFileSync(join(scalarPackageDir, "package.json"), "utf8")) as { version: string }).version;
const scalarBase = `/developers/scalar/${scalarVersion}`;

/**
 * Scalar for a self-hosted install: nothing that calls Scalar's hosted services (AI agent, MCP, the
 * toolbar's share, deploy and "Generate SDK", "Open in client", telemetry) and no fonts from a CDN.
 */
const scalarConfiguration = {
  url: "/developers/openapi.json",
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
  showDeveloperTools: "never",
  showToolbar: "never",
  agent: { disabled: true },
  mcp: { disabled: true },
  isEditable: false,
  documentDownloadType: "json",
};

const page = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Form service API reference</title>
  </head>
  <body>
    <noscript>This reference needs JavaScript. The raw OpenAPI document is at <a href="/developers/openapi.json">/developers/openapi.json</a>.</noscript>
    <div id="app"></div>
    <!-- Scalar's zod would probe for eval, which the page's CSP forbids; told to do without, it does not try. -->
    <script>globalThis.__zod_globalConfig = { jitless: true };</script>
    <script src="${scalarBase}/standalone.js"></script>
    <script>
      Scalar.createApiReference("#app", ${JSON.stringify(scalarConfiguration)});
    </script>
  </body>
</html>`;

/** `/developers`: the OpenAPI document and the Scalar reference, served from our own node_modules. */
export function developersRoutes(openApiDocument: object): Router {
  const router = newRouter();
  router.use(developersSecurityHeaders(page));
  const document = compressedAsset(Buffer.from(JSON.stringify(openApiDocument)), "application/json", "no-cache");
  const referencePage = compressedAsset(Buffer.from(page), "html", "no-cache");
  // Read and compressed when first asked for: most gateways never serve it.
  let script: CompressedAsset | undefined;
  const scalarScript = () =>
    (script ??= compressedAsset(readFileSync(join(scalarBrowserDir, "standalone.js")), "js", "public, max-age=31536000, immutable"));

  router.get("/openapi.json", (req, res) => document.send(req, res));
  router.get(`/scalar/${scalarVersion}/standalone.js`, (req, res) => scalarScript().send(req, res));
  router.get("/", (req, res) => referencePage.send(req, res));
  return router;
}
