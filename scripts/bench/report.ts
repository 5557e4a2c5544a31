// Renders BENCHMARKS.md from benchmarks/latest.json and, when present, the before/after records of the
// performance changes: before-pipeline.json and ab-pipeline.json (ingest and delivery), before-api-read.json,
// after-api-read.json and ab-identity.json (the API read), ab-held-copies.json (the open-form and webhook
// caches), ab-origin-concurrency.json (delivery's per-origin slots),
// ab-rpc-protocol.json (Connect against gRPC between the services), ab-one-process.json (ONE_PROCESS), and notes.md.
import { existsSync, readFileSync } from "node:fs";
import { retentionSection } from "./retention-report.ts";
import { goalsAb, goalsTable } from "./goals.ts";
import { join } from "node:path";
import { mean, servicesCpu } from "./common.ts";

type Row = [scenario: string, figure: string, ceiling: string, ratio: string, p50: string, p99: string, commit: string, date: string];

const n = (v: unknown, unit = "") => (typeof v === "number" && Number.isFinite(v) ? `${v.toLocaleString("en-US")}${unit}` : "–");
const r = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v.toFixed(3) : "–");
const d = (s: any) => (s?.date ? String(s.date).slice(0, 10) : "–");

export function rows(report: any): Row[] {
  const s = report.scenarios ?? {};
  const out: Row[] = [];
  const a = s["api-read"];
  if (a?.system) {
    out.push([`1. API read, GET /api/v1/forms/:id, ${a.connections} conns`, `${n(a.system.requestsPerSecond)} req/s`, `bare Express ${n(a.bareExpress.requestsPerSecond)} req/s`, r(a.ratioToBare), n(a.system.p50ms, " ms"), n(a.system.p99ms, " ms"), a.commit, d(a)]);
    out.push([`1. API read (vs direct Postgres)`, `${n(a.system.requestsPerSecond)} req/s`, `direct-pg Express ${n(a.directPostgres.requestsPerSecond)} req/s (p99 ${n(a.directPostgres.p99ms, " ms")})`, r(a.ratioToDirectPostgres), n(a.system.p50ms, " ms"), n(a.system.p99ms, " ms"), a.commit, d(a)]);
  }
  const i = s.ingest;
  if (i?.system) {
    out.push([`2. Ingest, POST /f/:id/responses, ${i.connections} conns`, `${n(i.system.requestsPerSecond)} req/s (${n(i.system.storedPerSecond)} stored/s)`, `raw pg INSERT ${n(i.rawInsert.requestsPerSecond)}/s (p99 ${n(i.rawInsert.p99ms, " ms")})`, r(i.ratio), n(i.system.p50ms, " ms"), n(i.system.p99ms, " ms"), i.commit, d(i)]);
  }
  for (const bus of ["embedded", "kafka"]) {
    const x = s[`delivery-${bus}`];
    if (!x?.lag) continue;
    for (const [rate, l] of Object.entries<any>(x.lag)) {
      out.push([`3. Delivery lag at ${rate}, ${bus} bus`, `${n(l.deliveries)} delivered`, "–", "–", n(l.p50LagMs, " ms"), n(l.p99LagMs, " ms"), x.commit, d(x)]);
    }
    out.push([`3. Delivery throughput, ${bus} bus`, `${n(x.throughput.deliveriesPerSecond)} deliveries/s`, `raw undici POSTs ${n(x.rawUndici.deliveriesPerSecond)}/s`, r(x.throughputRatio), n(x.throughput.p50LagMs, " ms"), n(x.throughput.p99LagMs, " ms"), x.commit, d(x)]);
  }
  const iso = s.isolation;
  if (iso?.clean) {
    out.push([`4. Isolation: healthy p99 lag, 30 % webhooks timing out`, `${n(iso.withTimeouts.p99LagMs, " ms")}`, `clean run ${n(iso.clean.p99LagMs, " ms")}`, r(iso.p99LagRatio), n(iso.withTimeouts.p50LagMs, " ms"), n(iso.withTimeouts.p99LagMs, " ms"), iso.commit, d(iso)]);
    out.push([`4. Isolation: healthy throughput`, `${n(iso.withTimeouts.deliveriesPerSecond)} deliveries/s`, `clean run ${n(iso.clean.deliveriesPerSecond)}/s`, r(iso.throughputRatio), "–", "–", iso.commit, d(iso)]);
  }
  const t = s.tracing;
  if (t?.on) {
    out.push([`6. Tracing on (every span exported), ingest`, `${n(t.on.requestsPerSecond)} req/s, ${n(t.cpuMsPerRequest.on)} ms CPU/req`, `tracing off ${n(t.off.requestsPerSecond)} req/s, ${n(t.cpuMsPerRequest.off)} ms CPU/req`, r(t.throughputRatio), n(t.on.p50ms, " ms"), n(t.on.p99ms, " ms"), t.commit, d(t)]);
  }
  for (const name of ["results", "results-1m"]) {
    const x = s[name];
    if (!x?.insights) continue;
    const at = `${n(x.responses)} responses`;
    out.push([`7. Insights read, GET /forms/:id/insights, ${at}`, `p99 ${n(x.insights.p99ms, " ms")}`, "goal ≤ 100 ms", "–", n(x.insights.p50ms, " ms"), n(x.insights.p99ms, " ms"), x.commit, d(x)]);
    out.push([`7. Summary read, GET /forms/:id/summary, ${at}`, `p99 ${n(x.summary.p99ms, " ms")}`, "goal ≤ 100 ms", "–", n(x.summary.p50ms, " ms"), n(x.summary.p99ms, " ms"), x.commit, d(x)]);
    out.push([`7. CSV export, ${at}`, `${n(x.export.rowsPerSecond)} rows/s (${n(x.export.seconds)} s)`, "goal ≥ 20,000 rows/s", "–", "–", "–", x.commit, d(x)]);
  }
  return out;
}

