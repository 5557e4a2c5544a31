// The soak's series: how each is judged, by its name and the run's settings; and the judging of a run's
// samples into verdicts and charts. One table, read while a run samples (scripts/soak.ts) and again when a
// run's recorded samples are judged afresh (scripts/soak/rejudge.ts).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { figure, judge, judgedValues, median, type Point, type SeriesSpec, type Verdict } from "./judge.ts";
import { fileNameOf, lineChartSvg } from "./render.ts";

/** The run's settings that decide how series are judged. */
export interface JudgingSettings {
  retentionMinutes: number;
  retentionSafetySeconds: number;
  partitionSeconds: number;
  retentionIntervalSeconds: number;
  /** Tables of kept data, that grow with every response by design: charted, never judged. */
  keptTables: string[];
  /** Queue tables, whose rows wait for a consumer: judged on their floor. Absent in runs before it existed. */
  queueTables?: string[];
}

/** The windows tables are judged over. */
export function tableWindows(settings: JudgingSettings) {
  // Before this, every table grows by design: nothing is old enough to go, nor a whole partition to drop.
  const judgedFrom = Math.max(settings.retentionMinutes * 60, settings.retentionSafetySeconds) + settings.partitionSeconds + settings.retentionIntervalSeconds;
  // A partitioned table then grows by a partition and drops one in turn, a tooth each partition span (give or
  // take a pass): it is judged on its peaks over one such period, over at least two of them.
  const period = settings.partitionSeconds + settings.retentionIntervalSeconds;
  // A queue table swells while its consumer lags and returns once it caught up: its floor is the minimum
  // over two such periods (a swell that outlasts them is judged as growth).
  const queueFloorSeconds = 2 * period;
  return { judgedFrom, period, queueFloorSeconds };
}

/** The queue tables of the system: outboxes, whose rows wait for the bus, the notifier or the mailer. */
export const defaultQueueTables = ["submissions.outbox", "forms.outbox", "submissions.mail_outbox", "identity.mail_outbox"];

type Family = Omit<SeriesSpec, "name">;

/** Series by the part of their name before ":" (the rest names a process, a table, a pruned target or a receiver). */
const families: Record<string, Family> = {
  rss_mib: { kind: "level", unit: "MiB" },
  fds: { kind: "level", unit: "descriptors", floor: 8 },
  cpu_pct: { kind: "info", unit: "% of a core" },
  eventloop_p99_ms: { kind: "latency", unit: "ms", floor: 5 },
  rows_pruned_total: { kind: "info", unit: "rows" },
  scrape_failures_total: { kind: "info", unit: "scrapes" },
  respondent_p50_ms: { kind: "info", unit: "ms" },
  respondent_p99_ms: { kind: "latency", unit: "ms", floor: 5 },
  respondents_per_s: { kind: "info", unit: "POST/s" },
  respondent_errors_total: { kind: "info", unit: "POSTs" },
  delivery_lag_p50_ms: { kind: "info", unit: "ms" },
  // Judged at the healthy receivers (what the system adds); `:failing` and `:slow` are reported only.
  delivery_lag_p99_ms: { kind: "latency", unit: "ms", floor: 10 },
  deliveries_per_s: { kind: "info", unit: "first attempts/s" },
  retries_per_s: { kind: "info", unit: "retries/s" },
  delivery_backlog: { kind: "info", unit: "deliveries" },
  restarts_total: { kind: "info", unit: "restarts" },
};

/** How the series `name` is judged in a run with these settings. */
export function seriesSpec(name: string, settings: JudgingSettings): SeriesSpec {
  const colon = name.indexOf(":");
  const [family, label] = colon < 0 ? [name, ""] : [name.slice(0, colon), name.slice(colon + 1)];
  if (family === "table_bytes") {
    if (settings.keptTables.includes(label)) return { name, kind: "info", unit: "bytes", note: "kept data, grows with every response by design (--kept-tables)" };
    const { judgedFrom, period, queueFloorSeconds } = tableWindows(settings);
    const queue = (settings.queueTables ?? []).includes(label);
    return {
      name,
      kind: "level",
      unit: "bytes",
      floor: 1024 ** 2,
      judgedFromSeconds: judgedFrom,
      envelope: queue ? { edge: "floor", seconds: queueFloorSeconds } : { edge: "peaks", seconds: period },
      minWindowSeconds: 2 * period,
    };
  }
  const known = families[family];
  if (!known) throw new Error(`soak: no judging rule for the series ${name}`);
  if (family === "delivery_lag_p99_ms" && label) return { name, kind: "info", unit: known.unit };
  return { name, ...known };
}

export interface Sample {
  t: number;
  values: Record<string, number>;
}

export const pointsOf = (samples: readonly Sample[], name: string): Point[] => samples.map((s) => ({ t: s.t, v: s.values[name] ?? NaN }));

/** Judges every series and writes its chart (an SVG per series) to `outDir`: the verdicts, in the specs' order. */
export function judgeAndChart(outDir: string, specs: Iterable<SeriesSpec>, samples: readonly Sample[]): Verdict[] {
  const verdicts: Verdict[] = [];
  for (const s of specs) {
    const points = pointsOf(samples, s.name);
    const verdict = judge(s, points);
    verdicts.push(verdict);
    const subtitle = `${verdict.verdict}: ${verdict.reason}`;
    const envelope = s.envelope ? { edge: s.envelope.edge, points: judgedValues(s, points) } : undefined;
    writeFileSync(join(outDir, `${fileNameOf(s.name)}.svg`), lineChartSvg({ title: s.name, unit: s.unit, points, envelope, window: verdict.window, fit: verdict.fit, subtitle }));
  }
  return verdicts;
}

/** summary.json's `series`: each verdict with its series' first, last, min, median and max. */
export function seriesSummary(verdicts: readonly Verdict[], specs: ReadonlyMap<string, SeriesSpec>, samples: readonly Sample[]) {
  return Object.fromEntries(
    verdicts.map((v) => {
      const vs = pointsOf(samples, v.series).map((p) => p.v).filter(Number.isFinite);
      const stats = vs.length ? { first: vs[0], last: vs.at(-1), min: Math.min(...vs), median: median(vs), max: Math.max(...vs) } : {};
      return [v.series, { unit: specs.get(v.series)!.unit, ...v, ...stats, series: undefined }];
    }),
  );
}

/** The verdicts as the soak prints them: climbing first, one line each. */
export function verdictLines(verdicts: readonly Verdict[], specs: ReadonlyMap<string, SeriesSpec>, samples: readonly Sample[]): string[] {
  const width = Math.max(...verdicts.map((v) => v.series.length));
  const order = { climbing: 0, "not judged": 1, ok: 2, info: 3 };
  return [...verdicts]
    .sort((a, b) => order[a.verdict] - order[b.verdict])
    .map((v) => {
      const vs = pointsOf(samples, v.series).map((p) => p.v).filter(Number.isFinite);
      const unit = specs.get(v.series)!.unit;
      const detail =
        v.verdict === "info" ? `last ${figure(vs.at(-1) ?? NaN)}, median ${figure(vs.length ? median(vs) : NaN)} ${unit}${v.reason === "reported, not judged" ? "" : `; ${v.reason}`}` : v.reason;
      return `  ${v.verdict.toUpperCase().padEnd(10)}  ${v.series.padEnd(width)}  ${detail}`;
    });
}
