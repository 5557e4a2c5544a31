// The young generation's size (V8's --max-semi-space-size, MiB) against memory and ingest: for each size,
// in alternating rounds on a fresh system each, every process's idle RSS and PSS (the binary's shared
// pages counted once), ingest req/s and CPU per response (all processes), and the peak RSS under it.
// `node scripts/bench/semi-space.ts [--rounds N] [--seconds S] [--sizes default,1,2,4]`.
import { startTestSystem } from "../../tests/support/system.ts";
import { mean, memoryOf, sampleRss, servicesCpu, sleep, summed } from "./common.ts";
import { loadIngest } from "./ingest.ts";
import { numberArg } from "./switch-ab.ts";

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
        const memory = memoryOf(sys);
        const idle = { idleRssMiB: memory.rss, idlePssMiB: memory.pss };
        const sampler = sampleRss(sys);
        const { system } = await loadIngest(sys, 50, opts.seconds ?? 8);
        const peak = sampler.stop();
        figures[size].push({ ...idle, requestsPerSecond: system.requestsPerSecond, cpuMsPerRequest: servicesCpu(system.cpuMsPerRequest), peakRssMiB: Math.round(summed(peak)) });
      } finally {
        await sys.stop();
      }
    }
  }
  const meanOf = (xs: number[]) => Math.round(mean(xs) * 100) / 100;
  const summary = Object.fromEntries(
    Object.entries(figures).map(([size, rows]) => [size, Object.fromEntries((Object.keys(rows[0]) as (keyof Figures)[]).map((k) => [k, meanOf(rows.map((r) => r[k]))]))]),
  );
  return { figures, summary };
}

if (import.meta.main) {
  const i = process.argv.indexOf("--sizes");
  const result = await semiSpace({ rounds: numberArg("--rounds", 2), seconds: numberArg("--seconds", 8), sizes: i > 0 ? process.argv[i + 1].split(",") : undefined });
  console.log(JSON.stringify(result, null, 2));
}
