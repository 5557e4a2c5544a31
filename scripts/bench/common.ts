// Shared helpers of `npm run bench`: RSS sampling, autocannon runs, percentiles, baseline servers.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import autocannon from "autocannon";
import type { TestSystem } from "../../tests/support/system.ts";

export interface LoadResult {
  requestsPerSecond: number;
  p50ms: number;
  p99ms: number;
  non2xx: number;
  errors: number;
  /** Requests completed in the run. */
  total: number;
}

/** Resident set size of a process in MiB, from /proc/<pid>/status VmRSS; 0 when it is gone. */
export function rssMiB(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Math.round((Number(m[1]) / 1024) * 10) / 10 : 0;
  } catch {
    return 0;
  }
}

/** CPU time (user + system) a process has used so far, in ms, from /proc/<pid>/stat. */
function cpuMs(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks of 10 ms
  } catch {
    return 0;
  }
}

/** CPU ms of every process of a running system so far. */
function cpuOf(sys: TestSystem): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, child] of sys.system.processes) out[name] = cpuMs(child.pid);
  return out;
}

/**
 * Starts counting every process's CPU time; `perUnit(n)` is each one's ms per unit of work (request,
 * delivery) since then. Unlike rates, hardly moved by other work on a shared machine.
 */
export function cpuMeter(sys: TestSystem) {
  const before = cpuOf(sys);
  return {
    perUnit(units: number): Record<string, number> {
      const after = cpuOf(sys);
      const out: Record<string, number> = {};
      for (const name of Object.keys(after)) out[name] = Math.round(((after[name] - before[name]) / Math.max(1, units)) * 100) / 100;
      return out;
    },
  };
}

/** RSS of every process of a running system now. */
export function rssOf(sys: TestSystem): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, child] of sys.system.processes) out[name] = rssMiB(child.pid);
  return out;
}

/** Samples the RSS of every process every 250 ms; stop() gives each process's peak. */
export function sampleRss(sys: TestSystem) {
  const peak: Record<string, number> = {};
  const tick = () => {
    for (const [name, mib] of Object.entries(rssOf(sys))) peak[name] = Math.max(peak[name] ?? 0, mib);
  };
  tick();
  const timer = setInterval(tick, 250);
  return {
    stop(): Record<string, number> {
      clearInterval(timer);
      tick();
      return peak;
    },
  };
}

export async function load(opts: autocannon.Options): Promise<LoadResult> {
  const result = await autocannon(opts);
  return {
    requestsPerSecond: Math.round(result.requests.average),
    p50ms: result.latency.p50,
    p99ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    total: result.requests.total,
  };
}

/** The value at quantile q (0..1) of numbers already sorted ascending. */
export function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
}

/** Starts scripts/bench/baseline-server.ts in its own process (so it does not share the load generator's
 *  event loop); resolves with its URL once it listens. */
export async function startBaselineServer(mode: "static" | "pg", env: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, [join(import.meta.dirname, "baseline-server.ts"), mode], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (c) => {
      out += c;
      const m = /port=(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once("exit", (code) => reject(new Error(`baseline server exited with ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function ratio(figure: number, ceiling: number): number {
  return ceiling ? Math.round((figure / ceiling) * 1000) / 1000 : NaN;
}
