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
import { connectNodeAdapter, createConnectTransport, createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { requestIdHeader } from "./caller.ts";
import { rpcProtocolOf } from "./config.ts";
import type { Logger } from "./logger.ts";
import { isDatabaseUnavailable } from "./database-unavailable.ts";
import { Health } from "@formsvc/proto/grpc/health/v1/health_pb.js";
import { healthRoutes, HealthState } from "./health.ts";
import { noteRequest } from "./idle-memory.ts";
import { rpcClientMetrics, rpcServerMetrics } from "./metrics.ts";
import { traceRpcClient, traceRpcServer } from "./rpc-tracing.ts";
import { currentRequestId, runWithRequestId } from "./request-context.ts";

/**
 * Server side: adopts the caller's request id and logs failures that are not deliberate answers. A
 * database that cannot be reached is UNAVAILABLE (the caller may retry) and makes `health` NOT_SERVING
 * at once; the database probe (runDatabaseService) sets it SERVING again.
 */
function serverInterceptor(logger: Logger, health: HealthState): Interceptor {
  return (next) => (req) => {
    // Health probes (a Kubernetes probe, the gateway's /readyz) are not work that keeps the heap in use.
    if (req.service.typeName !== Health.typeName) noteRequest();
    return runWithRequestId(req.header.get(requestIdHeader) ?? undefined, async () => {
      try {
        return await next(req);
      } catch (err) {
        throw answeredError(err, { logger, method: req.method.name, health });
      }
    });
  };
}

/**
 * What a caller is told of a failure: a deliberate answer (a ConnectError of another code) as it is; a database
 * that cannot be reached as UNAVAILABLE (and `health` NOT_SERVING); anything else logged here and told only as
 * "internal". For a call's failure, and for each failed item of a batch (SaveResponses).
 */
export function answeredError(err: unknown, at: { logger?: Logger; method: string; health?: HealthState }): ConnectError {
  const connectErr = ConnectError.from(err);
  if (connectErr.code !== Code.Internal && connectErr.code !== Code.Unknown) return connectErr;
  if (isDatabaseUnavailable(err)) {
    if (at.health?.setReachable("database", false)) at.logger?.warn({ err, method: at.method }, "database unreachable: not serving until it answers");
    return new ConnectError(databaseUnavailableMessage, Code.Unavailable);
  }
  at.logger?.error({ err, method: at.method, requestId: currentRequestId() }, "rpc failed");
  // The cause stays in our log; the caller learns nothing more than "internal".
  return new ConnectError("internal error", Code.Internal);
}

/** Whether a call failed because the server refused its HTTP/2 stream (RST_STREAM REFUSED_STREAM) unprocessed. */
export function wasRefusedStream(err: unknown): boolean {
  const seen = new Set<unknown>();
  for (let e = err; e instanceof Error && !seen.has(e); e = e.cause) {
    seen.add(e);
    if (e.message.includes("REFUSED_STREAM")) return true;
  }
  return false;
}

/**
 * A unary call whose stream the server refused is sent once more. A server that stops (a rolling upgrade replaces
 * every process under traffic) sends GOAWAY and refuses the streams that crossed it; RFC 9113 §8.7 says such a
 * request was not processed, whatever it was, so it is safe to send again, and the session manager sends it on a
 * new connection (to the process that took the stopping one's place). Seen as a 503 at the gateway without it.
 */
const retryRefusedStream: Interceptor = (next) => async (req) => {
  try {
    return await next(req);
  } catch (err) {
    if (req.stream || !wasRefusedStream(err)) throw err;
    return await next(req);
  }
};

/**
 * What a call failed with when the other service did not answer it: UNAVAILABLE, whatever code connect gave its own
 * client-side failure. Connect names a transport fault by a code of the service's vocabulary: a stream or session cut
 * under the call is CANCELED or ABORTED, a body that ended early INVALID_ARGUMENT ("protocol error: promised 20 bytes,
 * received 0", "missing EndStreamResponse"), a peer's GOAWAY CANCELED ("received GOAWAY without any open streams"),
 * its too_many_pings RESOURCE_EXHAUSTED; passed on, each reads as the service's answer (the gateway's 400, 409, 429
 * or 499). Only an error decoded from the service's answer (`isWireError`) keeps its code, and so do the caller's
 * own cancellation and deadline (the call's signal aborted).
 */
function unanswered(err: unknown, signal: AbortSignal): unknown {
  const failure = ConnectError.from(err);
  if (failure.isWireError || signal.aborted || failure.code === Code.Unavailable) return err;
  return new ConnectError(failure.rawMessage, Code.Unavailable, undefined, undefined, err);
}

async function* unansweredMessages<T>(messages: AsyncIterable<T>, signal: AbortSignal): AsyncIterable<T> {
  try {
    yield* messages;
  } catch (err) {
    throw unanswered(err, signal);
  }
}

/** The innermost interceptor: a failure the service did not send is UNAVAILABLE (`unanswered`), in a stream's messages too. */
const unansweredIsUnavailable: Interceptor = (next) => async (req) => {
  try {
    const res = await next(req);
    return res.stream ? { ...res, message: unansweredMessages(res.message, req.signal) } : res;
  } catch (err) {
    throw unanswered(err, req.signal);
  }
};

/** Client side: carries the current request id to the next service. */
const propagateRequestId: Interceptor = (next) => (req) => {
  const requestId = currentRequestId();
  if (requestId && !req.header.has(requestIdHeader)) req.header.set(requestIdHeader, requestId);
  return next(req);
};

/** What a caller is told while the service's database cannot be reached. */
export const databaseUnavailableMessage = "the database is unavailable";

export interface RpcServer {
  port: number;
  health: HealthState;
  close(): Promise<void>;
}

/**
 * When a client resets a call (RST_STREAM) before it finished sending, Node's HTTP/2 compatibility request
 * ends its body all the same (the reset stream pushes its end), or fails it only by the order of events:
 * a client stream cut short at a message boundary could read as whole. The reset is known first
 * ('aborted'), so the body is failed then: whoever reads it gets CANCELED.
 */
function failBodyWhenReset(req: http2.Http2ServerRequest): void {
  req.once("aborted", () => {
    if (req.readableEnded || req.destroyed) return;
    // The reason goes to a reader of the body; a request nobody reads must not throw it at the process.
    req.on("error", () => {});
    req.destroy(new ConnectError("the caller cut the call short", Code.Canceled));
  });
}

/** Serves Connect, gRPC and gRPC-Web on one HTTP/2 (cleartext) port. */
export async function startRpcServer(options: {
  port: number;
  host?: string;
  logger: Logger;
  routes: (router: ConnectRouter) => void;
}): Promise<RpcServer> {
  const health = new HealthState();
  const handle = connectNodeAdapter({
    routes: (router) => {
      options.routes(router);
      healthRoutes(router, health);
    },
    interceptors: [rpcServerMetrics, traceRpcServer, serverInterceptor(options.logger, health)],
  });
  const server = http2.createServer((req, res) => {
    failBodyWhenReset(req);
    handle(req, res);
  });
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
        // Let in-flight calls finish, then stop accepting new streams on open sessions. A call crossing the GOAWAY
        // is refused unprocessed (REFUSED_STREAM), and the client sends it again (retryRefusedStream).
        for (const session of sessions) session.close();
      }),
  };
}

