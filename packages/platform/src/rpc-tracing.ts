// Spans of RPC calls: a CLIENT span around each outgoing call, whose context travels as `traceparent`
// in the call's metadata, and a SERVER span around each call answered, under that context.
// Streams (the completion stream lives for hours) and health checks (probes, every few seconds) make no
// span: a trace of them would say nothing about a request.
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { extractTraceContext, injectTraceContext, inSpan, markFailed, SpanKind, type Span } from "./tracing.ts";

const untracedServices = new Set(["grpc.health.v1.Health"]);

/** Codes that mean the service failed, not that the caller asked for something wrong (OpenTelemetry's gRPC server rule). */
const serverFailures = new Set([Code.Unknown, Code.DeadlineExceeded, Code.Unimplemented, Code.Internal, Code.Unavailable, Code.DataLoss]);

function rpcAttributes(req: Parameters<Parameters<Interceptor>[0]>[0]) {
  return { "rpc.system": "grpc", "rpc.service": req.service.typeName, "rpc.method": req.method.name };
}

/** Records the call's gRPC status on its span; `failed` decides which codes mark the span as an error. */
async function traced<T>(span: Span, failed: (code: Code) => boolean, call: () => Promise<T>): Promise<T> {
  try {
    const answer = await call();
    span.setAttribute("rpc.grpc.status_code", 0); // OK
    return answer;
  } catch (err) {
    const { code, rawMessage } = ConnectError.from(err);
    span.setAttribute("rpc.grpc.status_code", code);
    if (failed(code)) markFailed(span, rawMessage);
    throw err;
  }
}

export const traceRpcServer: Interceptor = (next) => (req) => {
  if (req.stream || untracedServices.has(req.service.typeName)) return next(req);
  const parent = extractTraceContext((name) => req.header.get(name) ?? undefined);
  const attributes = rpcAttributes(req);
  return inSpan(`${req.service.typeName}/${req.method.name}`, { kind: SpanKind.SERVER, attributes, parent, recordErrors: false }, (span) =>
    traced(span, (code) => serverFailures.has(code), () => next(req)),
  );
};

export const traceRpcClient: Interceptor = (next) => (req) => {
  if (req.stream || untracedServices.has(req.service.typeName)) return next(req);
  const attributes = rpcAttributes(req);
  return inSpan(`${req.service.typeName}/${req.method.name}`, { kind: SpanKind.CLIENT, attributes, recordErrors: false }, (span) => {
    const carrier = injectTraceContext({});
    for (const [name, value] of Object.entries(carrier)) req.header.set(name, value);
    // Any code other than OK is a failure of the call, seen from the caller.
    return traced(span, () => true, () => next(req));
  });
};
