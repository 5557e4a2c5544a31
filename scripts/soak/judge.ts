// The soak's verdict on one series: does it keep climbing? Pure: figures in, verdict out.
// - A level (RSS, open descriptors, a table's bytes): the least-squares line through the last half of the
//   samples; it climbs when its rise over that half is more than a fraction (10 %) of the half's median, and
//   more than the series' floor (noise a few descriptors or a page of a small table make is no leak), and
//   the slope is clearly not noise: at least twice its standard error (descriptors come and go with
//   sockets, by dozens between two samples; a line through such noise tilts either way).
//   A table of partitions grows and drops a whole partition in turn (a sawtooth): it is judged on its
//   peaks, the maximum over the last partition span and pass, and only over a window of two such spans.
//   A queue table (an outbox: its rows wait for a consumer) holds what its consumer has not yet passed, so
//   it swells while the consumer lags (that lag is judged on its own series) and shrinks back once it caught
//   up: it is judged on its floor, the minimum over a span longer than such a swell. A leak raises the floor.
// - A latency's p99 (respondents, deliveries, event loop): the median of the last quarter of the last half
//   against the median of its first quarter (a median, so that one spike of a p99 in a quarter does not
//   decide); it climbs when it drifted up more than 20 %, and by more than the series' floor (3 ms more
//   of a 5 ms p99 is noise on a shared 2-core machine).
// - Anything else is only reported.
// A series may say from when it is judged (a table's bytes: once the retention window, a partition span
// and a pass have gone by, before which every table grows by design): the samples before do not count.
export type SeriesKind = "level" | "latency" | "info";

export interface SeriesSpec {
  name: string;
  kind: SeriesKind;
  /** What the values are in, for the charts: "MiB", "ms", "bytes" ... */
  unit: string;
  /** A rise (level) or drift (latency) at most this big, in the series' unit, is never climbing. */
  floor?: number;
  /** Samples earlier than this (seconds into the run) are not judged. */
  judgedFromSeconds?: number;
  /**
   * Judged on the maximum (peaks: of a sawtooth) or the minimum (floor: of a queue) over the last so many
   * seconds at each sample, instead of the samples.
   */
  envelope?: { edge: "peaks" | "floor"; seconds: number };
  /** The judged samples must span at least this many seconds. */
  minWindowSeconds?: number;
  /** Why the series is only reported, when its kind is "info" for a reason worth printing. */
  note?: string;
}

export interface Point {
  /** Seconds into the run. */
  t: number;
  v: number;
}

export interface Thresholds {
  /** A level climbs when its fitted rise over the judged window exceeds this fraction of the window's median. */
  levelRiseFraction: number;
  /** A latency climbs when its last quarter's median exceeds its first quarter's by more than this fraction. */
  latencyDriftFraction: number;
  /** Fewest samples a level is judged on (a line through two points says nothing of a trend). */
  minLevelPoints: number;
  /** Fewest samples a latency is judged on (a quarter of them is then at least two: one sample is noise). */
  minLatencyPoints: number;
  /** A level climbs only when its slope is at least this many standard errors (not noise). */
  minSlopeT: number;
}

export const defaultThresholds: Thresholds = { levelRiseFraction: 0.1, latencyDriftFraction: 0.2, minLevelPoints: 3, minLatencyPoints: 8, minSlopeT: 2 };

export interface Verdict {
  series: string;
  kind: SeriesKind;
  verdict: "ok" | "climbing" | "not judged" | "info";
  /** One line: the figures the verdict rests on. */
  reason: string;
  /** The samples judged: first and last time (s) and how many. */
  window?: { from: number; to: number; points: number };
  /** The least-squares line through the window (levels). */
  fit?: { slope: number; intercept: number };
  /** The slope in standard errors (levels). */
  t?: number;
  /** Level: the fitted rise over the window; latency: last quarter's median minus the first's. */
  rise?: number;
  /** The rise past which the series climbs. */
  limit?: number;
}

/**
 * The least-squares line v = intercept + slope * t through the points (slope 0 through fewer than two
 * distinct t), and the slope's standard error (NaN through fewer than three points; 0 when all are on the line).
 */
export function leastSquares(points: readonly Point[]): { slope: number; intercept: number; slopeError: number } {
  const n = points.length;
  if (n === 0) return { slope: 0, intercept: NaN, slopeError: NaN };
  const mx = points.reduce((a, p) => a + p.t, 0) / n;
  const my = points.reduce((a, p) => a + p.v, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const p of points) {
    sxy += (p.t - mx) * (p.v - my);
    sxx += (p.t - mx) ** 2;
  }
  const slope = sxx === 0 ? 0 : sxy / sxx;
  const intercept = my - slope * mx;
  const residuals = points.reduce((a, p) => a + (p.v - intercept - slope * p.t) ** 2, 0);
  const slopeError = n < 3 || sxx === 0 ? NaN : Math.sqrt(residuals / (n - 2) / sxx);
  return { slope, intercept, slopeError };
}

/** The middle value; the mean of the two middle ones of an even count; NaN of none. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Figures as printed in a reason: at most 3 significant digits past the point, no exponent below 1e9. */
export function figure(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  const abs = Math.abs(x);
  if (abs >= 100) return String(Math.round(x));
  if (abs >= 1) return String(Math.round(x * 100) / 100);
  return String(Number(x.toPrecision(3)));
}

