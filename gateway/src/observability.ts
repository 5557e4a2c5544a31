import type { Client } from "@connectrpc/connect";
import { type Request, type RequestHandler, type Router } from "express";
import { Health, HealthCheckResponse_ServingStatus } from "@formsvc/proto/grpc/health/v1/health_pb.js";
import { Histogram, metrics } from "@formsvc/platform/metrics.ts";
import { extractTraceContext, markFailed, SpanKind, startSpan } from "@formsvc/platform/tracing.ts";
import { version } from "@formsvc/platform/version.ts";
import { retryAfterSeconds } from "./http-errors.ts";
import { newRouter } from "./routing.ts";

const httpDuration = new Histogram({
  name: "http_request_duration_seconds",
  help: "Time to answer an HTTP request, by method, route and status code",
  labelNames: ["method", "route", "code"] as const,
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
  registers: [metrics],
});

/** The route pattern that answered (never the raw path, which holds ids); known once the response is sent. */
function routeOf(req: Request): string {
  return req.route?.path ? `${req.baseUrl}${req.route.path}` : req.baseUrl || "unmatched";
}

/** Records every request under its route pattern. */
export const recordHttpMetrics: RequestHandler = (req, res, next) => {
  const end = httpDuration.startTimer({ method: req.method });
  res.on("finish", () => end({ route: routeOf(req), code: String(res.statusCode) }));
  next();
};

/**
 * The SERVER span of each request, the root of everything it causes (or a child of the caller's
 * `traceparent`). Its attributes hold the path but never the query string (hidden fields ride there).
 */
export const traceHttpRequests: RequestHandler = (req, res, next) => {
  const { span, run } = startSpan(req.method, {
    kind: SpanKind.SERVER,
    parent: extractTraceContext((name) => req.get(name)),
    attributes: { "http.request.method": req.method, "url.path": req.path, "formsvc.request_id": String(res.locals.requestId ?? "") },
  });
  const end = () => {
    const route = routeOf(req);
    span.updateName(`${req.method} ${route}`);
    span.setAttributes({ "http.route": route, "http.response.status_code": res.statusCode });
    if (res.statusCode >= 500) markFailed(span);
    span.end();
  };
  // `close` covers a client that went away before the answer was sent.
  res.once("finish", end);
  res.once("close", () => {
    if (!res.writableFinished) end();
  });
  run(next);
};

/** `/healthz` (the process answers), `/readyz` (every service it needs is SERVING, and the release running), `/metrics`. */
export function observabilityRoutes(services: Record<string, Client<typeof Health>>): Router {
  const router = newRouter();
  router.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  router.get("/readyz", async (_req, res) => {
    const entries = await Promise.all(
      Object.entries(services).map(async ([name, client]) => {
        try {
          const { status } = await client.check({}, { timeoutMs: 1_000 });
          return [name, status === HealthCheckResponse_ServingStatus.SERVING ? "serving" : "not serving"] as const;
        } catch {
          return [name, "unreachable"] as const;
        }
      }),
    );
    const ready = entries.every(([, state]) => state === "serving");
    if (!ready) res.setHeader("Retry-After", String(retryAfterSeconds));
    res.status(ready ? 200 : 503).json({ status: ready ? "ready" : "not ready", version, services: Object.fromEntries(entries) });
  });
  router.get("/metrics", async (_req, res) => {
    res.type(metrics.contentType).send(await metrics.metrics());
  });
  return router;
}