function table(rs: Row[]): string {
  const head = "| scenario | figure | ceiling | ratio | p50 | p99 | commit | date |\n|---|---|---|---|---|---|---|---|\n";
  return head + rs.map((x) => `| ${x.join(" | ")} |`).join("\n") + "\n";
}

function memory(report: any): string {
  const s = report.scenarios ?? {};
  const cols: [string, Record<string, number> | undefined][] = [
    ["idle", s["api-read"]?.rss?.idle],
    ["idle, proportional (PSS)", s["api-read"]?.rss?.idlePss],
    ["peak under 1 (API read)", s["api-read"]?.rss?.underLoad],
    ["peak under 3 (delivery, embedded)", s["delivery-embedded"]?.rss?.underLoad],
    ["peak under 3 (delivery, Kafka)", s["delivery-kafka"]?.rss?.underLoad],
  ];
  const names = [...new Set(cols.flatMap(([, v]) => Object.keys(v ?? {})))];
  if (names.length === 0) return "";
  let md = `| process | ${cols.map(([c]) => c).join(" | ")} |\n|---|${cols.map(() => "---").join("|")}|\n`;
  for (const p of names) md += `| ${p} | ${cols.map(([, v]) => n(v?.[p], " MiB")).join(" | ")} |\n`;
  return md;
}

/** "name before → after" for every process, and the sum of all. */
function cpuLine(before: Record<string, number> = {}, after: Record<string, number> = {}): string {
  const sum = (o: Record<string, number>) => Math.round(Object.values(o).reduce((x, y) => x + y, 0) * 100) / 100;
  return Object.keys(after).map((k) => `${k} ${b(before[k])} → ${after[k]}`).join(", ") + `; all processes ${sum(before)} → ${sum(after)}`;
}
const b = (v: number | undefined) => (v === undefined ? "–" : String(v));

/** A figure of a run by its (dotted) key. */
const pick = (x: any, key: string) => key.split(".").reduce((v, k) => v?.[k], x) as number;

/** A figure over runs: the mean, then each run's. */
const side = (runs: any[], key: string, digits = 0) => `${mean(runs.map((x) => pick(x, key))).toFixed(digits)} (${runs.map((x) => Number(pick(x, key)).toFixed(digits)).join(", ")})`;

