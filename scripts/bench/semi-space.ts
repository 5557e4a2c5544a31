// The young generation's size (V8's --max-semi-space-size, MiB) against memory and ingest: for each size,
// in alternating rounds on a fresh system each, every process's idle RSS and PSS (the binary's shared
// pages counted once), ingest req/s and CPU per response (all processes), and the peak RSS under it.
// `node scripts/bench/semi-space.ts [--rounds N] [--seconds S] [--sizes default,1,2,4]`.
import { readFileSync } from "node:fs";
import { startTestSystem, type TestSystem } from "../../tests/support/system.ts";
import { sampleRss, sleep } from "./common.ts";
import { loadIngest } from "./ingest.ts";
import { numberArg } from "./switch-ab.ts";

/** A process's proportional set size in MiB (/proc/<pid>/smaps_rollup): shared pages divided among their users. */
export function pssMiB(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const m = /Pss:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
    return m ? Math.round(Number(m[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}

function idleMemory(sys: TestSystem) {
  let rss = 0;
  let pss = 0;
  for (const child of sys.system.processes.values()) {
    const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
    rss += Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
    pss += pssMiB(child.pid);
  }
  return { idleRssMiB: Math.round(rss), idlePssMiB: Math.round(pss) };
}

type Figures = { idleRssMiB: number; idlePssMiB: number; requestsPerSecond: number; cpuMsPerRequest: number; peakRssMiB: number };

export async function semiSpace(opts: { rounds?: number; seconds?: number; sizes?: string[] } = {}) {
  const sizes = opts.sizes ?? ["default", "1", "2", "4"];
  const figures: Record<string, Figures[]> = Object.fromEntries(sizes.map((s) => [s, []]));
  for (let round = 0; round < (opts.rounds ?? 2); round++) {
    for (const size of sizes) {
      const nodeOptions = size === "default" ? "" : `--max-semi-space-size=${size}`;
      const sys = await startTestSystem(`bench_semi_space_${size}`, { NODE_OPTIONS: nodeOptions });
      try {
        await sleep(5_000);
        const idle = idleMemory(sys);
        const sampler = sampleRss(sys);
        const { system } = await loadIngest(sys, 50, opts.seconds ?? 8);
        const peak = sampler.stop();
        const cpuMsPerRequest = Object.values(system.cpuMsPerRequest).reduce((a, b) => a + b, 0);
        figures[size].push({ ...idle, requestsPerSecond: system.requestsPerSecond, cpuMsPerRequest: Math.round(cpuMsPerRequest * 100) / 100, peakRssMiB: Math.round(Object.values(peak).reduce((a, b) => a + b, 0)) });
      } finally {
        await sys.stop();
      }
    }
  }
  const mean = (xs: number[]) => Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 100) / 100;
  const summary = Object.fromEntries(
    Object.entries(figures).map(([size, rows]) => [size, Object.fromEntries((Object.keys(rows[0]) as (keyof Figures)[]).map((k) => [k, mean(rows.map((r) => r[k]))]))]),
  );
  return { figures, summary };
}

if (import.meta.main) {
  const i = process.argv.indexOf("--sizes");
  const result = await semiSpace({ rounds: numberArg("--rounds", 2), seconds: numberArg("--seconds", 8), sizes: i > 0 ? process.argv[i + 1].split(",") : undefined });
  console.log(JSON.stringify(result, null, 2));
}
