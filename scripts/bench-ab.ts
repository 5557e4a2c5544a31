// `node scripts/bench-ab.ts <before-commit> [--whole-tree] [--rounds N] [--out name] [scenario...]`: an
// interleaved A/B of a performance change. Each round runs the scenarios once with services/ as of
// <before-commit> and once as committed now (the bench code is the current one both times), so a machine that
// speeds up or slows down during the runs moves both sides alike. With --whole-tree the before side runs the
// whole tree of <before-commit> (packages/ and gateway/ too), from a git worktree in the temp directory with its
// own node_modules. Writes benchmarks/<name>.json (ab-latest by default).
// Scenarios: api-read ingest delivery-embedded delivery-kafka storage results results-1m (ingest and delivery-embedded when none is named).
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { checkedOutTree } from "@formsvc/launcher/release-tree.ts";
import { repoRoot } from "@formsvc/launcher/system.ts";
import { systemRootVariable } from "../tests/support/system.ts";
import { apiRead } from "./bench/api-read.ts";
import { delivery } from "./bench/delivery.ts";
import { ingest } from "./bench/ingest.ts";
import { results } from "./bench/results.ts";
import { storage } from "./bench/storage.ts";
import { summary } from "./bench/goals.ts";

const scenarios: Record<string, () => Promise<any>> = {
  "api-read": () => apiRead(),
  ingest: () => ingest(),
  "delivery-embedded": () => delivery("embedded"),
  "delivery-kafka": () => delivery("kafka"),
  storage: () => storage(),
  results: () => results(100_000),
  "results-1m": () => results(1_000_000),
};

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? args.splice(at, 2)[1] : fallback;
};
const wholeTree = args.includes("--whole-tree") ? (args.splice(args.indexOf("--whole-tree"), 1), true) : false;
const rounds = Number(option("--rounds", "2"));
const out = option("--out", "ab-latest");
const [before, ...named] = args;
if (!before) throw new Error("usage: node scripts/bench-ab.ts <before-commit> [--whole-tree] [--rounds N] [--out name] [scenario...]");
const chosen = named.length > 0 ? named : ["ingest", "delivery-embedded"];
for (const name of chosen) if (!scenarios[name]) throw new Error(`unknown scenario ${name}; known: ${Object.keys(scenarios).join(" ")}`);

const git = (...a: string[]) => execFileSync("git", a, { cwd: repoRoot, encoding: "utf8" }).trim();
if (!wholeTree && git("status", "--porcelain", "--", "services")) throw new Error("services/ has uncommitted changes: commit them first");
const after = git("rev-parse", "--short", "HEAD");
const beforeCommit = git("rev-parse", "--short", before);

const beforeRoot = wholeTree ? checkedOutTree(beforeCommit) : undefined;

const runs: { run: string; side: "before" | "after"; scenario: string; figures: object }[] = [];
try {
  for (let round = 1; round <= rounds; round++) {
    for (const side of ["before", "after"] as const) {
      if (beforeRoot) {
        if (side === "before") process.env[systemRootVariable] = beforeRoot;
        else delete process.env[systemRootVariable];
      } else git("checkout", side === "before" ? beforeCommit : "HEAD", "--", "services");
      for (const name of chosen) {
        console.error(`ab: round ${round}, ${side}, ${name} ...`);
        runs.push({ run: `${side}${round}`, side, scenario: name, figures: summary(name, await scenarios[name]()) });
      }
    }
  }
} finally {
  if (!beforeRoot) {
    git("checkout", "HEAD", "--", "services");
    git("reset", "-q", "--", "services");
  }
}
const report = { before: beforeCommit, after, wholeTree, date: new Date().toISOString(), rounds, runs };
writeFileSync(join(repoRoot, "benchmarks", `${out}.json`), JSON.stringify(report, null, 2) + "\n");
console.log(JSON.stringify(report, null, 2));
process.exit(0);