/** A row of a switch's A/B (off, on, on / off). */
function switchRow(f: { off: any[]; on: any[] }, label: string, key: string, digits = 0): string {
  return `| ${label} | ${side(f.off, key, digits)} | ${side(f.on, key, digits)} | ${r(mean(f.on.map((x) => pick(x, key))) / mean(f.off.map((x) => pick(x, key))))} |`;
}

const json = (file: string) => (existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined);

/** The interleaved A/B of the pipeline change, one row per run and scenario. */
function abTable(ab: any): string {
  const lines = ab.runs.map((x: any) => {
    const f = x.figures;
    const cpu = f.cpuMsPerRequest ?? f.cpuMsPerDelivery ?? {};
    const total = servicesCpu(cpu);
    const figure = x.scenario === "ingest" ? `${f.requestsPerSecond} req/s, p99 ${f.p99ms} ms` : `${f.deliveriesPerSecond} deliveries/s; lag at 100/s p50 ${f.lag100.p50LagMs} ms, p99 ${f.lag100.p99LagMs} ms`;
    const ceiling = x.scenario === "ingest" ? `raw INSERT ${f.rawInsertPerSecond}/s` : `raw undici ${f.rawUndiciPerSecond}/s`;
    return `| ${x.run} | ${x.scenario} | ${figure} | ${ceiling} | ${r(f.ratio)} | ${total} |`;
  });
  return `| run | scenario | figure | ceiling | ratio | CPU ms per request or delivery, all processes |\n|---|---|---|---|---|---|\n${lines.join("\n")}\n`;
}

/**
 * The issue's table (ratios to the ceilings, lag, CPU, idle memory) from an interleaved whole-tree A/B
 * (scripts/bench-ab.ts --whole-tree): the mean of each side's rounds, each round's figure in brackets.
 */
function issueTable(ab: any): string {
  const of = (side: string, scenario: string) => ab.runs.filter((x: any) => x.side === side && x.scenario === scenario).map((x: any) => x.figures);
  // Each path with the issue's floor for it (a ratio at least, a lag, CPU time or RSS at most).
  const rows: [string, string, (f: any) => number | undefined, number, string][] = [
    ["API read vs direct-pg handler", "api-read", (f) => f.ratio, 3, "≥ 0.30"],
    ["ingest vs raw INSERT", "ingest", (f) => f.ratio, 3, "≥ 0.10"],
    ["delivery throughput, embedded, vs raw POSTs", "delivery-embedded", (f) => f.ratio, 3, "≥ 0.10"],
    ["delivery throughput, Kafka, vs raw POSTs", "delivery-kafka", (f) => f.ratio, 3, "≥ 0.08"],
    ["lag p99 at 500 responses/s, embedded (s)", "delivery-embedded", (f) => f.lag500?.p99LagMs / 1000, 3, "≤ 0.30"],
    ["lag p99 at 500 responses/s, Kafka (s)", "delivery-kafka", (f) => f.lag500?.p99LagMs / 1000, 3, "≤ 0.60"],
    ["CPU ms per ingested response, all processes", "ingest", (f) => servicesCpu(f.cpuMsPerRequest), 2, "≤ 1.0"],
    ["whole system idle RSS, 6 Node processes (MiB)", "api-read", (f) => f.idleRssMiB, 0, "≤ 600"],
  ];
  const cell = (figures: any[], pick: (f: any) => number | undefined, digits: number) => {
    const values = figures.map(pick).filter((v): v is number => typeof v === "number" && Number.isFinite(v));
    if (values.length === 0) return "–";
    return `${mean(values).toFixed(digits)} (${values.map((v) => v.toFixed(digits)).join(", ")})`;
  };
  const lines = rows.map(([label, scenario, pick, digits, floor]) => `| ${label} | ${floor} | ${cell(of("before", scenario), pick, digits)} | ${cell(of("after", scenario), pick, digits)} |`);
  return `| path | issue's floor | before \`${ab.before}\` | after \`${ab.after}\` |\n|---|---|---|---|\n${lines.join("\n")}\n`;
}

