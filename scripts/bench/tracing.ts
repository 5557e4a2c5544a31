// Tracing's cost: scenario 2 (ingest) with tracing off, as shipped, and on, every span exported over
// OTLP/HTTP to a collector on loopback (tests/support/otlp-collector.ts), back to back.
import { startOtlpCollector } from "../../tests/support/otlp-collector.ts";
import { startTestSystem } from "../../tests/support/system.ts";
import { loadIngest } from "./ingest.ts";
import { ratio, servicesCpu } from "./common.ts";

export async function tracingOverhead(opts: { connections?: number; seconds?: number } = {}) {
  const connections = opts.connections ?? 50;
  const duration = opts.seconds ?? 8;
  const run = async (env: Record<string, string>) => {
    const sys = await startTestSystem("bench_tracing", env);
    try {
      return (await loadIngest(sys, connections, duration)).system;
    } finally {
      await sys.stop();
    }
  };
  const off = await run({});
  const collector = await startOtlpCollector();
  try {
    const on = await run({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: "1000" });
    return {
      connections,
      durationSeconds: duration,
      off,
      on: { ...on, spansExported: collector.spans.length },
      throughputRatio: ratio(on.requestsPerSecond, off.requestsPerSecond),
      cpuMsPerRequest: { off: servicesCpu(off.cpuMsPerRequest), on: servicesCpu(on.cpuMsPerRequest) },
    };
  } finally {
    await collector.close();
  }
}
