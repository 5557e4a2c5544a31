// What a run of a scenario is judged by: the figures worth comparing between runs (`summary`, which
// `npm run bench -- --rounds N` keeps per round and bench-ab per side), and the goals of the performance issue
// (33) over those figures, rendered round by round with their spread and the CPU time per operation.
import { outsideTheServices, servicesCpu, summed } from "./common.ts";

/** The figures worth comparing: throughput, latency or lag, CPU per unit of work, idle memory. */
export function summary(name: string, r: any) {
  if (name === "api-read") {
    const idleRssMiB = Math.round(summed(r.rss.idle));
    return {
      requestsPerSecond: r.system.requestsPerSecond,
      p99ms: r.system.p99ms,
      directPostgresPerSecond: r.directPostgres.requestsPerSecond,
      ratio: r.ratioToDirectPostgres,
      cpuMsPerRequest: r.system.cpuMsPerRequest,
      idleRssMiB,
      idlePssMiB: r.rss.idlePss === undefined ? undefined : Math.round(summed(r.rss.idlePss)),
    };
  }
  if (name.startsWith("results")) return { insights: r.insights, summary: r.summary, exportRowsPerSecond: r.export.rowsPerSecond, exportPeakRssMiB: r.export.rssMiB.peak };
  if (name === "storage") return { bytesPerResponse: r.bytesPerResponse, perResponse: r.perResponse };
  if (name === "ingest") return { requestsPerSecond: r.system.requestsPerSecond, p99ms: r.system.p99ms, rawInsertPerSecond: r.rawInsert.requestsPerSecond, ratio: r.ratio, cpuMsPerRequest: r.system.cpuMsPerRequest };
  return {
    deliveriesPerSecond: r.throughput.deliveriesPerSecond,
    lag100: r.lag["100/s"],
    lag500: r.lag["500/s"],
    rawUndiciPerSecond: r.rawUndici.deliveriesPerSecond,
    ratio: r.throughputRatio,
    cpuMsPerDelivery: r.throughput.cpuMsPerDelivery,
  };
}

/** A goal of issue 33: its row, the scenario, the figure, at least or at most, the CPU per operation of that scenario. */
interface Goal {
  row: string;
  scenario: string;
  figure: (f: any) => number | undefined;
  at: "least" | "most";
  goal: number;
  digits: number;
  cpu?: (f: any) => Record<string, number> | undefined;
}

export const goals: Goal[] = [
  { row: "API read vs direct-pg handler", scenario: "api-read", figure: (f) => f.ratio, at: "least", goal: 0.5, digits: 3, cpu: (f) => f.cpuMsPerRequest },
  { row: "ingest vs raw INSERT", scenario: "ingest", figure: (f) => f.ratio, at: "least", goal: 0.3, digits: 3, cpu: (f) => f.cpuMsPerRequest },
  { row: "delivery, embedded, vs raw POSTs", scenario: "delivery-embedded", figure: (f) => f.ratio, at: "least", goal: 0.25, digits: 3, cpu: (f) => f.cpuMsPerDelivery },
  { row: "delivery, Kafka, vs raw POSTs", scenario: "delivery-kafka", figure: (f) => f.ratio, at: "least", goal: 0.2, digits: 3, cpu: (f) => f.cpuMsPerDelivery },
  { row: "Kafka deliveries/s", scenario: "delivery-kafka", figure: (f) => f.deliveriesPerSecond, at: "least", goal: 1000, digits: 0, cpu: (f) => f.cpuMsPerDelivery },
  { row: "lag p99 at 500/s, embedded (ms)", scenario: "delivery-embedded", figure: (f) => f.lag500?.p99LagMs, at: "most", goal: 100, digits: 0 },
  { row: "lag p99 at 500/s, Kafka (ms)", scenario: "delivery-kafka", figure: (f) => f.lag500?.p99LagMs, at: "most", goal: 250, digits: 0 },
  { row: "idle RSS, six processes (MiB)", scenario: "api-read", figure: (f) => f.idleRssMiB, at: "most", goal: 400, digits: 0 },
  { row: "idle PSS, six processes (MiB)", scenario: "api-read", figure: (f) => f.idlePssMiB, at: "most", goal: 400, digits: 0 },
];

