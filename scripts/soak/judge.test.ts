import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { judge, judgedWindow, leastSquares, median, trailingEdge, type Point, type SeriesSpec } from "./judge.ts";

/** Samples every 30 s from 30 s on, `v(t)` at each. */
function series(count: number, v: (t: number, i: number) => number): Point[] {
  return Array.from({ length: count }, (_, i) => ({ t: (i + 1) * 30, v: v((i + 1) * 30, i) }));
}

const rss: SeriesSpec = { name: "rss_mib:delivery", kind: "level", unit: "MiB" };
const p99: SeriesSpec = { name: "respondent_p99_ms", kind: "latency", unit: "ms", floor: 5 };

describe("leastSquares", () => {
  it("recovers a line exactly, and fits noise around one", () => {
    const line = leastSquares(series(10, (t) => 3 + 0.5 * t));
    assert.ok(Math.abs(line.slope - 0.5) < 1e-12);
    assert.ok(Math.abs(line.intercept - 3) < 1e-9);
    // Alternating ±1 around a flat 100: slope ~0, intercept ~100.
    const flat = leastSquares(series(20, (_, i) => 100 + (i % 2 ? 1 : -1)));
    assert.ok(Math.abs(flat.slope) < 0.01, `slope ${flat.slope}`);
    assert.ok(Math.abs(flat.intercept - 100) < 1.5);
  });

  it("gives slope 0 for a single time", () => {
    assert.deepEqual(leastSquares([{ t: 5, v: 7 }]), { slope: 0, intercept: 7, slopeError: NaN });
  });

  it("gives the slope's standard error: 0 on a line, sqrt(SSE / (n - 2) / Sxx) off it", () => {
    assert.equal(leastSquares(series(5, (t) => 2 * t)).slopeError, 0);
    // t = 0, 1, 2, 3; v = 0, 1, 1, 2: slope 0.6, intercept 0.1, SSE 0.2, Sxx 5 -> sqrt(0.2 / 2 / 5) = 0.1414.
    const fit = leastSquares([0, 1, 1, 2].map((v, t) => ({ t, v })));
    assert.ok(Math.abs(fit.slope - 0.6) < 1e-12 && Math.abs(fit.intercept - 0.1) < 1e-12);
    assert.ok(Math.abs(fit.slopeError - Math.sqrt(0.02)) < 1e-12, String(fit.slopeError));
  });
});

describe("trailingEdge", () => {
  it("is, at each point, the largest (peaks) or smallest (floor) value of the seconds up to it", () => {
    const points = [5, 9, 1, 2, NaN, 3].map((v, i) => ({ t: i * 10, v }));
    assert.deepEqual(trailingEdge(points, 25, "peaks").map((p) => p.v), [5, 9, 9, 9, 2, 3]);
    assert.deepEqual(trailingEdge(points, 25, "floor").map((p) => p.v), [5, 5, 1, 1, 1, 2]);
    assert.deepEqual(trailingEdge([{ t: 0, v: NaN }], 25, "peaks").map((p) => p.v), [NaN]);
  });
});

describe("median", () => {
  it("is the middle value, whatever the order", () => {
    assert.equal(median([9, 1, 5]), 5);
    assert.equal(median([4, 2, 8, 6, 10]), 6);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.ok(Number.isNaN(median([])));
  });
});