/** A figure with its unit; bytes as MiB. */
function amount(x: number, unit: string): string {
  return unit === "bytes" ? `${figure(x / 1024 ** 2)} MiB` : `${figure(x)} ${unit}`;
}

/**
 * At each point, the maximum (peaks) or minimum (floor) of the values over the `seconds` up to it (values
 * without a figure left out).
 */
export function trailingEdge(points: readonly Point[], seconds: number, edge: "peaks" | "floor"): Point[] {
  const pick = edge === "peaks" ? Math.max : Math.min;
  return points.map((p) => {
    const vs = points.filter((q) => q.t <= p.t && q.t > p.t - seconds && Number.isFinite(q.v)).map((q) => q.v);
    return { t: p.t, v: vs.length ? pick(...vs) : NaN };
  });
}

/** The values judged: the samples, or their trailing peaks or floor for a series judged on an envelope. */
export function judgedValues(spec: SeriesSpec, points: readonly Point[]): Point[] {
  return spec.envelope ? trailingEdge(points, spec.envelope.seconds, spec.envelope.edge) : [...points];
}

/**
 * The points judged: the last half of the run's samples (by count), of those the ones not before
 * `judgedFromSeconds`; samples without a value (no delivery in the interval) are left out.
 */
export function judgedWindow(spec: SeriesSpec, points: readonly Point[]): Point[] {
  const lastHalf = judgedValues(spec, points).slice(Math.floor(points.length / 2));
  return lastHalf.filter((p) => Number.isFinite(p.v) && p.t >= (spec.judgedFromSeconds ?? 0));
}

/** Whether the series keeps climbing over the last half of the run (see the top of this file). */
export function judge(spec: SeriesSpec, points: readonly Point[], thresholds: Thresholds = defaultThresholds): Verdict {
  const base = { series: spec.name, kind: spec.kind };
  if (spec.kind === "info") return { ...base, verdict: "info", reason: spec.note ?? "reported, not judged" };
  const window = judgedWindow(spec, points);
  const span = window.length ? { from: window[0].t, to: window.at(-1)!.t, points: window.length } : undefined;
  const needed = spec.kind === "level" ? thresholds.minLevelPoints : thresholds.minLatencyPoints;
  if (window.length < needed) {
    const from = spec.judgedFromSeconds ? ` from ${figure(spec.judgedFromSeconds)} s on` : "";
    return { ...base, verdict: "not judged", reason: `${window.length} sample(s) to judge${from} in the last half, ${needed} needed: run longer`, window: span };
  }
  if (spec.minWindowSeconds && span!.to - span!.from < spec.minWindowSeconds) {
    const from = spec.judgedFromSeconds ? ` from ${figure(spec.judgedFromSeconds)} s on` : "";
    return { ...base, verdict: "not judged", reason: `the samples to judge${from} in the last half span ${figure(span!.to - span!.from)} s, ${figure(spec.minWindowSeconds)} s needed: run longer`, window: span };
  }
  const floor = spec.floor ?? 0;
  if (spec.kind === "level") {
    const { slope, intercept, slopeError } = leastSquares(window);
    const t = slopeError === 0 ? (slope > 0 ? Infinity : slope < 0 ? -Infinity : 0) : slope / slopeError;
    const rise = slope * (span!.to - span!.from);
    const med = median(window.map((p) => p.v));
    const limit = Math.max(thresholds.levelRiseFraction * Math.abs(med), floor);
    const climbing = rise > limit && t >= thresholds.minSlopeT;
    const pct = med ? `${figure((rise / Math.abs(med)) * 100)} % of the median ${amount(med, spec.unit)}, ` : "";
    const tText = Number.isFinite(t) ? figure(t) : t > 0 ? "inf" : "-inf";
    const edge = spec.envelope ? `${spec.envelope.edge} (${spec.envelope.edge === "peaks" ? "max" : "min"} over ${figure(spec.envelope.seconds)} s): ` : "";
    return {
      ...base,
      verdict: climbing ? "climbing" : "ok",
      reason: `${edge}fitted rise ${amount(rise, spec.unit)} over ${figure(span!.to - span!.from)} s (${pct}t ${tText}); limit ${amount(limit, spec.unit)}, t ${thresholds.minSlopeT}`,
      window: span,
      fit: { slope, intercept },
      t,
      rise,
      limit,
    };
  }
  const quarter = Math.max(1, Math.floor(window.length / 4));
  const first = median(window.slice(0, quarter).map((p) => p.v));
  const last = median(window.slice(-quarter).map((p) => p.v));
  const rise = last - first;
  const limit = Math.max(thresholds.latencyDriftFraction * Math.abs(first), floor);
  const climbing = rise > limit;
  const pct = first ? ` (${rise >= 0 ? "+" : ""}${figure((rise / Math.abs(first)) * 100)} %)` : "";
  return {
    ...base,
    verdict: climbing ? "climbing" : "ok",
    reason: `last quarter ${amount(last, spec.unit)} against first quarter ${amount(first, spec.unit)}${pct}; limit +${amount(limit, spec.unit)}`,
    window: span,
    rise,
    limit,
  };
}
