import { randomUUID } from "node:crypto";
import express, { type Express } from "express";
import { requestIdHeader } from "@formsvc/platform/caller.ts";
import { runWithRequestId } from "@formsvc/platform/request-context.ts";
import { appStaticRoutes } from "./app-api/static.ts";
import type { GatewayDeps } from "./deps.ts";
import { buildOpenApiDocument } from "./developers/openapi.ts";
import { developersRoutes } from "./developers/routes.ts";
import { fileRoutes } from "./files/routes.ts";
import { embedScript } from "./hosted/embed.ts";
import { hostedFormRoutes } from "./hosted/routes.ts";
import { errorHandler } from "./http-errors.ts";
import { observabilityRoutes, recordHttpMetrics, traceHttpRequests } from "./observability.ts";
import { apiDoor } from "./routes/api-door.ts";
import { appDoor } from "./routes/app-door.ts";
import { apiRoutes, appRoutes } from "./routes/index.ts";

export function createApp(deps: GatewayDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", deps.trustProxy);
  app.set("json spaces", 0);
  app.set("case sensitive routing", true);

  app.use((req, res, next) => {
    const requestId = req.get(requestIdHeader)?.slice(0, 100) || randomUUID();
    res.locals.requestId = requestId;
    res.setHeader("X-Request-Id", requestId);
    runWithRequestId(requestId, next);
  });

  app.use(recordHttpMetrics);
  app.use(observabilityRoutes(deps.health));
  // After the probes and /metrics, which are not worth a trace.
  app.use(traceHttpRequests);

  const routes = apiRoutes(deps);
  const api = apiDoor(deps, routes);
  app.use("/api/v1", api);
  // Kept so a test can prove every served route is in the reference.
  app.locals.apiRouter = api;

  app.use("/files", fileRoutes(deps.submissions, deps.fileLinks));
  app.use("/f", hostedFormRoutes(deps));
  app.get("/embed.js", embedScript());
  app.use("/developers", developersRoutes(buildOpenApiDocument(routes, deps.publicUrl)));
  app.use("/app/api", appDoor(deps, appRoutes(deps)));
  app.use("/app", appStaticRoutes());
  // The address `npm start` prints is where people land: the app.
  app.get("/", (_req, res) => res.redirect(302, "/app"));

  app.use(errorHandler(deps.logger));
  return app;
}
