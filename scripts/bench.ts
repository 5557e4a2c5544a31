// `npm run bench [-- scenario...] [--rounds N] [--out name]`: every scenario and its ceiling, side by side on this
// machine; writes benchmarks/<name>.json (latest by default) and BENCHMARKS.md. Not part of `npm test`.
// With --rounds N each scenario runs N times, the scenarios interleaved (round 1 of each, then round 2 ...), each on
// a fresh system; every round's figures are kept, and BENCHMARKS.md shows the goals round by round with their spread.
// Scenarios: api-read ingest delivery-embedded delivery-kafka isolation tracing storage results (all when none
// is named), and results-1m only when named (a million responses take the machine for a while).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { repoRoot } from "@formsvc/launcher/system.ts";
import { apiRead } from "./bench/api-read.ts";
import { delivery } from "./bench/delivery.ts";
import { ingest } from "./bench/ingest.ts";
import { isolation } from "./bench/isolation.ts";
import { renderMarkdown } from "./bench/report.ts";
import { results } from "./bench/results.ts";
import { tracingOverhead } from "./bench/tracing.ts";
import { storage } from "./bench/storage.ts";
import { summary } from "./bench/goals.ts";

const scenarios: Record<string, () => Promise<object>> = {
  "api-read": () => apiRead(),
  ingest: () => ingest(),
  "delivery-embedded": () => delivery("embedded"),
  "delivery-kafka": () => delivery("kafka"),
  isolation: () => isolation(),
  tracing: () => tracingOverhead(),
  storage: () => storage(),
  results: () => results(100_000),
};
/** Run only when named. */
const namedOnly: Record<string, () => Promise<object>> = {
  "results-1m": () => results(1_000_000),
};

const args = process.argv.slice(2);
const outAt = args.indexOf("--out");
const out = outAt >= 0 ? args.splice(outAt, 2)[1] : "latest";
const roundsAt = args.indexOf("--rounds");
const rounds = roundsAt >= 0 ? Number(args.splice(roundsAt, 2)[1]) : 1;
const noMarkdown = args.includes("--no-markdown") ? (args.splice(args.indexOf("--no-markdown"), 1), true) : false;
const chosen = args.length > 0 ? args : Object.keys(scenarios);
Object.assign(scenarios, namedOnly);
for (const name of chosen) if (!scenarios[name]) throw new Error(`unknown scenario ${name}; known: ${Object.keys(scenarios).join(" ")}`);

const dir = join(repoRoot, "benchmarks");
mkdirSync(dir, { recursive: true });
const file = join(dir, `${out}.json`);
// Scenarios not run this time keep their previous figures.
const previous = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : { scenarios: {} };
const report = {
  commit: execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: repoRoot, encoding: "utf8" }).trim(),
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
  scenarios: previous.scenarios as Record<string, unknown>,
  // Every round's summary figures (goals.ts), the rounds of scenarios not run this time kept.
  rounds: ((previous.rounds ?? []) as { scenario: string }[]).filter((x) => !chosen.includes(x.scenario)) as { round: number; scenario: string; commit: string; figures: object }[],
};
for (let round = 1; round <= rounds; round++) {
  for (const name of chosen) {
    const t = Date.now();
    console.error(`bench: ${name}${rounds > 1 ? ` (round ${round} of ${rounds})` : ""} ...`);
    try {
      const result = await scenarios[name]();
      report.scenarios[name] = { ...result, date: new Date().toISOString(), commit: report.commit };
      report.rounds.push({ round, scenario: name, commit: report.commit, figures: summary(name, result) });
    } catch (err) {
      console.error(`bench: ${name} failed:`, err);
      report.scenarios[name] = { error: String(err), date: new Date().toISOString(), commit: report.commit };
    }
    console.error(`bench: ${name} done in ${Math.round((Date.now() - t) / 1000)} s`);
    writeFileSync(file, JSON.stringify(report, null, 2) + "\n");
  }
}
console.log(JSON.stringify(report, null, 2));
if (!noMarkdown) writeFileSync(join(repoRoot, "BENCHMARKS.md"), renderMarkdown(dir));
process.exit(0);
