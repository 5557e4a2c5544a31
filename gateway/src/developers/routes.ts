import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import express, { type Router } from "express";

// The browser build of Scalar (its standalone script and the chunks it loads), from node_modules.
const scalarBrowserDir = join(dirname(fileURLToPath(import.meta.resolve("@scalar/api-reference"))), "browser");

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
    <script src="/developers/scalar/standalone.js"></script>
    <script>
      Scalar.createApiReference("#app", {
        url: "/developers/openapi.json",
        withDefaultFonts: false,
        hideClientButton: false,
        telemetry: false,
      });
    </script>
  </body>
</html>`;

/** `/developers`: the OpenAPI document and the Scalar reference, served from our own node_modules. */
export function developersRoutes(openApiDocument: object): Router {
  const router = express.Router();
  router.get("/openapi.json", (_req, res) => {
    res.json(openApiDocument);
  });
  router.use("/scalar", express.static(scalarBrowserDir, { maxAge: "1d", index: false }));
  router.get("/", (_req, res) => {
    res.type("html").send(page);
  });
  return router;
}
