// Shared helpers of `npm run bench`: RSS sampling, autocannon runs, percentiles, baseline servers.
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import autocannon from "autocannon";
import { idleMemoryDefaults } from "@formsvc/platform/idle-memory.ts";
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

/** A "<name>: <n> kB" line of a /proc file, in MiB. */
const mibOf = (name: string, text: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(text)?.[1] ?? 0) / 1024;

/** Resident size (VmRSS) and its anonymous and file-backed parts, from /status alone: cheap enough to sample. */
function statusMemory(pid: number): { rss: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return { rss: mibOf("VmRSS", status), anon: mibOf("RssAnon", status), file: mibOf("RssFile", status) };
}

/**
 * A process's memory in MiB, from /proc: resident (VmRSS) and its anonymous and file-backed parts
 * (/status), and its proportional share (Pss, /smaps_rollup: shared pages divided among their users; the
 * kernel walks the page tables for it, so it is read only here, never by the samplers).
 * Zeros for a process that is gone.
 */
export function procMemory(pid: number | undefined): { rss: number; anon: number; file: number; pss: number } {
  const none = { rss: 0, anon: 0, file: 0, pss: 0 };
  if (!pid) return none;
  try {
    return { ...statusMemory(pid), pss: mibOf("Pss", readFileSync(`/proc/${pid}/smaps_rollup`, "utf8")) };
  } catch {
    return none;
  }
}

/** Resident set size of a process in MiB (to 0.1); 0 when it is gone. */
export function rssMiB(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    return Math.round(statusMemory(pid).rss * 10) / 10;
  } catch {
    return 0;
  }
}

/** RSS and PSS (MiB) summed over a system's processes, rounded once, at the sum. */
export function memoryOf(sys: TestSystem): { rss: number; pss: number } {
  const parts = [...sys.system.processes.values()].map((child) => procMemory(child.pid));
  return { rss: Math.round(parts.reduce((a, p) => a + p.rss, 0)), pss: Math.round(parts.reduce((a, p) => a + p.pss, 0)) };
}

/** The mean of some figures. */
export function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** A per-process figure (CPU ms from cpuMeter, MiB from sampleRss) summed over every process, to 0.01. */
export function summed(perProcess: Record<string, number>): number {
  return Math.round(Object.values(perProcess).reduce((a, b) => a + b, 0) * 100) / 100;
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

/** Every Postgres server process of the machine (the postmaster, its backends and workers). */
function postgresPids(): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "postgres";
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** The machine's busy CPU time so far in ms (every core, from /proc/stat: all but idle and iowait). */
function machineBusyMs(): number {
  const [, ...ticks] = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = ticks;
  return (user + nice + system + irq + softirq + steal) * 10;
}

/** What else a scenario's CPU is counted over: the Kafka broker, when it runs one. */
export interface CpuExtras {
  kafkaPid?: number;
}

/**
 * CPU ms so far of every process of a running system, of Postgres (every server process, summed; backends
 * that ended meanwhile are missed, the pools keep theirs), the Kafka broker, this bench process (the load
 * generator and receiver) and the whole machine.
 */
function cpuOf(sys: TestSystem, extras: CpuExtras): Record<string, number> {
  const out = perProcess(sys, cpuMs);
  out.postgres = postgresPids().reduce((sum, pid) => sum + cpuMs(pid), 0);
  if (extras.kafkaPid) out.kafka = cpuMs(extras.kafkaPid);
  const own = process.cpuUsage();
  out["load generator"] = (own.user + own.system) / 1000;
  out.machine = machineBusyMs();
  return out;
}

/** The parts of a cpuMeter's figures that are not processes of the system itself. */
export const outsideTheServices: readonly string[] = ["postgres", "kafka", "load generator", "machine"];

/**
 * Starts counting CPU time (see cpuOf); `perUnit(n)` is each one's ms per unit of work (request, delivery)
 * since then. Unlike rates, hardly moved by other work on a shared machine. "machine" is every core's busy
 * time, whoever spent it; the services' own share is their sum (`servicesCpu`).
 */
export function cpuMeter(sys: TestSystem, extras: CpuExtras = {}) {
  const before = cpuOf(sys, extras);
  return {
    perUnit(units: number): Record<string, number> {
      const after = cpuOf(sys, extras);
      const out: Record<string, number> = {};
      for (const name of Object.keys(after)) out[name] = Math.round(((after[name] - (before[name] ?? 0)) / Math.max(1, units)) * 100) / 100;
      return out;
    },
  };
}

/** The six processes' share of a cpuMeter's figures, summed (what `summed` gave before the meter counted more). */
export function servicesCpu(perUnit: Record<string, number>): number {
  return summed(Object.fromEntries(Object.entries(perUnit).filter(([name]) => !outsideTheServices.includes(name))));
}

/** One figure of every process of a running system now, by process name. */
function perProcess(sys: TestSystem, figure: (pid: number | undefined) => number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, child] of sys.system.processes) out[name] = figure(child.pid);
  return out;
}

/** RSS (MiB, to 0.1) of every process of a running system now. */
export const rssOf = (sys: TestSystem) => perProcess(sys, rssMiB);

/** Proportional set size (MiB, to 0.1) of every process of a running system now. */
export const pssOf = (sys: TestSystem) => perProcess(sys, (pid) => Math.round(procMemory(pid).pss * 10) / 10);

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

/**
 * Waits, after start-up and a scenario's setup, until each process has given back its spare heap (the idle release
 * waits for a quiet period without a request, looked at every few seconds): idle memory is read then, and the
 * release of a process the measured load leaves idle (identity and forms while responses are delivered: a 0.1-0.5 s
 * collection each) does not land in the measured part as CPU per operation.
 */
export const settleAfterSetup = () => sleep(idleMemoryDefaults.quietForMs + 2 * idleMemoryDefaults.checkEveryMs);

export function ratio(figure: number, ceiling: number): number {
  return ceiling ? Math.round((figure / ceiling) * 1000) / 1000 : NaN;
}
