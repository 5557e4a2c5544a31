// The soak's files, as text: the samples as CSV, and one series as a hand-written SVG line chart (axes with
// round ticks, labels, the judged window shaded, the fitted line of a level drawn over it). Pure.
import { figure, type Point } from "./judge.ts";

/** One CSV cell: a number as is, text quoted when it holds a comma, quote or line break; empty for none. */
function cell(value: number | string | undefined): string {
  if (value === undefined || (typeof value === "number" && !Number.isFinite(value))) return "";
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A CSV text: the header, then a line per row (RFC 4180 quoting), each line ended by \n. */
export function toCsv(columns: readonly string[], rows: readonly (readonly (number | string | undefined)[])[]): string {
  return [columns, ...rows].map((row) => row.map(cell).join(",") + "\n").join("");
}

/**
 * Round tick values covering [min, max]: steps of 1, 2 or 5 times a power of ten, about `count` of them.
 * A range of one value is widened around it so the axis still has a span.
 */
export function niceTicks(min: number, max: number, count = 5): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [0, 1];
  if (max < min) [min, max] = [max, min];
  if (max === min) {
    const pad = min === 0 ? 1 : Math.abs(min) * 0.1;
    min -= pad;
    max += pad;
  }
  const rough = (max - min) / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough)!;
  const first = Math.floor(min / step) * step;
  const ticks: number[] = [];
  for (let t = first; t <= max + step * 1e-9 || ticks.length < 2; t += step) ticks.push(Number(t.toPrecision(12)));
  if (ticks.at(-1)! < max) ticks.push(Number((ticks.at(-1)! + step).toPrecision(12)));
  return ticks;
}

/** A tick's label: 15k, 20M, 3G for big values (bytes read better so), the figure itself otherwise. */
export function tickLabel(value: number): string {
  const abs = Math.abs(value);
  const scaled = (size: number, suffix: string) => `${Number((value / size).toPrecision(4))}${suffix}`;
  if (abs >= 1e9) return scaled(1e9, "G");
  if (abs >= 1e6) return scaled(1e6, "M");
  if (abs >= 1e4) return scaled(1e3, "k");
  return figure(value);
}

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

export interface ChartOptions {
  title: string;
  unit: string;
  points: readonly Point[];
  /** The judged window, shaded. */
  window?: { from: number; to: number };
  /** What was judged instead of the points (their peaks or floor), drawn in grey. */
  envelope?: { edge: "peaks" | "floor"; points: readonly Point[] };
  /** A fitted line v = intercept + slope * t, drawn over the window. */
  fit?: { slope: number; intercept: number };
  /** A line under the title: the verdict. */
  subtitle?: string;
  width?: number;
  height?: number;
}

