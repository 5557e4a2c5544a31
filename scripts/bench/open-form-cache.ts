// Ingest (POST /f/:id/responses, five answers, 50 connections) with submissions' open-form cache on and off
// (OPEN_FORM_CACHE), interleaved over rounds: req/s, p99 and CPU per response of every process.
// `node scripts/bench/open-form-cache.ts [--rounds N] [--seconds S]`.
import { startTestSystem } from "../../tests/support/system.ts";
import { servicesCpu } from "./common.ts";
import { loadIngest } from "./ingest.ts";
import { numberArg, rounded, switchAB } from "./switch-ab.ts";

type Figures = { requestsPerSecond: number; p99: number; cpuMsPerRequest: number; formsCpuMsPerRequest: number };

export async function openFormCache(opts: { rounds?: number; seconds?: number; connections?: number } = {}) {
  const seconds = opts.seconds ?? 8;
  const connections = opts.connections ?? 50;
  const figures: Record<"on" | "off", Figures[]> = { on: [], off: [] };
  const result = await switchAB(opts.rounds ?? 3, async (value) => {
    const sys = await startTestSystem(`bench_open_form_cache_${value}`, { OPEN_FORM_CACHE: value });
    try {
      const { system } = await loadIngest(sys, connections, seconds);
      const cpu = system.cpuMsPerRequest;
      const total = servicesCpu(cpu);
      figures[value].push({ requestsPerSecond: system.requestsPerSecond, p99: system.p99ms, cpuMsPerRequest: total, formsCpuMsPerRequest: cpu.forms ?? 0 });
      return system.requestsPerSecond;
    } finally {
      await sys.stop();
    }
  });
  return { connections, seconds, rounds: result.rounds, ratioOnToOff: result.ratioOnToOff, figures };
}

if (import.meta.main) {
  const result = await openFormCache({ rounds: numberArg("--rounds", 3), seconds: numberArg("--seconds", 8) });
  for (const value of ["off", "on"] as const) {
    const runs = result.figures[value];
    console.log(
      `ingest OPEN_FORM_CACHE=${value}: req/s ${rounded(runs.map((r) => r.requestsPerSecond))}; p99 ms ${rounded(runs.map((r) => r.p99))}; ` +
        `CPU ms/response ${runs.map((r) => r.cpuMsPerRequest.toFixed(2)).join(", ")} (forms ${runs.map((r) => r.formsCpuMsPerRequest.toFixed(2)).join(", ")})`,
    );
  }
  console.log(`req/s ratio on/off ${result.ratioOnToOff}`);
  console.log(`open-form-cache ${JSON.stringify(result)}`);
}