/** Issue 17's table, before and after, from each A/B kept: the whole table in one run (the issue's "now" against the final tree), then each round of work. */
function issueTables(dir: string): string {
  const sections: [string, string][] = [
    ["ab-final.json", "The whole table in one run: the issue's \"now\" against the tree that resolves it"],
    ["ab-whole-tree.json", "From the issue's \"now\" to the end of the first sessions' work"],
    ["ab-session26.json", "Then: the compile cache and the idle heap release, group commit on ingest and for delivery's successes, the form read as one raw query"],
    ["ab-session28-final.json", "Then: outbox followers that no longer wait a poll, new deliveries leased at intake, claims bounded by each origin's free slots"],
  ];
  let md = "";
  for (const [file, title] of sections) {
    const ab = json(join(dir, file));
    if (!ab) continue;
    const scenarios = [...new Set(ab.runs.map((x: any) => x.scenario))].join(" ");
    const command = `node scripts/bench-ab.ts ${ab.before}${ab.wholeTree ? " --whole-tree" : ""} ${scenarios}`;
    const sides = ab.wholeTree
      ? `Each round runs the whole tree of \`${ab.before}\` (a worktree with its own node_modules) and then the tree at \`${ab.after}\`, on a
fresh system each; the bench code and the launcher are the after side's on both sides.`
      : `Each round runs services/ as of \`${ab.before}\` and then as of \`${ab.after}\`, on a fresh system each; packages/, gateway/,
the launcher and the bench code are the after side's on both sides.`;
    md += `### ${title} (\`benchmarks/${file}\`, \`${command}\`, ${ab.rounds} rounds, ${ab.date.slice(0, 10)})

${sides} Mean of the rounds (each round in brackets).

${issueTable(ab)}
`;
  }
  return md ? `## The issue's table, before and after (interleaved A/B)\n\n${md}` : "";
}

/** The A/Bs of issue 33's changes, each with what it compares. */
const goalAbs: [file: string, title: string][] = [["ab33-final.json", "Issue 33's changes: the tree before them against the tree after"]];

/**
 * Issue 33's goals: every round of the last `npm run bench -- --rounds N` at one commit (each round a fresh system,
 * the scenarios interleaved), then each interleaved A/B of its changes with the CPU time per operation of each process.
 */
function goalsSection(latest: any, dir: string): string {
  const kept: { round: number; scenario: string; commit: string; figures: any }[] = latest.rounds ?? [];
  let md = "";
  if (kept.length > 0) {
    const commits = [...new Set(kept.map((x) => x.commit))];
    md += `## The goals of issue 33, run by run (\`npm run bench -- --rounds ${Math.max(...kept.map((x) => x.round))} api-read ingest delivery-embedded delivery-kafka\`, at ${commits.map((c) => `\`${c}\``).join(", ")})

