// The OpenTelemetry SDK behind tracing.ts's startTracing, imported only when traces are configured.
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
} from "@opentelemetry/sdk-trace";
import { context, propagation, trace } from "@opentelemetry/api";

type Env = Record<string, string | undefined>;

/** OTEL_TRACES_SAMPLER values (the OpenTelemetry names), with OTEL_TRACES_SAMPLER_ARG as the ratio. */
const samplers: Record<string, (ratio: number) => Sampler> = {
  always_on: () => new AlwaysOnSampler(),
  always_off: () => new AlwaysOffSampler(),
  traceidratio: (ratio) => new TraceIdRatioBasedSampler(ratio),
  parentbased_always_on: () => new ParentBasedSampler({ root: new AlwaysOnSampler() }),
  parentbased_always_off: () => new ParentBasedSampler({ root: new AlwaysOffSampler() }),
  parentbased_traceidratio: (ratio) => new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) }),
};

export function samplerFromEnv(env: Env): Sampler {
  const name = env.OTEL_TRACES_SAMPLER || "parentbased_always_on";
  const make = samplers[name];
  if (!make) throw new Error(`OTEL_TRACES_SAMPLER must be one of ${Object.keys(samplers).join(", ")}; got ${name}`);
  const ratio = env.OTEL_TRACES_SAMPLER_ARG ? Number(env.OTEL_TRACES_SAMPLER_ARG) : 1;
  if (!(ratio >= 0 && ratio <= 1)) throw new Error(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1; got ${env.OTEL_TRACES_SAMPLER_ARG}`);
  return make(ratio);
}

/** Registers the global tracer provider, context manager and propagator (see startTracing). */
export function registerTracerProvider(service: string, env: Env): { shutdown(): Promise<void> } {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": env.OTEL_SERVICE_NAME || `formsvc-${service}`, "service.namespace": "formsvc" }),
    sampler: samplerFromEnv(env),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter(), scheduledDelayMillis: Number(env.OTEL_BSP_SCHEDULE_DELAY) || 5_000 })],
  });
  trace.setGlobalTracerProvider(provider);
  return { shutdown: () => provider.shutdown() };
}
