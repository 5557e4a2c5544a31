// OpenTelemetry traces, off unless an OTLP endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; spans go there as OTLP/HTTP JSON). While off, the API's no-op
// tracer and propagator make every helper here nearly free and store no trace context anywhere.
//
// One trace follows a response from the gateway's HTTP span through the RPC calls (W3C `traceparent`
// in the call metadata), the outbox row and the Kafka message (a `traceparent` header) or the embedded
// stream, to each webhook POST of its delivery. Spans are made by hand at those seams, not by
// monkey-patching libraries.
import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from "@opentelemetry/api";

export { SpanKind, type Context, type Span };

const traceparentHeader = "traceparent";

/** The tracer of every span this system makes (a no-op until startTracing registered a provider). */
const tracer = trace.getTracer("formsvc");

export interface Tracing {
  /** Exports the spans still buffered, then stops. */
  shutdown(): Promise<void>;
}

type Env = Record<string, string | undefined>;

/** Whether the environment asks for traces. */
export function tracingConfigured(env: Env = process.env): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT) && env.OTEL_SDK_DISABLED !== "true";
}

/**
 * Registers the global tracer provider, context manager and propagator when the environment asks for
 * traces; undefined (and nothing registered) otherwise. `OTEL_SERVICE_NAME` overrides the service name
 * `formsvc-<service>`; `OTEL_BSP_SCHEDULE_DELAY` is the export interval (ms, 5,000 when absent). The SDK
 * and its exporter (~25 MiB resident) are imported only then: with tracing off only the API's no-op is loaded.
 */
export async function startTracing(service: string, env: Env = process.env): Promise<Tracing | undefined> {
  if (!tracingConfigured(env)) return undefined;
  const { registerTracerProvider } = await import("./tracing-sdk.ts");
  return registerTracerProvider(service, env);
}

/** Writes the current trace context into `carrier` (headers, metadata) as `traceparent`. */
export function injectTraceContext(carrier: Record<string, string>, from: Context = context.active()): Record<string, string> {
  propagation.inject(from, carrier);
  return carrier;
}

/** A trace context (the current one by default) as one `traceparent` value, to store with work done later; null while off. */
export function traceparentOf(from: Context = context.active()): string | null {
  return injectTraceContext({}, from)[traceparentHeader] ?? null;
}

/** Runs `fn` with `ctx` as the current trace context. */
export function withContext<T>(ctx: Context, fn: () => T): T {
  return context.with(ctx, fn);
}

/** The context a stored or received `traceparent` continues (the current one when there is none). */
export function contextOf(traceparent: string | null | undefined): Context {
  if (!traceparent) return context.active();
  return propagation.extract(context.active(), { [traceparentHeader]: traceparent });
}

/** Reads a trace context from headers (any casing of `traceparent`). */
export function extractTraceContext(get: (name: string) => string | undefined): Context {
  const traceparent = get(traceparentHeader);
  return traceparent ? contextOf(traceparent) : context.active();
}

/**
 * Runs `fn` inside a new active span under `parent` (the current context by default). A thrown error
 * marks the span as failed (unless `recordErrors` is false: the caller sets the status) and is
 * rethrown; the span always ends.
 */
export function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; parent?: Context; recordErrors?: boolean },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  return tracer.startActiveSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes }, options.parent ?? context.active(), async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      if (options.recordErrors === false) throw err;
      span.recordException(err instanceof Error ? err : String(err));
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}

/**
 * Starts a span the caller ends itself (work that ends on an event, like an HTTP response's finish);
 * `context` is the span's context (to inject into a message), `run` runs code with the span active.
 */
export function startSpan(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; parent?: Context },
): { span: Span; context: Context; run<T>(fn: () => T): T } {
  const parent = options.parent ?? context.active();
  const span = tracer.startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes }, parent);
  const active = trace.setSpan(parent, span);
  return { span, context: active, run: (fn) => context.with(active, fn) };
}

/** Marks a span as failed without an exception (an HTTP 5xx, a failed delivery attempt). */
export function markFailed(span: Span, message?: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/** The current span's ids for log lines; undefined when no span is recording. */
export function traceIds(): { traceId: string; spanId: string } | undefined {
  const span = trace.getActiveSpan();
  if (!span?.isRecording()) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { traceId, spanId };
}