describe("judge: levels", () => {
  it("passes a flat series with noise", () => {
    const v = judge(rss, series(20, (_, i) => 120 + [0, 3, -2, 1, -3][i % 5]));
    assert.equal(v.verdict, "ok");
    assert.ok(v.rise! < v.limit!);
    assert.deepEqual(v.window, { from: 330, to: 600, points: 10 });
  });

  it("fails a series that keeps climbing by more than 10 % of its median over the last half", () => {
    // 100 MiB + 0.1 MiB/s: over the last half (330..600 s) it rises 27 MiB, median ~146 MiB, limit ~14.6.
    const v = judge(rss, series(20, (t) => 100 + 0.1 * t));
    assert.equal(v.verdict, "climbing");
    assert.ok(Math.abs(v.rise! - 27) < 1e-9, `rise ${v.rise}`);
    assert.ok(Math.abs(v.limit! - 14.7) < 0.2, `limit ${v.limit}`);
    assert.match(v.reason, /^fitted rise 27 MiB over 270 s \(18\.\d+ % of the median 147 MiB, t inf\); limit 14\.\d+ MiB, t 2$/);
    assert.equal(v.t, Infinity);
  });

  it("passes a series that climbed early and levelled off (warm-up), judging only the last half", () => {
    const v = judge(rss, series(20, (t) => (t < 300 ? 50 + t / 2 : 200)));
    assert.equal(v.verdict, "ok");
    assert.equal(v.rise, 0);
  });

  it("passes a slow rise under 10 % of the median", () => {
    const v = judge(rss, series(20, (t) => 500 + 0.1 * t)); // +27 over the half, median ~546: 4.9 %
    assert.equal(v.verdict, "ok");
  });

  it("does not call a rise under the series' floor climbing", () => {
    const fds: SeriesSpec = { name: "fds:gateway", kind: "level", unit: "fds", floor: 8 };
    // 20 -> 26 descriptors over the last half: 30 % of the median, but under 8.
    const v = judge(fds, series(20, (_, i) => (i < 10 ? 20 : 20 + Math.floor((i - 10) * 0.7))));
    assert.equal(v.verdict, "ok");
    assert.equal(v.limit, 8);
    assert.equal(judge({ ...fds, floor: 0 }, series(20, (_, i) => (i < 10 ? 20 : 20 + Math.floor((i - 10) * 0.7)))).verdict, "climbing");
  });

  it("judges a table only from its judgedFromSeconds on, and not at all with too few samples there", () => {
    const bytes: SeriesSpec = { name: "table_bytes:delivery.deliveries", kind: "level", unit: "bytes", judgedFromSeconds: 450 };
    // Grows until 450 s (the retention window), then pruning holds it.
    const held = series(20, (t) => (t <= 450 ? t * 1e5 : 450 * 1e5 + (t % 60) * 100));
    assert.equal(judgedWindow(bytes, held)[0].t, 450);
    assert.equal(judge(bytes, held).verdict, "ok");
    // The same growth never held is climbing.
    const unheld = judge(bytes, series(20, (t) => t * 1e5));
    assert.equal(unheld.verdict, "climbing");
    assert.match(unheld.reason, /^fitted rise 14\.31 MiB over 150 s \(28\.57 % of the median 50\.07 MiB, t inf\); limit 5\.01 MiB, t 2$/);
    // Only two samples past 570 s: not judged, and the reason says why.
    const late = judge({ ...bytes, judgedFromSeconds: 570 }, held);
    assert.equal(late.verdict, "not judged");
    assert.match(late.reason, /2 sample\(s\) to judge from 570 s on .* 3 needed/);
  });

  it("does not call a tilt through noise climbing: the slope must be twice its standard error", () => {
    // Descriptors of a process whose sockets come and go: 44..128 between samples (a soak's delivery).
    const fds: SeriesSpec = { name: "fds:delivery", kind: "level", unit: "descriptors", floor: 8 };
    const v = judge(fds, [49, 128, 64, 102, 51, 94, 62, 44, 60, 127, 90, 71].map((v, i) => ({ t: (i + 1) * 15, v })));
    assert.ok(v.rise! > v.limit!, "the fitted rise alone would say climbing");
    assert.ok(v.t! < 2, `t ${v.t}`);
    assert.equal(v.verdict, "ok");
    // A steady leak under the same noise is still found.
    const leak = judge(fds, series(40, (t, i) => 60 + t / 10 + (i % 2 ? 8 : -8)));
    assert.equal(leak.verdict, "climbing");
    assert.ok(leak.t! > 2);
  });

  it("judges a sawtooth (partitions filled, then dropped) on its peaks, and only over two periods", () => {
    const table: SeriesSpec = { name: "table_bytes:delivery.deliveries", kind: "level", unit: "bytes", floor: 1024 ** 2, judgedFromSeconds: 390, envelope: { edge: "peaks", seconds: 90 }, minWindowSeconds: 180 };
    const MiB = 1024 ** 2;
    // 2 MiB more every 30 s, and every 90 s a partition's 4 MiB dropped: 22, 24, 20, 22, 24, 20 ... MiB.
    const held = series(20, (t) => (20 + ((t / 30) % 3) * 2) * MiB);
    // Raw, the last half (330..600 s) tilts by where the teeth fall; its peaks do not.
    assert.deepEqual(new Set(judgedWindow(table, held).map((p) => p.v / MiB)), new Set([24]));
    const v = judge(table, held);
    assert.equal(v.verdict, "ok");
    assert.equal(v.rise, 0);
    assert.match(v.reason, /^peaks \(max over 90 s\): fitted rise 0 MiB/);
    // The same teeth on a floor that keeps rising (a partition never dropped now and then).
    const leaking = judge(table, series(20, (t) => (20 + ((t / 30) % 3) * 2 + t / 30) * MiB));
    assert.equal(leaking.verdict, "climbing");
    // A window of 150 s (450..600) is under two periods: not judged.
    const short = judge({ ...table, judgedFromSeconds: 450 }, held);
    assert.equal(short.verdict, "not judged");
    assert.match(short.reason, /span 150 s, 180 s needed/);
  });

  it("judges a queue table on its floor: swells while its consumer lags do not count, a rising floor does", () => {
    const queue: SeriesSpec = { name: "table_bytes:submissions.outbox", kind: "level", unit: "bytes", floor: 1024 ** 2, judgedFromSeconds: 390, envelope: { edge: "floor", seconds: 180 }, minWindowSeconds: 180 };
    const MiB = 1024 ** 2;
    // 12 MiB, swelling to 14 MiB for up to 120 s now and then, more of it late in the judged half.
    const swells = new Set([1290, 1320, 1350, 1440, 1470, 1500, 1530, 1620]);
    const held = series(54, (t) => (swells.has(t) ? 14 : 12) * MiB);
    // Judged on the samples themselves, the late swells tilt the line past the limit.
    assert.equal(judge({ ...queue, envelope: undefined }, held).verdict, "climbing");
    const v = judge(queue, held);
    assert.equal(v.verdict, "ok");
    assert.equal(v.rise, 0);
    assert.match(v.reason, /^floor \(min over 180 s\): fitted rise 0 MiB/);
    // A floor that keeps rising (rows nobody ever passes) climbs, swells or not.
    const leaking = judge(queue, series(54, (t) => ((swells.has(t) ? 14 : 12) + t / 300) * MiB));
    assert.equal(leaking.verdict, "climbing");
  });

  it("leaves samples without a value out", () => {
    const v = judge(rss, series(20, (t, i) => (i % 3 === 0 ? NaN : 100)));
    assert.equal(v.verdict, "ok");
    assert.equal(v.window!.points, 7);
  });
});

