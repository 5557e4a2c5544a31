// API read (authenticated GET /api/v1/forms/:id, 64 connections) with one of its caches off and on,
// interleaved over rounds: API_KEY_CACHE (identity's verified keys) or MEMBERSHIP_CACHE (forms' callers'
// workspaces). Also CPU per request of every process.
// `node scripts/bench/api-read-switch.ts API_KEY_CACHE|MEMBERSHIP_CACHE [--rounds N] [--seconds S]`.
import { startTestSystem } from "../../tests/support/system.ts";
import { apiReadTarget } from "./api-read.ts";
import { cpuMeter, load, servicesCpu } from "./common.ts";
import { numberArg, rounded, switchAB } from "./switch-ab.ts";

export const apiReadSwitches = ["API_KEY_CACHE", "MEMBERSHIP_CACHE"] as const;
type Figures = { requestsPerSecond: number; p99: number; cpuMsPerRequest: number; identityCpuMs: number };

export async function apiReadSwitch(setting: (typeof apiReadSwitches)[number], opts: { rounds?: number; seconds?: number; connections?: number } = {}) {
  const seconds = opts.seconds ?? 8;
  const connections = opts.connections ?? 64;
  const figures: Record<"on" | "off", Figures[]> = { on: [], off: [] };
  const result = await switchAB(opts.rounds ?? 2, async (value) => {
    const sys = await startTestSystem(`bench_${setting.toLowerCase()}_${value}`, { [setting]: value });
    try {
      const { path, headers } = await apiReadTarget(sys);
      const url = sys.url + path;
      // A short warm-up so the JIT and connection pools are not measured cold.
      await load({ url, headers, connections, duration: 2 });
      const cpu = cpuMeter(sys);
      const run = await load({ url, headers, connections, duration: seconds });
      const perRequest = cpu.perUnit(run.total);
      figures[value].push({
        requestsPerSecond: run.requestsPerSecond,
        p99: run.p99ms,
        cpuMsPerRequest: servicesCpu(perRequest),
        identityCpuMs: perRequest.identity ?? 0,
      });
      return run.requestsPerSecond;
    } finally {
      await sys.stop();
    }
  });
  return { setting, connections, seconds, rounds: result.rounds, ratioOnToOff: result.ratioOnToOff, figures };
}

if (import.meta.main) {
  const setting = process.argv[2] as (typeof apiReadSwitches)[number];
  if (!apiReadSwitches.includes(setting)) throw new Error(`usage: node scripts/bench/api-read-switch.ts ${apiReadSwitches.join("|")} [--rounds N] [--seconds S]`);
  const result = await apiReadSwitch(setting, { rounds: numberArg("--rounds", 2), seconds: numberArg("--seconds", 8) });
  for (const value of ["off", "on"] as const) {
    const runs = result.figures[value];
    const fixed = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(", ");
    console.log(
      `api read ${setting}=${value}: req/s ${rounded(runs.map((r) => r.requestsPerSecond))}; p99 ms ${rounded(runs.map((r) => r.p99))}; ` +
        `CPU ms/request ${fixed(runs.map((r) => r.cpuMsPerRequest))} (identity ${fixed(runs.map((r) => r.identityCpuMs))})`,
    );
  }
  console.log(`req/s ratio on/off ${result.ratioOnToOff}`);
  console.log(`api-read-switch ${JSON.stringify(result)}`);
}
