import http2 from "node:http2";
import net, { type AddressInfo } from "node:net";
import type { DescService } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createClient,
  type Client,
  type ConnectRouter,
  type Interceptor,
  type Transport,
} from "@connectrpc/connect";
import { connectNodeAdapter, createGrpcTransport } from "@connectrpc/connect-node";
import { requestIdHeader } from "./caller.ts";
import type { Logger } from "./logger.ts";
import { healthRoutes, HealthState } from "./health.ts";
import { rpcClientMetrics, rpcServerMetrics } from "./metrics.ts";
import { traceRpcClient, traceRpcServer } from "./rpc-tracing.ts";
import { currentRequestId, runWithRequestId } from "./request-context.ts";

/** Server side: adopts the caller's request id and logs failures that are not deliberate answers. */
function serverInterceptor(logger: Logger): Interceptor {
  return (next) => (req) =>
    runWithRequestId(req.header.get(requestIdHeader) ?? undefined, async () => {
      try {
        return await next(req);
      } catch (err) {
        const connectErr = ConnectError.from(err);
        if (connectErr.code === Code.Internal || connectErr.code === Code.Unknown) {
          logger.error({ err, method: req.method.name, requestId: currentRequestId() }, "rpc failed");
          // The cause stays in our log; the caller learns nothing more than "internal".
          throw new ConnectError("internal error", Code.Internal);
        }
        throw connectErr;
      }
    });
}

/** Client side: carries the current request id to the next service. */
const propagateRequestId: Interceptor = (next) => (req) => {
  const requestId = currentRequestId();
  if (requestId && !req.header.has(requestIdHeader)) req.header.set(requestIdHeader, requestId);
  return next(req);
};

export interface RpcServer {
  port: number;
  health: HealthState;
  close(): Promise<void>;
}

/** Serves Connect, gRPC and gRPC-Web on one HTTP/2 (cleartext) port. */
export async function startRpcServer(options: {
  port: number;
  host?: string;
  logger: Logger;
  routes: (router: ConnectRouter) => void;
}): Promise<RpcServer> {
  const health = new HealthState();
  const server = http2.createServer(
    connectNodeAdapter({
      routes: (router) => {
        options.routes(router);
        healthRoutes(router, health);
      },
      interceptors: [rpcServerMetrics, traceRpcServer, serverInterceptor(options.logger)],
    }),
  );
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host ?? "127.0.0.1", () => resolve());
  });
  // HTTP/2 writes a call's frames separately; without TCP_NODELAY Nagle's algorithm holds the
  // later ones until the peer's delayed ACK, which costs milliseconds per call.
  server.on("connection", (socket: net.Socket) => socket.setNoDelay(true));
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });
  health.set(true);
  return {
    port: (server.address() as AddressInfo).port,
    health,
    close: () =>
      new Promise<void>((resolve) => {
        health.set(false);
        // Streams that never end (watches, completion streams) must not hold shutdown forever.
        setTimeout(() => sessions.forEach((session) => session.destroy()), 5_000).unref();
        server.close(() => resolve());
        // Let in-flight calls finish, then stop accepting new streams on open sessions.
        for (const session of sessions) session.close();
      }),
  };
}

/** One transport per address in a process: every client of a service (its health client too) shares its connection. */
const transports = new Map<string, Transport>();

function transportTo(baseUrl: string): Transport {
  let transport = transports.get(baseUrl);
  if (!transport) {
    const url = new URL(baseUrl);
    transport = createGrpcTransport({
      baseUrl,
      interceptors: [propagateRequestId, rpcClientMetrics, traceRpcClient],
      nodeOptions: {
        createConnection: () =>
          net.connect({ host: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port) || 80, noDelay: true }),
      },
    });
    transports.set(baseUrl, transport);
  }
  return transport;
}

/** A gRPC client of another service, over the one reused HTTP/2 connection to its address. */
export function createServiceClient<T extends DescService>(service: T, baseUrl: string): Client<T> {
  return createClient(service, transportTo(baseUrl));
}
