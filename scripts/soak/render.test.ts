import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fileNameOf, lineChartSvg, niceTicks, tickLabel, toCsv } from "./render.ts";

describe("toCsv", () => {
  it("writes a header and a line per row, empty cells for missing or non-finite values", () => {
    const csv = toCsv(["elapsed_s", "rss_mib:gateway", "delivery_lag_p99_ms"], [
      [30, 101.5, 12],
      [60, undefined, NaN],
    ]);
    assert.equal(csv, "elapsed_s,rss_mib:gateway,delivery_lag_p99_ms\n30,101.5,12\n60,,\n");
  });

  it("quotes cells with commas, quotes or line breaks", () => {
    assert.equal(toCsv(['a,b', 'say "hi"', "two\nlines"], []), '"a,b","say ""hi""","two\nlines"\n');
  });
});

describe("niceTicks", () => {
  it("covers the range with steps of 1, 2 or 5 times a power of ten", () => {
    assert.deepEqual(niceTicks(0, 180, 6), [0, 50, 100, 150, 200]);
    assert.deepEqual(niceTicks(0.013, 0.049, 4), [0.01, 0.02, 0.03, 0.04, 0.05]);
    assert.deepEqual(niceTicks(101, 119, 5), [100, 105, 110, 115, 120]);
  });

  it("widens a range of one value", () => {
    assert.deepEqual(niceTicks(0, 0), [-1, -0.5, 0, 0.5, 1]);
    const ticks = niceTicks(50, 50);
    assert.ok(ticks[0] <= 45 && ticks.at(-1)! >= 55, String(ticks));
  });
});

describe("tickLabel", () => {
  it("shortens big values and keeps small ones", () => {
    assert.equal(tickLabel(8_192), "8192");
    assert.equal(tickLabel(40_960), "40.96k");
    assert.equal(tickLabel(25_000_000), "25M");
    assert.equal(tickLabel(3_221_225_472), "3.221G");
    assert.equal(tickLabel(0.25), "0.25");
  });
});

describe("lineChartSvg", () => {
  const points = [
    { t: 30, v: 100 },
    { t: 60, v: 110 },
    { t: 90, v: NaN },
    { t: 120, v: 130 },
    { t: 150, v: 140 },
  ];
  const svg = lineChartSvg({
    title: "rss_mib:delivery <climbing>",
    subtitle: "fitted rise 20 MiB & more",
    unit: "MiB",
    points,
    window: { from: 90, to: 150 },
    fit: { slope: 1 / 3, intercept: 90 },
  });

  it("is one well-formed svg element with axes, labels and escaped text", () => {
    assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="720" height="360"/);
    assert.ok(svg.trimEnd().endsWith("</svg>"));
    assert.equal(svg.match(/class="axis"/g)?.length, 2);
    assert.ok(svg.includes("rss_mib:delivery &lt;climbing&gt;"));
    assert.ok(svg.includes("fitted rise 20 MiB &amp; more"));
    assert.ok(svg.includes(">elapsed (s)</text>"));
    assert.ok(svg.includes(">MiB</text>"));
    assert.ok(svg.includes("shaded: the samples judged; dashed: the least-squares line"));
    // x ticks 0..150 by 50 (or finer), y ticks around 100..140.
    for (const label of [">0<", ">50<", ">100<", ">150<", ">140<"]) assert.ok(svg.includes(label), label);
    assert.ok(!/NaN|undefined|Infinity/.test(svg));
  });

  it("breaks the line where a sample has no value, and marks each valued one", () => {
    const lines = [...svg.matchAll(/<polyline class="series"[^>]* points="([^"]+)"/g)].map((m) => m[1].split(" ").length);
    assert.ok(!svg.includes('class="envelope"'));
    assert.deepEqual(lines, [2, 2]);
    assert.equal(svg.match(/<circle /g)?.length, 4);
  });

  it("draws the window and the fitted line inside the plot, the fit rising left to right", () => {
    const rect = /<rect class="window" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)"/.exec(svg)!;
    assert.ok(Number(rect[3]) > 0);
    const fit = /<line class="fit" x1="([\d.]+)" y1="([\d.]+)" x2="([\d.]+)" y2="([\d.]+)"/.exec(svg)!;
    const [x1, y1, x2, y2] = fit.slice(1).map(Number);
    assert.equal(x1, Number(rect[1]));
    assert.ok(x2 > x1 && y2 < y1, "higher values are drawn higher up");
    for (const c of [x1, x2]) assert.ok(c >= 72 && c <= 720 - 24);
  });

  it("draws the peaks judged instead of a sawtooth in grey, within the axes", () => {
    const teeth = [20, 22, 24, 20, 22, 24].map((v, i) => ({ t: (i + 1) * 30, v }));
    const peaks = [20, 22, 24, 24, 24, 24].map((v, i) => ({ t: (i + 1) * 30, v }));
    const chart = lineChartSvg({ title: "table_bytes:delivery.deliveries", unit: "bytes", points: teeth, envelope: { edge: "peaks", points: peaks }, window: { from: 90, to: 180 } });
    const envelope = /<polyline class="envelope"[^>]* points="([^"]+)"/.exec(chart)!;
    assert.equal(envelope[1].split(" ").length, 6);
    assert.ok(chart.includes("grey: their peaks, judged instead"));
    assert.equal(chart.match(/<circle /g)?.length, 6, "only the samples are marked");
  });

  it("draws a series with no value at all without failing", () => {
    const empty = lineChartSvg({ title: "delivery_lag_p99_ms", unit: "ms", points: [{ t: 30, v: NaN }] });
    assert.ok(!/NaN/.test(empty));
    assert.ok(!empty.includes("<polyline"));
  });
});

describe("fileNameOf", () => {
  it("keeps a series' name readable and safe as a file name", () => {
    assert.equal(fileNameOf("table_bytes:delivery.deliveries"), "table_bytes-delivery.deliveries");
    assert.equal(fileNameOf("rss_mib:delivery#2"), "rss_mib-delivery-2");
  });
});