describe("judge: latency p99", () => {
  it("passes a p99 that wobbles around its level", () => {
    assert.equal(judge(p99, series(16, (_, i) => 40 + [0, 6, -4, 2][i % 4])).verdict, "ok");
  });

  it("fails a p99 whose last quarter of the last half is more than 20 % above its first quarter", () => {
    // Last half: samples 8..15 (t 270..480), quarters of 2: 40,40 then 60,60 -> +50 %.
    const v = judge(p99, series(16, (_, i) => (i < 14 ? 40 : 60)));
    assert.equal(v.verdict, "climbing");
    assert.equal(v.rise, 20);
    assert.equal(v.limit, 8);
    assert.match(v.reason, /last quarter 60 ms against first quarter 40 ms \(\+50 %\)/);
  });

  it("is not decided by one spike in a quarter", () => {
    // 24 samples: last half 12, quarters of 3; the last quarter is 40, 200, 40.
    const v = judge(p99, series(24, (_, i) => (i === 22 ? 200 : 40)));
    assert.equal(v.verdict, "ok");
    assert.equal(v.rise, 0);
  });

  it("passes a drift of 15 %, and one of 50 % that stays under the floor", () => {
    assert.equal(judge(p99, series(16, (_, i) => (i < 14 ? 40 : 46))).verdict, "ok");
    const v = judge(p99, series(16, (_, i) => (i < 14 ? 4 : 6)));
    assert.equal(v.verdict, "ok");
    assert.equal(v.limit, 5);
  });

  it("passes a p99 that fell", () => {
    assert.equal(judge(p99, series(16, (_, i) => 100 - i * 5)).verdict, "ok");
  });

  it("needs eight samples in the last half (quarters of two)", () => {
    assert.equal(judge(p99, series(14, () => 10)).verdict, "not judged");
    assert.equal(judge(p99, series(16, () => 10)).verdict, "ok");
  });
});

describe("judge: info", () => {
  it("never judges, and says why when told", () => {
    const v = judge({ name: "table_bytes:submissions.responses", kind: "info", unit: "bytes", note: "kept data: grows by design" }, series(20, (t) => t * 1e6));
    assert.equal(v.verdict, "info");
    assert.equal(v.reason, "kept data: grows by design");
  });
});
