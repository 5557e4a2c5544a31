import { randomUUID } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import express, { type Express } from "express";
import type { Logger } from "@formsvc/platform/logger.ts";
import { requestIdHeader } from "@formsvc/platform/caller.ts";
import { runWithRequestId } from "@formsvc/platform/request-context.ts";
import type { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import type { FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import type { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import type { WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import type { DeliveryService } from "@formsvc/proto/delivery/v1/delivery_pb.js";
import type { Health } from "@formsvc/proto/grpc/health/v1/health_pb.js";
import { authenticateApiKey, type Caller } from "./api/authenticate.ts";
import { appRoutes } from "./app-api/index.ts";
import { mountRoutes, type ApiRoute } from "./api/route-table.ts";
import { formRoutes } from "./api/routes/forms.ts";
import { submissionRoutes } from "./api/routes/submissions.ts";
import { webhookRoutes } from "./api/routes/webhooks.ts";
import { userRoutes } from "./api/routes/users.ts";
import { workspaceRoutes } from "./api/routes/workspaces.ts";
import { buildOpenApiDocument } from "./developers/openapi.ts";
import { developersRoutes } from "./developers/routes.ts";
import { fileRoutes } from "./files/routes.ts";
import { hostedFormRoutes, type HostedFormDeps } from "./hosted/routes.ts";
import type { FileLinks } from "@formsvc/platform/file-links.ts";
import { errorHandler, jsonNotFound } from "./http-errors.ts";
import type { IdempotentRequests } from "./idempotency.ts";
import { observabilityRoutes, recordHttpMetrics, traceHttpRequests } from "./observability.ts";
import { rateLimit } from "./rate-limit/rate-limit-middleware.ts";

export interface GatewayDeps {
  logger: Logger;
  identity: Client<typeof IdentityService>;
  forms: Client<typeof FormsService>;
  submissions: Client<typeof SubmissionsService>;
  webhooks: Client<typeof WebhooksService>;
  delivery: Client<typeof DeliveryService>;
  fileLinks: FileLinks;
  /** Where POSTs with an Idempotency-Key are run once (identity's store). */
  idempotency: IdempotentRequests;
  /** Health clients of the services the gateway needs, for /readyz. */
  health: Record<string, Client<typeof Health>>;
  /** The hosted forms' limits (per address, uploads) and the API's per key. */
  rateLimits: HostedFormDeps["rateLimits"] & { perKey: number };
  publicUrl: string;
  /** Header carrying the respondent's country (COUNTRY_HEADER). */
  countryHeader: string;
  trustProxy: boolean | number | string;
}

/** Every REST endpoint under /api/v1, in the order of the reference. */
export function apiRoutes(
  deps: Pick<GatewayDeps, "identity" | "forms" | "submissions" | "webhooks" | "delivery" | "fileLinks">,
): ApiRoute[] {
  return [
    ...userRoutes(deps.identity),
    ...workspaceRoutes(deps.identity),
    ...formRoutes(deps.forms),
    ...submissionRoutes(deps.submissions, deps.fileLinks),
    ...webhookRoutes(deps.webhooks, deps.delivery),
  ];
}

export function createApp(deps: GatewayDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", deps.trustProxy);
  app.set("json spaces", 0);

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
  const { store, perKey, perIp } = deps.rateLimits;
  const api = express.Router();
  api.use(rateLimit(store, "address", perIp, (_res, req) => req.ip ?? "unknown"));
  mountRoutes(api, routes, [
    authenticateApiKey(deps.identity),
    rateLimit(store, "key", perKey, (res) => (res.locals.caller as Caller).apiKeyId),
    express.json({ limit: "1mb" }),
  ], deps.idempotency);
  api.use(jsonNotFound);
  app.use("/api/v1", api);
  // Kept so a test can prove every served route is in the reference.
  app.locals.apiRouter = api;

  app.use("/files", fileRoutes(deps.submissions, deps.fileLinks));
  app.use("/f", hostedFormRoutes(deps));
  app.use("/developers", developersRoutes(buildOpenApiDocument(routes, deps.publicUrl)));
  app.use("/app", appRoutes(deps));
  // The address `npm start` prints is where people land: the app.
  app.get("/", (_req, res) => res.redirect(302, "/app"));

  app.use(errorHandler(deps.logger));
  return app;
}
