// BENCHMARKS.md's retention part: the soak (benchmarks/soak/<run>/summary.json, `npm run soak`) with its charts,
// and the bytes each response leaves in each table, before and after (benchmarks/ab-storage.json).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileNameOf } from "../soak/render.ts";

const json = (file: string) => (existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined);
const n = (x: number | undefined, digits = 0) => (x === undefined || !Number.isFinite(x) ? "–" : x.toLocaleString("en-US", { maximumFractionDigits: digits }));

/** The series shown as charts, in this order, when the run has them. */
const charted = [/^rss_mib-/, /^fds-/, /^table_bytes-delivery\.(deliveries|attempts|payloads)$/, /^table_bytes-submissions\.outbox$/, /^respondent_p99_ms$/, /^delivery_lag_p99_ms$/, /^eventloop_p99_ms-(delivery|submissions|gateway)$/];

function soakSection(dir: string): string {
  const root = join(dir, "soak");
  if (!existsSync(root)) return "";
  let md = "";
  for (const run of readdirSync(root).sort()) {
    const summary = json(join(root, run, "summary.json"));
    if (!summary) continue;
    const { settings, totals } = summary;
    const series = Object.entries(summary.series as Record<string, any>);
    const judged = series.filter(([, s]) => s.verdict !== "info");
    md += `### Soak \`${run}\`: ${settings.minutes} minutes at ${settings.rate} responses/s (\`npm run soak\`, commit \`${summary.commit}\`, ${summary.date.slice(0, 10)})

${settings.receivers} webhooks (${settings.failingReceivers} failing ${Math.round(settings.failFraction * 100)} % of its requests and slow for ${settings.slowFraction * 100} % after ${settings.slowMs} ms),
retries at ${settings.retrySchedule} s, delivery retention ${settings.retentionMinutes} min in partitions of ${settings.partitionSeconds} s, a retention pass every
${settings.retentionIntervalSeconds} s, internal rows kept ${settings.retentionSafetySeconds} s; a sample every ${settings.sampleSeconds} s. ${n(totals.posted)} responses posted,
${n(totals.stored)} stored, ${n(totals.errors)} errors; ${n(totals.firstDeliveries)} first deliveries and ${n(totals.retries)} retries; ${n(totals.undeliveredAfterDrain)} undelivered after the drain;
${n(totals.restarts)} restarts. **Verdict: ${summary.climbing.length === 0 ? "no series keeps climbing" : `climbing: ${summary.climbing.join(", ")}`}.**${
      summary.rejudged
        ? `
Judged again at commit \`${summary.rejudged.commit}\` (${summary.rejudged.date.slice(0, 10)}, \`scripts/soak/rejudge.ts\`) from the run's own samples, queue tables
(${summary.rejudged.queueTables.join(", ")}) on their floor; the run's first verdict: ${summary.rejudged.climbingBefore.length ? `climbing: ${summary.rejudged.climbingBefore.join(", ")}` : "none climbing"}.`
        : ""
    }

| series | verdict | first | median | last | max | why |
|---|---|---|---|---|---|---|
${judged.map(([name, s]) => `| ${name} (${s.unit}) | ${s.verdict} | ${n(s.first, 1)} | ${n(s.median, 1)} | ${n(s.last, 1)} | ${n(s.max, 1)} | ${s.reason ?? ""} |`).join("\n")}

${charted.flatMap((pattern) => series.filter(([name]) => pattern.test(name))).map(([name]) => `![${name}](benchmarks/soak/${run}/${fileNameOf(name)}.svg)`).join("\n")}

`;
  }
  return md;
}

function storageSection(dir: string): string {
  const ab = json(join(dir, "ab-storage.json"));
  if (!ab) return "";
  const side = (s: string) => ab.runs.filter((r: any) => r.side === s && r.scenario === "storage").map((r: any) => r.figures);
  const [before] = side("before");
  const [after] = side("after");
  if (!before || !after) return "";
  const tables = [...new Set([...Object.keys(before.perResponse), ...Object.keys(after.perResponse)])].sort((a, b) => (before.perResponse[b] ?? 0) - (before.perResponse[a] ?? 0));
  return `### Bytes per response, by table (\`benchmarks/ab-storage.json\`, \`node scripts/bench-ab.ts ${ab.before} --whole-tree --rounds 1 storage\`, ${ab.date.slice(0, 10)})

20,000 responses to a form of five questions with two webhooks answering 200; measured once every delivery has
arrived and, after, once internal rows have had their retention pass (deliveries keep their 90 days). Before
\`${ab.before}\`, after \`${ab.after}\`.

| table | before | after |
|---|---|---|
${tables.map((t) => `| ${t} | ${n(before.perResponse[t])} | ${n(after.perResponse[t])} |`).join("\n")}
| **all** | **${n(before.bytesPerResponse)}** | **${n(after.bytesPerResponse)}** |

`;
}

export function retentionSection(dir: string): string {
  const md = storageSection(dir) + soakSection(dir);
  return md ? `## Retention: bounded storage\n\n${md}` : "";
}