/** An SVG line chart of one series over the run's seconds. Points without a value break the line. */
export function lineChartSvg(options: ChartOptions): string {
  const width = options.width ?? 720;
  const height = options.height ?? 360;
  const margin = { left: 72, right: 24, top: options.subtitle ? 52 : 36, bottom: 60 };
  const plotW = width - margin.left - margin.right;
  const plotH = height - margin.top - margin.bottom;
  const valued = [...options.points, ...(options.envelope?.points ?? [])].filter((p) => Number.isFinite(p.v));
  const ts = options.points.map((p) => p.t);
  const xTicks = niceTicks(Math.min(0, ...ts), ts.length ? Math.max(...ts) : 1, 6);
  const vs = valued.map((p) => p.v);
  const yTicks = vs.length ? niceTicks(Math.min(...vs), Math.max(...vs), 5) : [0, 1];
  const [x0, x1] = [xTicks[0], xTicks.at(-1)!];
  const [y0, y1] = [yTicks[0], yTicks.at(-1)!];
  const x = (t: number) => margin.left + ((t - x0) / (x1 - x0)) * plotW;
  const y = (v: number) => margin.top + plotH - ((v - y0) / (y1 - y0)) * plotH;
  const r = (n: number) => Math.round(n * 10) / 10;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${width}" height="${height}" fill="white"/>`);
  out.push(`<text x="${width / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">${escapeXml(options.title)}</text>`);
  if (options.subtitle) out.push(`<text x="${width / 2}" y="38" text-anchor="middle" fill="#555">${escapeXml(options.subtitle)}</text>`);
  if (options.window) {
    const from = Math.max(x0, options.window.from);
    out.push(`<rect class="window" x="${r(x(from))}" y="${margin.top}" width="${r(x(options.window.to) - x(from))}" height="${plotH}" fill="#f0f4ff"/>`);
    const legend = [
      "shaded: the samples judged",
      options.envelope ? `grey: their ${options.envelope.edge}, judged instead` : "",
      options.fit ? "dashed: the least-squares line" : "",
    ].filter(Boolean).join("; ");
    out.push(`<text x="${width - margin.right}" y="${height - 6}" text-anchor="end" font-size="10" fill="#777">${legend}</text>`);
  }
  for (const t of xTicks) {
    out.push(`<line x1="${r(x(t))}" y1="${margin.top}" x2="${r(x(t))}" y2="${margin.top + plotH}" stroke="#e4e4e4"/>`);
    out.push(`<text x="${r(x(t))}" y="${margin.top + plotH + 16}" text-anchor="middle">${escapeXml(tickLabel(t))}</text>`);
  }
  for (const v of yTicks) {
    out.push(`<line x1="${margin.left}" y1="${r(y(v))}" x2="${margin.left + plotW}" y2="${r(y(v))}" stroke="#e4e4e4"/>`);
    out.push(`<text x="${margin.left - 6}" y="${r(y(v)) + 4}" text-anchor="end">${escapeXml(tickLabel(v))}</text>`);
  }
  out.push(`<line class="axis" x1="${margin.left}" y1="${margin.top + plotH}" x2="${margin.left + plotW}" y2="${margin.top + plotH}" stroke="black"/>`);
  out.push(`<line class="axis" x1="${margin.left}" y1="${margin.top}" x2="${margin.left}" y2="${margin.top + plotH}" stroke="black"/>`);
  out.push(`<text x="${margin.left + plotW / 2}" y="${margin.top + plotH + 34}" text-anchor="middle">elapsed (s)</text>`);
  out.push(`<text transform="translate(16 ${margin.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escapeXml(options.unit)}</text>`);
  // One polyline per run of valued points.
  const line = (points: readonly Point[], attributes: string) => {
    let run: string[] = [];
    const flush = () => {
      if (run.length) out.push(`<polyline ${attributes} fill="none" points="${run.join(" ")}"/>`);
      run = [];
    };
    for (const p of points) {
      if (Number.isFinite(p.v)) run.push(`${r(x(p.t))},${r(y(p.v))}`);
      else flush();
    }
    flush();
  };
  if (options.envelope) line(options.envelope.points, `class="envelope" stroke="#999" stroke-width="1.5"`);
  line(options.points, `class="series" stroke="#1f5fbf" stroke-width="2"`);
  for (const p of options.points.filter((p) => Number.isFinite(p.v))) out.push(`<circle cx="${r(x(p.t))}" cy="${r(y(p.v))}" r="2.5" fill="#1f5fbf"/>`);
  if (options.fit && options.window && Number.isFinite(options.fit.intercept)) {
    const at = (t: number) => options.fit!.intercept + options.fit!.slope * t;
    const { from, to } = options.window;
    out.push(`<line class="fit" x1="${r(x(from))}" y1="${r(y(at(from)))}" x2="${r(x(to))}" y2="${r(y(at(to)))}" stroke="#d0342c" stroke-width="1.5" stroke-dasharray="6 4"/>`);
  }
  out.push("</svg>");
  return out.join("\n") + "\n";
}

/** A series name as a file name: anything but letters, digits, dot, dash and underscore becomes "-". */
export function fileNameOf(series: string): string {
  return series.replace(/[^\w.-]+/g, "-");
}