const met = (g: Goal, v: number) => (g.at === "least" ? v >= g.goal : v <= g.goal);
const fmt = (v: number, digits: number) => (digits === 0 ? Math.round(v).toLocaleString("en-US") : v.toFixed(digits));

/** The median of some figures. */
function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** Each part's CPU ms per operation, the median over runs: the services one by one, then Postgres, the broker, the load generator and the machine. */
function cpuCell(perRun: Record<string, number>[]): string {
  if (perRun.length === 0) return "–";
  const medians = new Map([...new Set(perRun.flatMap((x) => Object.keys(x)))].map((name) => [name, median(perRun.map((x) => x[name] ?? 0))]));
  const services = [...medians].filter(([name, ms]) => !outsideTheServices.includes(name) && ms >= 0.005).map(([name, ms]) => `${name} ${ms.toFixed(2)}`);
  const servicesSum = median(perRun.map((x) => servicesCpu(x)));
  const outside = outsideTheServices.filter((name) => medians.has(name)).map((name) => `${name} ${medians.get(name)!.toFixed(2)}`);
  // The bench process does the same work per operation whatever the system does: the services' CPU in units of its
  // CPU takes out most of a machine's speed (which moved ±40 % from hour to hour on a shared 2-core VM).
  const perLoad = median(perRun.filter((x) => x["load generator"] > 0).map((x) => servicesCpu(x) / x["load generator"]));
  const normalised = Number.isFinite(perLoad) ? `; services / load generator ${perLoad.toFixed(1)}` : "";
  return `${services.join(", ")}; **services ${servicesSum.toFixed(2)}**${outside.length ? `; ${outside.join(", ")}` : ""}${normalised}`;
}

/** Runs as bench.ts and bench-ab.ts keep them: which scenario, which side or round, the summary's figures. */
export interface Run {
  scenario: string;
  figures: any;
}

/**
 * The goals round by round: each run's figure, the worst, the spread ((max - min) / median), whether every
 * run met the goal, and the CPU ms per operation (median over the runs) of each process.
 */
export function goalsTable(runs: Run[]): string {
  const lines: string[] = [];
  const rounds = Math.max(0, ...goals.map((g) => runs.filter((x) => x.scenario === g.scenario).length));
  for (const g of goals) {
    const own = runs.filter((x) => x.scenario === g.scenario);
    // Each run's figure in its own column (a run without it, e.g. one from before PSS was read, shows "–").
    const perRun = own.map((x) => g.figure(x.figures)).map((v) => (typeof v === "number" && Number.isFinite(v) ? v : undefined));
    const values = perRun.filter((v): v is number => v !== undefined);
    if (values.length === 0) continue;
    const worst = g.at === "least" ? Math.min(...values) : Math.max(...values);
    const spread = (Math.max(...values) - Math.min(...values)) / Math.abs(median(values) || 1);
    const every = values.every((v) => met(g, v));
    const cells = Array.from({ length: rounds }, (_, i) => (perRun[i] === undefined ? "–" : fmt(perRun[i], g.digits)));
    const cpu = g.cpu ? cpuCell(own.map((x) => g.cpu!(x.figures)).filter((x): x is Record<string, number> => !!x)) : "";
    lines.push(`| ${g.row} | ${g.at === "least" ? "≥" : "≤"} ${fmt(g.goal, g.digits)} | ${cells.join(" | ")} | ${fmt(worst, g.digits)} | ${Math.round(spread * 100)} % | ${every ? "yes" : "**no**"} | ${cpu} |`);
  }
  if (lines.length === 0) return "";
  const head = `| row | goal | ${Array.from({ length: rounds }, (_, i) => `run ${i + 1}`).join(" | ")} | worst | spread | every run | CPU ms per operation (median of the runs) |`;
  return `${head}\n|${"---|".repeat(rounds + 6)}\n${lines.join("\n")}\n`;
}

/** The goals of an interleaved A/B (bench-ab.ts): each side's runs in its own table. */
export function goalsAb(ab: { before: string; after: string; runs: (Run & { side: string })[] }): string {
  return ["before", "after"]
    .map((side) => `**${side}** (\`${side === "before" ? ab.before : ab.after}\`):\n\n${goalsTable(ab.runs.filter((x) => x.side === side))}`)
    .join("\n");
}
