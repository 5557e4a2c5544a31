// `node scripts/soak/rejudge.ts <run dir> [--queue-tables a,b]`: judges a soak's recorded samples
// (samples.csv) afresh by today's rules (scripts/soak/series.ts, judge.ts), rewriting the run's charts and
// summary.json's verdicts (its totals and settings stay those of the run; `rejudged` says when, at which
// commit, and with which queue tables). For a run recorded before a judging rule changed: the samples
// are the run's, only their reading is new. Exits 1 when a series keeps climbing.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { repoRoot } from "@formsvc/launcher/system.ts";
import type { SeriesSpec } from "./judge.ts";
import { defaultQueueTables, judgeAndChart, seriesSpec, seriesSummary, verdictLines, type Sample } from "./series.ts";

const { values: flags, positionals } = parseArgs({
  args: process.argv.slice(2),
  allowPositionals: true,
  options: { "queue-tables": { type: "string" } },
});
if (positionals.length !== 1) {
  console.error("usage: node scripts/soak/rejudge.ts <run dir> [--queue-tables submissions.outbox,...]");
  process.exit(2);
}
const dir = resolve(positionals[0]);
const summary = JSON.parse(readFileSync(join(dir, "summary.json"), "utf8"));
const settings = { ...summary.settings, queueTables: flags["queue-tables"]?.split(",").map((t) => t.trim()).filter(Boolean) ?? summary.settings.queueTables ?? defaultQueueTables };
const [header, ...lines] = readFileSync(join(dir, "samples.csv"), "utf8").trimEnd().split("\n");
// The soak's own CSV: series names and numbers, never quoted; an empty cell is a sample without a value.
const columns = header.split(",");
const samples: Sample[] = lines.map((line) => {
  const cells = line.split(",");
  return { t: Number(cells[0]), values: Object.fromEntries(columns.slice(1).map((c, i) => [c, cells[i + 1] === "" ? NaN : Number(cells[i + 1])])) };
});
const specs = new Map<string, SeriesSpec>(columns.slice(1).map((name) => [name, seriesSpec(name, settings)]));
const verdicts = judgeAndChart(dir, specs.values(), samples);
const climbing = verdicts.filter((v) => v.verdict === "climbing").map((v) => v.series);
const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: repoRoot, encoding: "utf8" }).trim();
const rejudged = { date: new Date().toISOString(), commit, queueTables: settings.queueTables, climbingBefore: summary.rejudged?.climbingBefore ?? summary.climbing };
writeFileSync(join(dir, "summary.json"), JSON.stringify({ ...summary, settings, climbing, series: seriesSummary(verdicts, specs, samples), rejudged }, null, 2) + "\n");
for (const line of verdictLines(verdicts, specs, samples)) console.log(line);
console.log(climbing.length ? `soak: climbing: ${climbing.join(", ")}` : "soak: no series keeps climbing");
process.exitCode = climbing.length ? 1 : 0;
