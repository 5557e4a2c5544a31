import { createServer, type Server } from "node:http";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Logger } from "./logger.ts";

/** This process's Prometheus registry: process metrics plus what each part registers. */
export const metrics = new Registry();
collectDefaultMetrics({ register: metrics });

export function setMetricsService(service: string): void {
  metrics.setDefaultLabels({ service });
}

const latencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

const rpcServerDuration = new Histogram({
  name: "rpc_server_duration_seconds",
  help: "Time to answer an RPC, by method and code",
  labelNames: ["method", "code"] as const,
  buckets: latencyBuckets,
  registers: [metrics],
});

const rpcClientDuration = new Histogram({
  name: "rpc_client_duration_seconds",
  help: "Time for an outgoing RPC, by target service, method and code",
  labelNames: ["target", "method", "code"] as const,
  buckets: latencyBuckets,
  registers: [metrics],
});

function codeOf(err: unknown): string {
  return Code[ConnectError.from(err).code] ?? "Unknown";
}

async function timed<T>(observe: (code: string) => void, call: () => Promise<T>): Promise<T> {
  try {
    const result = await call();
    observe("OK");
    return result;
  } catch (err) {
    observe(codeOf(err));
    throw err;
  }
}

export const rpcServerMetrics: Interceptor = (next) => (req) => {
  const end = rpcServerDuration.startTimer({ method: req.method.name });
  return timed((code) => end({ code }), () => next(req));
};

export const rpcClientMetrics: Interceptor = (next) => (req) => {
  const end = rpcClientDuration.startTimer({ target: req.service.typeName, method: req.method.name });
  return timed((code) => end({ code }), () => next(req));
};

export { Counter, Gauge, Histogram };

/**
 * Serves GET /metrics over HTTP/1.1 for Prometheus, beside a service's HTTP/2-only RPC port, on the
 * same interface as the RPC port (LISTEN_HOST: loopback unless a cluster says otherwise).
 * A busy port is logged, not fatal: metrics must never keep a service from running.
 */
export function startMetricsServer(port: number, logger: Logger, host: string): Server {
  const server = createServer(async (req, res) => {
    if (req.url !== "/metrics") {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": metrics.contentType }).end(await metrics.metrics());
  });
  server.on("error", (err) => logger.warn({ err, port }, "metrics port unavailable; /metrics not served"));
  if (!Number.isInteger(port) || port <= 0 || port > 65535) {
    logger.warn({ port }, "no valid metrics port; /metrics not served");
    return server;
  }
  server.listen(port, host);
  server.unref();
  return server;
}