/**
 * connect-node cancels a call (its request messages throw, its signal aborts) with `stream.close(code)`,
 * which Node carries out as END_STREAM and then RST_STREAM: the server reads the client stream as one its
 * sender finished and may act on it (an upload the gateway discarded would be stored). A call cancelled
 * while still sending is reset alone instead (RST_STREAM CANCEL), as Node's abort signal of a stream does.
 */
class ResetOnCancelSessionManager extends Http2SessionManager {
  override async request(...[method, path, headers, options]: Parameters<Http2SessionManager["request"]>): Promise<http2.ClientHttp2Stream> {
    const cancel = new AbortController();
    const stream = await super.request(method, path, headers, { ...options, signal: cancel.signal } as typeof options);
    guardSession(stream.session);
    const close = stream.close.bind(stream);
    stream.close = (code?: number, callback?: () => void) => {
      if (!code || stream.writableEnded) return close(code, callback);
      if (callback) stream.once("close", callback);
      cancel.abort();
    };
    return stream;
  }
}

const guardedSessions = new WeakSet<object>();

/**
 * connect-node destroys a session that receives GOAWAY with no stream open, with an error, and may have removed its
 * own error listener by the time Node emits it (a request raced the destroy): the error was unhandled and crashed the
 * gateway in the rolling-upgrade test as a service stopped. The manager has seen the error already; this listener
 * only keeps it from being thrown.
 */
function guardSession(session: http2.Http2Session | undefined): void {
  if (!session || guardedSessions.has(session)) return;
  guardedSessions.add(session);
  session.on("error", () => {});
}

/** One transport per address in a process: every client of a service (its health client too) shares its connection. */
const transports = new Map<string, Transport>();

function transportTo(baseUrl: string): Transport {
  let transport = transports.get(baseUrl);
  if (!transport) {
    const url = new URL(baseUrl);
    const options = {
      baseUrl,
      interceptors: [retryRefusedStream, propagateRequestId, rpcClientMetrics, traceRpcClient, unansweredIsUnavailable],
      sessionManager: new ResetOnCancelSessionManager(baseUrl, {}, {
        createConnection: () =>
          net.connect({ host: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port) || 80, noDelay: true }),
      }),
    };
    // The Connect protocol unless RPC_PROTOCOL=grpc: a unary call is one request and one response, without
    // gRPC's envelopes and trailers, and costs ~25 % less CPU end to end (scripts/bench/rpc-protocol.ts).
    transport =
      rpcProtocolOf() === "grpc"
        ? createGrpcTransport(options)
        : createConnectTransport({ ...options, httpVersion: "2", useBinaryFormat: true });
    transports.set(baseUrl, transport);
  }
  return transport;
}

/** A client of another service, over the one reused HTTP/2 connection to its address. */
export function createServiceClient<T extends DescService>(service: T, baseUrl: string): Client<T> {
  return createClient(service, transportTo(baseUrl));
}