Each run is a fresh system; the scenarios are interleaved (each scenario's first run, then each one's second ...).
The spread is (largest - smallest) / median. CPU ms per operation (request, or response taken in and delivered) comes
from /proc: each service, Postgres (every server process), the Kafka broker, the bench process (load generator and
receiver) and the whole machine (every core's busy time, whoever spent it). "services / load generator" divides the
services' CPU by the bench process's, which does the same work per operation on any machine: a figure that holds from
one machine (or hour) to the next better than milliseconds do.

${goalsTable(kept)}
`;
  }
  for (const [file, title] of goalAbs) {
    const ab = json(join(dir, file));
    if (!ab) continue;
    const scenarios = [...new Set(ab.runs.map((x: any) => x.scenario))].join(" ");
    md += `### ${title} (\`benchmarks/${file}\`, \`node scripts/bench-ab.ts ${ab.before}${ab.wholeTree ? " --whole-tree" : ""} --rounds ${ab.rounds} ${scenarios}\`, ${ab.date.slice(0, 10)})

Rounds of before then after, each on a fresh system, so a machine that speeds up or slows down moves both sides alike.

${goalsAb(ab)}
`;
  }
  return md;
}

export function renderMarkdown(dir: string): string {
  const latest = JSON.parse(readFileSync(join(dir, "latest.json"), "utf8"));
  let md = `# Benchmarks

Generated by \`npm run bench\` (scripts/bench.ts, one module per scenario under scripts/bench/) at commit
\`${latest.commit}\` on ${latest.date.slice(0, 10)}; the raw figures are in \`benchmarks/latest.json\`.
Each row gives the figure of the whole system, the ceiling it is compared with (measured the same way on the
same machine in the same run), the ratio figure / ceiling (for lag and isolation: the ratio to the clean run),
and the system's p50 and p99 latency (for delivery rows: lag from \`submittedAt\` to the receiver's arrival).

${table(rows(latest))}
${goalsSection(latest, dir)}${issueTables(dir)}## Memory (scenario 5)

Resident size (VmRSS from /proc/<pid>/status) of each process, idle after start-up and the peak sampled every
250 ms during scenario 1 and scenario 3.

${memory(latest)}
`;
  const pipelineBefore = json(join(dir, "before-pipeline.json"));
  if (pipelineBefore) {
    const pick = (report: any) => rows(report).filter((x) => /^[23]\./.test(x[0]));
    const ib = pipelineBefore.scenarios?.ingest?.system?.cpuMsPerRequest;
    const ia = latest.scenarios?.ingest?.system?.cpuMsPerRequest;
    md += `## Before and after: the response pipeline (ingest and delivery)

The worst ratios on a quiet machine were delivery throughput (0.009–0.010 on Kafka, 0.017–0.020 on the
embedded bus, against raw undici POSTs) and ingest (0.024–0.026 against raw INSERTs); delivery's figure
includes ingest, since every delivered response is first taken in. CPU profiles (\`--cpu-prof\` of every process under load) showed the largest
self time in socket writes to Postgres (one per statement: about 1 ms per response in submissions and again in
delivery), then the RPCs per response; traces of a 100/s run showed the lag was the intake, which handled events
one at a time at ~9 ms each. The change: a new response is one INSERT with its outbox row (was BEGIN, two inserts,
COMMIT); response-count adjustments coalesced per form; deliveries stored with the cursor in one statement and
attempts recorded in one (were transactions of four and five); events taken in batches (one webhooks call per
form per batch, one offset commit per Kafka batch); webhook reads as raw queries; kept-alive connections per
receiver origin.

Before: services at \`${pipelineBefore.commit}\` (\`benchmarks/before-pipeline.json\`), the same bench code, the same quiet
machine an hour earlier; after: \`benchmarks/latest.json\`.

CPU time per ingested response (ms, all processes): ${cpuLine(ib, ia)}.

CPU time per delivered response, embedded bus: ${cpuLine(pipelineBefore.scenarios?.["delivery-embedded"]?.throughput?.cpuMsPerDelivery, latest.scenarios?.["delivery-embedded"]?.throughput?.cpuMsPerDelivery)}.

CPU time per delivered response, Kafka: ${cpuLine(pipelineBefore.scenarios?.["delivery-kafka"]?.throughput?.cpuMsPerDelivery, latest.scenarios?.["delivery-kafka"]?.throughput?.cpuMsPerDelivery)}.

${table([...pick(pipelineBefore).map((x) => [`before: ${x[0]}`, ...x.slice(1)] as Row), ...pick(latest).map((x) => [`after: ${x[0]}`, ...x.slice(1)] as Row)])}
`;
  }
  const abPipeline = json(join(dir, "ab-pipeline.json"));
  if (abPipeline) {
    md += `### Interleaved A/B (\`benchmarks/ab-pipeline.json\`, \`node scripts/bench-ab.ts ${abPipeline.before}\`)

Rounds of before (services at \`${abPipeline.before}\`) then after (\`${abPipeline.after}\`), each on a fresh system, so a machine
that speeds up or slows down moves both sides alike. Ceilings are measured in each run.

${abTable(abPipeline)}
`;
  }
  const held = json(join(dir, "ab-held-copies.json"));
  if (held) {
    const ingest = held.openFormCache.figures;
    const read = held.membershipCache?.figures;
    const burst = held.webhookCache.figures;
    md += `## Held copies kept fresh by notices: a submit, a delivery and an API read that ask fewer services (\`benchmarks/ab-held-copies.json\`)

Submissions holds each open form (\`OPEN_FORM_CACHE\`), delivery each webhook and each form's subscriptions
(\`WEBHOOK_CACHE\`), and forms each caller's workspace (\`MEMBERSHIP_CACHE\`), dropped on every replica by Postgres
notices from the owning service's triggers. Rounds of off then on, each on a fresh system
(\`node scripts/bench/open-form-cache.ts\`, \`node scripts/bench/webhook-cache.ts\`, \`node scripts/bench/api-read-switch.ts MEMBERSHIP_CACHE\`),
at commit \`${held.commit}\` on ${d(held)}; mean (each round).

| | off | on | on / off |
|---|---|---|---|
| ingest req/s, 50 conns | ${side(ingest.off, "requestsPerSecond")} | ${side(ingest.on, "requestsPerSecond")} | ${r(held.openFormCache.ratioOnToOff)} |
| ingest p99 ms | ${side(ingest.off, "p99")} | ${side(ingest.on, "p99")} | – |
| CPU ms per ingested response, all processes | ${side(ingest.off, "cpuMsPerRequest", 2)} | ${side(ingest.on, "cpuMsPerRequest", 2)} | – |
| of which forms | ${side(ingest.off, "formsCpuMsPerRequest", 2)} | ${side(ingest.on, "formsCpuMsPerRequest", 2)} | – |
| delivery burst (${held.webhookCache.burst}), deliveries/s | ${side(burst.off, "deliveriesPerSecond")} | ${side(burst.on, "deliveriesPerSecond")} | ${r(held.webhookCache.ratioOnToOff)} |
| delivery burst p99 lag ms | ${side(burst.off, "p99LagMs")} | ${side(burst.on, "p99LagMs")} | – |
| CPU ms per delivery, all processes | ${side(burst.off, "cpuMsPerDelivery", 2)} | ${side(burst.on, "cpuMsPerDelivery", 2)} | – |
| of which webhooks | ${side(burst.off, "webhooksCpuMs", 2)} | ${side(burst.on, "webhooksCpuMs", 2)} | – |
| of which delivery | ${side(burst.off, "deliveryCpuMs", 2)} | ${side(burst.on, "deliveryCpuMs", 2)} | – |
${
  read
    ? `| API read req/s, 64 conns (MEMBERSHIP_CACHE) | ${side(read.off, "requestsPerSecond")} | ${side(read.on, "requestsPerSecond")} | ${r(held.membershipCache.ratioOnToOff)} |
| API read p99 ms | ${side(read.off, "p99")} | ${side(read.on, "p99")} | – |
| CPU ms per API read, all processes | ${side(read.off, "cpuMsPerRequest", 2)} | ${side(read.on, "cpuMsPerRequest", 2)} | – |
| of which identity | ${side(read.off, "identityCpuMs", 2)} | ${side(read.on, "identityCpuMs", 2)} | – |
`
    : ""
}
`;
  }
  const slots = json(join(dir, "ab-origin-concurrency.json"));
  if (slots) {
    const f = slots.figures;
    md += `## Per-origin slots that widen for a quick receiver (\`benchmarks/ab-origin-concurrency.json\`)

A burst of ${slots.burst} responses to one quick receiver on the embedded bus, with the per-origin cap fixed at 4
(\`WEBHOOK_MAX_ORIGIN_CONCURRENCY=4\`, as before) and widening to 32; rounds of 4 then 32, each on a fresh system
(\`node scripts/bench/origin-concurrency.ts\`); mean (each round). Lag is from \`submittedAt\` to arrival.

| | 4 | up to 32 | ratio |
|---|---|---|---|
| deliveries/s | ${side(f.off, "deliveriesPerSecond")} | ${side(f.on, "deliveriesPerSecond")} | ${r(slots.ratioOnToOff)} |
| lag p50 ms | ${side(f.off, "p50LagMs")} | ${side(f.on, "p50LagMs")} | – |
| lag p99 ms | ${side(f.off, "p99LagMs")} | ${side(f.on, "p99LagMs")} | – |
| delivery's CPU ms per delivery | ${side(f.off, "deliveryCpuMs", 2)} | ${side(f.on, "deliveryCpuMs", 2)} | – |
| CPU ms per delivery, all processes | ${side(f.off, "totalCpuMs", 2)} | ${side(f.on, "totalCpuMs", 2)} | – |

`;
  }
  const protocol = json(join(dir, "ab-rpc-protocol.json"));
  if (protocol) {
    const row = (label: string, key: string, digits = 0) => switchRow(protocol.figures, label, key, digits);
    md += `## The services' calls in the Connect protocol instead of gRPC (\`benchmarks/ab-rpc-protocol.json\`)

The same calls over the same kept HTTP/2 connection, in gRPC (\`RPC_PROTOCOL=grpc\`, as before) and in the Connect
protocol (binary); rounds of gRPC then Connect, each on a fresh system (\`node scripts/bench/rpc-protocol.ts\`);
mean (each round). CPU is every process's, per request.

| | gRPC | Connect | Connect / gRPC |
|---|---|---|---|
${row("ingest req/s, 50 conns", "ingestPerSecond")}
${row("ingest p99 ms", "ingestP99")}
${row("CPU ms per ingested response", "ingestCpuMs", 2)}
${row("API read req/s, 64 conns", "readPerSecond")}
${row("API read p99 ms", "readP99")}
${row("CPU ms per API read", "readCpuMs", 2)}

`;
  }
  const single = json(join(dir, "ab-one-process.json"));
  if (single) {
    const row = (label: string, key: string, digits = 0) => switchRow(single.figures, label, key, digits);
    md += `## One process: every service and the gateway in one Node (\`ONE_PROCESS\`, \`benchmarks/ab-one-process.json\`)

The same system as six processes (\`ONE_PROCESS=off\`, the default) and as one (\`on\`), in rounds of off then on,
each on a fresh system (\`node scripts/bench/one-process.ts\`, at ${single.commit}, ${single.date}): idle memory summed over the
processes after 8 s, ingest at 50 connections for ${single.seconds} s, then on the same system 1,000 responses at 500/s to a
webhook and a burst of 1,000 at 32 connections. Mean (each round).

| | six processes | one process | one / six |
|---|---|---|---|
${row("idle RSS, MiB", "idleRssMiB")}
${row("idle PSS, MiB", "idlePssMiB")}
${row("peak RSS under ingest, MiB", "peakRssUnderIngestMiB")}
${row("ingest req/s", "ingestPerSecond")}
${row("ingest p99 ms", "ingestP99ms")}
${row("CPU ms per ingested response, all processes", "cpuMsPerResponse", 2)}
${row("delivery lag p50 at 500/s, ms", "lagAt500PerSecond.p50ms")}
${row("delivery lag p99 at 500/s, ms", "lagAt500PerSecond.p99ms")}
${row("burst: deliveries/s (from its first request)", "deliveriesPerSecond")}
${row("burst: CPU ms per delivery, all processes", "cpuMsPerDelivery", 2)}

The services still call each other over loopback HTTP/2; what they share is one Node binary (its ~58 MiB of
file-backed pages counted once, not six times), one copy of each module and one heap. In-process calls without
the socket (connect's router transport) were left out: they would run the callee inside the caller's async
context, where MikroORM's transaction context (AsyncLocalStorage) would hand one service's transaction to another.

`;
  }
  const apiBefore = json(join(dir, "before-api-read.json"));
  const apiAfter = json(join(dir, "after-api-read.json"));
  if (apiBefore && apiAfter) {
    md += `## Earlier change: the authenticated API read

Made first, under a saturated machine: scenario 1 had a ratio of 0.024 to a bare handler, and its CPU per
request by process put identity first. AuthenticateApiKey and GetWorkspace became one raw joined query each.
Before (\`benchmarks/before-api-read.json\`, commit \`${apiBefore.commit}\`) and after (\`benchmarks/after-api-read.json\`, commit
\`${apiAfter.commit}\`), both at load average 15–19:

CPU time per request (ms): ${cpuLine(apiBefore.scenarios?.["api-read"]?.system?.cpuMsPerRequest, apiAfter.scenarios?.["api-read"]?.system?.cpuMsPerRequest)}.

${table([...rows(apiBefore).filter((x) => x[0].startsWith("1.")).map((x) => [`before: ${x[0]}`, ...x.slice(1)] as Row), ...rows(apiAfter).filter((x) => x[0].startsWith("1.")).map((x) => [`after: ${x[0]}`, ...x.slice(1)] as Row)])}
`;
  }
  md += retentionSection(dir);
  const notesFile = join(dir, "notes.md");
  if (existsSync(notesFile)) md += readFileSync(notesFile, "utf8") + "\n";
  md += `## Method

- Machine: ${latest.machine.cpus} cores (${latest.machine.model ?? "unknown CPU"}), shared with other work; Node ${latest.machine.node};
  the machine's own Postgres. Absolute numbers move from run to run; **the ratios are what matter**, since
  each figure and its ceiling are measured back to back on the same machine.
- Every scenario starts the whole system as \`npm start\` runs it (tests/support/system.ts \`startTestSystem\`:
  every service and the gateway in their own processes, a fresh database, rate limits lifted), and the load
  generator runs in the bench process.
- 1. API read: autocannon, 64 connections, 2 s warm-up then 8 s, \`GET /api/v1/forms/:id\` with a Bearer key.
  Ceilings, each an Express 5 app in its own process (scripts/bench/baseline-server.ts): the same JSON from
  memory behind a string compare of the key; and the same route straight on Postgres (key by prefix + SHA-256
  joined to its user, the form with a membership check), no RPC hop.
- 2. Ingest: autocannon, 50 connections, 8 s, \`POST /f/:id/responses\` with five answers, completed. Ceiling:
  50 \`pg\` clients inserting the same row into \`submissions.responses\` for 8 s.
- 3. Delivery: one form with one webhook to a local receiver answering 200 at once (tests/support/receiver.ts).
  Lag: open-loop submissions at 100/s (500) and 500/s (1,000; at most 256 in flight); lag = arrival at the receiver − the payload's
  \`submittedAt\`. Throughput: 1,000 submissions at 32 connections, deliveries/s from the first to the last
  arrival. Ceiling: 1,000 POSTs of a similar body from an undici Pool (32 connections) to the same receiver.
  Run on the embedded bus and on Kafka (deploy/kafka/kafka-runner.ts, a single KRaft node).
- 4. Isolation: ten forms with one webhook each; 600 submissions at 32 connections spread over them.
  Clean run: all ten webhooks healthy. Then ten other forms where 3 of 10 webhooks point at a receiver that
  answers only after 15 s (beyond the sender's 10 s timeout). Healthy receivers' p99 lag and deliveries/s
  (from the first submission to the last healthy arrival) as a ratio of the clean run.
- 5. Memory: see above.
- 6. Tracing: scenario 2 on a fresh system with tracing off (as shipped), then on a fresh system with
  \`OTEL_EXPORTER_OTLP_ENDPOINT\` set, every span exported over OTLP/HTTP to a collector on loopback
  (tests/support/otlp-collector.ts); the ratio is on / off.
- CPU per request or delivery: each process's user + system time from /proc/<pid>/stat over the measured
  run, divided by the requests (or deliveries) of that run. Unlike rates, it hardly moves with the machine.
- \`npm run bench -- api-read\` (or any scenario names) runs only those and keeps the other figures;
  \`--out name\` writes benchmarks/name.json instead. \`node scripts/bench-ab.ts <commit>\` runs an interleaved
  A/B against services/ as of that commit. \`npm test\` never runs the bench.
`;
  return md;
}
