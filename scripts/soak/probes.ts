// What the soak reads of a running system at each sample: each process's resident memory and open
// descriptors (/proc/<pid>), and its Prometheus metrics (a service's metrics port, the gateway's /metrics).
import { readdirSync } from "node:fs";
import { loadConfig, metricsPortOf, serviceNames, type ServiceName } from "@formsvc/platform/config.ts";
import { procMemory } from "../bench/common.ts";
import type { TestSystem } from "../../tests/support/system.ts";

/** One sample of a Prometheus text exposition: `name{label="value",...} number` per line. */
export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const lineRe = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const labelRe = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The samples of a Prometheus text exposition (comments and blank lines skipped, label values unescaped). */
export function parseMetrics(text: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const m = lineRe.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const [, key, raw] of (m[2] ?? "").matchAll(labelRe)) {
      labels[key] = raw.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    }
    const value = m[3] === "+Inf" ? Infinity : m[3] === "-Inf" ? -Infinity : Number(m[3]);
    samples.push({ name: m[1], labels, value });
  }
  return samples;
}

/** A process's resident memory (MiB, to 0.1) and open descriptors; NaN for a process that is gone. */
export function processStats(pid: number | undefined): { rssMiB: number; fds: number } {
  if (!pid) return { rssMiB: NaN, fds: NaN };
  try {
    const fds = readdirSync(`/proc/${pid}/fd`).length;
    return { rssMiB: Math.round(procMemory(pid).rss * 10) / 10, fds };
  } catch {
    return { rssMiB: NaN, fds: NaN };
  }
}

/** Where each process of the system serves /metrics: a service on its metrics port, the gateway on its own. */
export function metricsUrls(sys: TestSystem): Map<string, string> {
  const config = loadConfig(sys.env);
  const urls = new Map<string, string>();
  for (const name of sys.system.processes.keys()) {
    if ((serviceNames as readonly string[]).includes(name)) {
      urls.set(name, `http://127.0.0.1:${metricsPortOf(config, name as ServiceName, sys.env)}/metrics`);
    } else if (name === "gateway") urls.set(name, `${sys.url}/metrics`);
  }
  return urls;
}

/** The samples at `url`, or undefined when it does not answer within `timeoutMs`. */
export async function scrape(url: string, timeoutMs = 5_000): Promise<MetricSample[] | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return undefined;
    return parseMetrics(await res.text());
  } catch {
    return undefined;
  }
}
