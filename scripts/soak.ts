// `npm run soak -- --minutes M --rate R [...]` (issue 28): the whole system, as the bench starts it, over a
// fresh database with retention shortened to minutes, under a steady R respondents a second to one
// five-question form whose webhooks go to receivers on loopback (some requests failing, some slow). Every
// --sample-seconds it samples each process's RSS, open descriptors, CPU and event-loop p99, each table's
// bytes, the respondents' POST latency and the deliveries' lag; writes a CSV, an SVG chart per series and a
// summary JSON to --out (benchmarks/soak/<timestamp>/ by default), prints a verdict per series and exits 1
// naming the series that keep climbing over the last half of the run (scripts/soak/judge.ts); 2 when the
// soak itself could not run. Not part of `npm test`. Ctrl-C stops the load early and still judges and
// writes what was sampled. `npm run soak -- --help` lists the flags.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { repoRoot } from "@formsvc/launcher/system.ts";
import { createUserWithKey, startTestSystem } from "../tests/support/system.ts";
import { cpuMeter, quantile, sleep } from "./bench/common.ts";
import { lagStats, makeHookedForm, submitPaced } from "./bench/delivery.ts";
import { fiveAnswers, fiveBlocks } from "./bench/ingest.ts";
import { figure, type SeriesSpec } from "./soak/judge.ts";
import { metricsUrls, processStats, scrape, type MetricSample } from "./soak/probes.ts";
import { startSoakReceivers } from "./soak/receivers.ts";
import { toCsv } from "./soak/render.ts";
import { defaultQueueTables, judgeAndChart, seriesSpec, seriesSummary, tableWindows, verdictLines, type Sample } from "./soak/series.ts";

const { values: flags } = parseArgs({
  args: process.argv.slice(2),
  options: {
    minutes: { type: "string", default: "10" },
    rate: { type: "string", default: "50" },
    "retention-minutes": { type: "string", default: "5" },
    "sample-seconds": { type: "string", default: "30" },
    receivers: { type: "string", default: "4" },
    "failing-receivers": { type: "string", default: "1" },
    "slow-receivers": { type: "string", default: "1" },
    "fail-fraction": { type: "string", default: "0.3" },
    "slow-fraction": { type: "string", default: "0.01" },
    "slow-ms": { type: "string", default: "2000" },
    "retry-schedule": { type: "string", default: "5,10,20" },
    "retention-interval-seconds": { type: "string", default: "30" },
    "retention-safety-seconds": { type: "string", default: "60" },
    "partition-seconds": { type: "string", default: "60" },
    // Tables of kept data, that grow with every response by design: charted, never judged.
    "kept-tables": { type: "string", default: "submissions.responses" },
    // Queue tables, whose rows wait for a consumer: judged on their floor (see scripts/soak/judge.ts).
    "queue-tables": { type: "string", default: defaultQueueTables.join(",") },
    out: { type: "string" },
    help: { type: "boolean", default: false },
  },
});

if (flags.help) {
  console.log(`npm run soak -- [--minutes 10] [--rate 50] [--retention-minutes 5] [--sample-seconds 30]
  [--receivers 4] [--failing-receivers 1] [--fail-fraction 0.3] [--slow-receivers 1] [--slow-fraction 0.01]
  [--slow-ms 2000] [--retry-schedule 5,10,20]
  [--retention-interval-seconds 30] [--retention-safety-seconds 60] [--partition-seconds 60]
  [--kept-tables submissions.responses]
  [--queue-tables submissions.outbox,forms.outbox,submissions.mail_outbox,identity.mail_outbox] [--out benchmarks/soak/<timestamp>]`);
  process.exit(0);
}

function numberFlag(name: keyof typeof flags, check: (n: number) => boolean = (n) => n > 0): number {
  const n = Number(flags[name]);
  if (!Number.isFinite(n) || !check(n)) {
    console.error(`soak: --${name} ${flags[name]} is not a valid value`);
    process.exit(2);
  }
  return n;
}

const settings = {
  minutes: numberFlag("minutes"),
  rate: numberFlag("rate"),
  retentionMinutes: numberFlag("retention-minutes"),
  sampleSeconds: numberFlag("sample-seconds", (n) => n >= 1),
  receivers: numberFlag("receivers", (n) => Number.isInteger(n) && n >= 1 && n <= 20),
  failingReceivers: numberFlag("failing-receivers", (n) => Number.isInteger(n) && n >= 0),
  slowReceivers: numberFlag("slow-receivers", (n) => Number.isInteger(n) && n >= 0),
  failFraction: numberFlag("fail-fraction", (n) => n >= 0 && n <= 1),
  slowFraction: numberFlag("slow-fraction", (n) => n >= 0 && n <= 1),
  slowMs: numberFlag("slow-ms", (n) => n >= 0),
  retrySchedule: flags["retry-schedule"]!,
  retentionIntervalSeconds: numberFlag("retention-interval-seconds", Number.isInteger),
  retentionSafetySeconds: numberFlag("retention-safety-seconds", Number.isInteger),
  partitionSeconds: numberFlag("partition-seconds", Number.isInteger),
  keptTables: flags["kept-tables"]!.split(",").map((t) => t.trim()).filter(Boolean),
  queueTables: flags["queue-tables"]!.split(",").map((t) => t.trim()).filter(Boolean),
};
if (settings.failingReceivers + settings.slowReceivers > settings.receivers) {
  console.error("soak: --failing-receivers plus --slow-receivers must be at most --receivers");
  process.exit(2);
}
/** Without a healthy receiver, the lag judged is that of every first attempt (a failing one answers most at once). */
const lagJudgedAt = settings.failingReceivers + settings.slowReceivers < settings.receivers ? "healthy" : "every";
const env = {
  WEBHOOK_ALLOW_PRIVATE_URLS: "true",
  WEBHOOK_RETRY_SCHEDULE: settings.retrySchedule,
  DELIVERY_RETENTION_DAYS: String(settings.retentionMinutes / 1440),
  RETENTION_INTERVAL_SECONDS: String(settings.retentionIntervalSeconds),
  RETENTION_SAFETY_SECONDS: String(settings.retentionSafetySeconds),
  RETENTION_PARTITION_SECONDS: String(settings.partitionSeconds),
};
const { judgedFrom: tablesJudgedFrom, period: tablePeriod, queueFloorSeconds } = tableWindows(settings);
const durationSeconds = settings.minutes * 60;
const stamp = new Date().toISOString().replace(/:/g, "-").replace(/\.\d+Z$/, "Z");
const outDir = resolve(flags.out ?? join(repoRoot, "benchmarks", "soak", stamp));
mkdirSync(outDir, { recursive: true });
const say = (line: string) => console.log(`soak: ${line}`);
// The commit whose code the processes load now (the tree may move on during an hour's run).
const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: repoRoot, encoding: "utf8" }).trim();

// --- the series: what each is and how it is judged -------------------------------------------------------
const specs = new Map<string, SeriesSpec>();
const samples: Sample[] = [];
/** Registers the series `name` (judged as scripts/soak/series.ts says) and names it. */
function series(name: string): string {
  if (!specs.has(name)) specs.set(name, seriesSpec(name, settings));
  return name;
}

// --- the system, the form, the receivers ------------------------------------------------------------------
say(`starting the system (retention ${settings.retentionMinutes} min = DELIVERY_RETENTION_DAYS ${env.DELIVERY_RETENTION_DAYS}, pass every ${settings.retentionIntervalSeconds} s, partitions of ${settings.partitionSeconds} s, retries ${settings.retrySchedule} s)`);
const sys = await startTestSystem("soak", env);
const receivers = await startSoakReceivers({ count: settings.receivers, failing: settings.failingReceivers, slow: settings.slowReceivers, ...settings });
const stop = new AbortController();
let interrupted = false;
process.once("SIGINT", () => {
  interrupted = true;
  say("interrupted: stopping the load, then judging what was sampled");
  stop.abort();
});

let exitCode = 0;
try {
  const ada = await createUserWithKey(sys, "soak@example.com");
  const formId = await makeHookedForm(sys, ada, receivers.urls, "Soak", fiveBlocks);
  const urls = metricsUrls(sys);
  const healthy = settings.receivers - settings.failingReceivers - settings.slowReceivers;
  say(
    `form ${formId} with ${settings.receivers} webhooks: ${healthy} healthy, ${settings.failingReceivers} failing (${settings.failFraction * 100} % answered 500), ` +
      `${settings.slowReceivers} slow (${settings.slowFraction * 100} % answered after ${settings.slowMs} ms); processes ${[...sys.system.processes].map(([n, c]) => `${n}=${c.pid}`).join(" ")}`,
  );
  // A slow origin gets 4 attempts at a time after a slow answer: held by slow answers, it falls behind.
  const slowInFlight = settings.slowFraction * settings.rate * (settings.slowMs / 1000);
  if (settings.slowReceivers > 0 && slowInFlight >= 2) {
    say(`warning: each slow receiver has ~${figure(slowInFlight)} slow answers in flight of the 4 attempts a slow origin gets: it will fall behind by design (lower --slow-fraction)`);
  }
  if (settings.failingReceivers > 0 && settings.failFraction > 0.5) {
    say("warning: a failing receiver over 50 % opens its origin's breaker, which holds its deliveries back without counting attempts: they may not end within the retry schedule");
  }

  // A scrape now: the event-loop histograms (reset at each scrape) then cover one interval each.
  await Promise.all([...urls.values()].map((url) => scrape(url)));
  const pids = new Map([...sys.system.processes].map(([name, child]) => [name, child.pid]));
  let restarts = 0;
  let scrapeFailures = 0;

  // The respondents: `rate` a second, open loop, for the whole run.
  let latencies: number[] = [];
  let errors = 0;
  let stored = 0;
  let lastError = "";
  const body = () => ({ answers: fiveAnswers, completed: true });
  const onEnd = (ms: number, error?: Error) => {
    latencies.push(ms);
    if (error) {
      errors++;
      lastError = error.message;
    } else stored++;
  };
  const t0 = performance.now();
  const elapsed = () => (performance.now() - t0) / 1000;
  const total = Math.round(settings.rate * durationSeconds);
  let loadDone = false;
  const load = submitPaced(sys, [formId], total, settings.rate, { body, onEnd, signal: stop.signal }).finally(() => (loadDone = true));

  let firstArrivals = 0;
  let retryArrivals = 0;
  let cpu = cpuMeter(sys);
  let previousT = 0;

  const sample = async () => {
    const t = Math.round(elapsed() * 10) / 10;
    const dt = Math.max(0.001, t - previousT);
    previousT = t;
    const values: Record<string, number> = {};
    const cpuMsPerSecond = cpu.perUnit(dt);
    cpu = cpuMeter(sys);
    for (const [name, child] of sys.system.processes) {
      if (pids.get(name) !== child.pid) {
        restarts++;
        say(`${name} was restarted (pid ${pids.get(name)} -> ${child.pid})`);
        pids.set(name, child.pid);
      }
      const { rssMiB, fds } = processStats(child.pid);
      values[series(`rss_mib:${name}`)] = rssMiB;
      values[series(`fds:${name}`)] = fds;
      values[series(`cpu_pct:${name}`)] = Math.round(cpuMsPerSecond[name]) / 10;
    }
    const scraped = await Promise.all([...urls].map(async ([name, url]) => [name, await scrape(url)] as const));
    const tableBytes = new Map<string, number>();
    const pruned = new Map<string, number>();
    for (const [name, metrics] of scraped) {
      if (!metrics) scrapeFailures++;
      const find = (metric: string) => (metrics ?? []).filter((m: MetricSample) => m.name === metric);
      const lag = find("nodejs_eventloop_lag_p99_seconds")[0];
      values[series(`eventloop_p99_ms:${name}`)] = lag ? Math.round(lag.value * 1e4) / 10 : NaN;
      for (const m of find("table_bytes")) tableBytes.set(m.labels.table, Math.max(tableBytes.get(m.labels.table) ?? 0, m.value));
      for (const m of find("retention_rows_pruned_total")) pruned.set(m.labels.what, (pruned.get(m.labels.what) ?? 0) + m.value);
    }
    for (const [table, bytes] of [...tableBytes].sort(([a], [b]) => a.localeCompare(b))) values[series(`table_bytes:${table}`)] = bytes;
    const prunedRows = [...pruned.values()].reduce((a, b) => a + b, 0);
    values[series("rows_pruned_total")] = prunedRows;
    for (const [what, rows] of [...pruned].sort(([a], [b]) => a.localeCompare(b))) values[series(`rows_pruned_total:${what}`)] = rows;
    values[series("scrape_failures_total")] = scrapeFailures;

    const posted = latencies.sort((a, b) => a - b);
    latencies = [];
    values[series("respondent_p50_ms")] = Math.round(quantile(posted, 0.5) * 10) / 10;
    values[series("respondent_p99_ms")] = Math.round(quantile(posted, 0.99) * 10) / 10;
    values[series("respondents_per_s")] = Math.round((posted.length / dt) * 10) / 10;
    values[series("respondent_errors_total")] = errors;

    // Lag of first attempts: judged at the healthy receivers (what the system adds), reported at the others;
    // at every receiver when none is healthy.
    const arrived = receivers.take();
    const firsts = [...arrived.firsts.healthy, ...arrived.firsts.failing, ...arrived.firsts.slow];
    firstArrivals += firsts.length;
    retryArrivals += arrived.retries.length;
    const lag = lagStats(lagJudgedAt === "healthy" ? arrived.firsts.healthy : firsts);
    values[series("delivery_lag_p50_ms")] = lag.p50LagMs;
    values[series("delivery_lag_p99_ms")] = lag.p99LagMs;
    for (const role of ["failing", "slow"] as const) {
      if (settings[`${role}Receivers`] > 0) values[series(`delivery_lag_p99_ms:${role}`)] = lagStats(arrived.firsts[role]).p99LagMs;
    }
    values[series("deliveries_per_s")] = Math.round((firsts.length / dt) * 10) / 10;
    values[series("retries_per_s")] = Math.round((arrived.retries.length / dt) * 10) / 10;
    // Responses stored (2xx) times webhooks, less the first attempts that arrived: what delivery has yet to send.
    values[series("delivery_backlog")] = stored * settings.receivers - firstArrivals;
    values[series("restarts_total")] = restarts;
    samples.push({ t, values });
    writeCsv();
    const v = (name: string) => figure(values[name]);
    say(
      `${figure(t)} s: ${v("respondents_per_s")} POST/s p50 ${v("respondent_p50_ms")} p99 ${v("respondent_p99_ms")} ms, ` +
        `lag p50 ${v("delivery_lag_p50_ms")} p99 ${v("delivery_lag_p99_ms")} ms, ${v("deliveries_per_s")} deliveries/s + ${v("retries_per_s")} retries/s, backlog ${v("delivery_backlog")}, ` +
        `RSS ${figure([...sys.system.processes.keys()].reduce((a, n) => a + (values[`rss_mib:${n}`] || 0), 0))} MiB, tables ${figure([...tableBytes.values()].reduce((a, b) => a + b, 0) / 1024 ** 2)} MiB, pruned ${figure(prunedRows)}`,
    );
  };

  say(`load: ${settings.rate} respondents/s for ${settings.minutes} min, a sample every ${settings.sampleSeconds} s; table bytes judged from ${tablesJudgedFrom} s on, on their peaks over ${tablePeriod} s (queue tables on their floor over ${queueFloorSeconds} s), over at least ${2 * tablePeriod} s; writing to ${relative(process.cwd(), outDir) || outDir}`);
  for (let k = 1; !interrupted; k++) {
    const at = Math.min(k * settings.sampleSeconds, durationSeconds);
    while (!interrupted && elapsed() < at) await sleep(Math.min(250, (at - elapsed()) * 1000));
    await sample();
    if (at >= durationSeconds) break;
  }
  stop.abort();
  await load;
  if (!loadDone) throw new Error("the load did not end");

  // What delivery still owes after the load: first attempts (retries may take the whole schedule).
  const drainUntil = performance.now() + 30_000;
  while (performance.now() < drainUntil) {
    const { firsts, retries } = receivers.take();
    firstArrivals += firsts.healthy.length + firsts.failing.length + firsts.slow.length;
    retryArrivals += retries.length;
    if (stored * settings.receivers - firstArrivals <= 0) break;
    await sleep(250);
  }
  const undelivered = stored * settings.receivers - firstArrivals;

  // --- verdicts, files ------------------------------------------------------------------------------------
  const verdicts = judgeAndChart(outDir, specs.values(), samples);
  const climbing = verdicts.filter((v) => v.verdict === "climbing");
  const totals = {
    seconds: Math.round(elapsed()),
    samples: samples.length,
    posted: stored + errors,
    stored,
    errors,
    lastError: lastError || undefined,
    firstDeliveries: firstArrivals,
    retries: retryArrivals,
    undeliveredAfterDrain: undelivered,
    restarts,
  };
  const summary = {
    date: new Date().toISOString(),
    commit,
    machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
    settings: { ...settings, env, tablesJudgedFromSeconds: tablesJudgedFrom, interrupted },
    totals,
    climbing: climbing.map((v) => v.series),
    series: seriesSummary(verdicts, specs, samples),
  };
  writeFileSync(join(outDir, "summary.json"), JSON.stringify(summary, null, 2) + "\n");

  say(`totals: ${JSON.stringify(totals)}`);
  say(`verdicts (each series over the last half of ${samples.length} samples):`);
  for (const line of verdictLines(verdicts, specs, samples)) console.log(line);
  say(`wrote ${relative(process.cwd(), outDir) || outDir}: samples.csv, summary.json, ${specs.size} charts`);
  if (climbing.length > 0) {
    say(`FAILED: climbing: ${climbing.map((v) => v.series).join(", ")}`);
    exitCode = 1;
  } else say("passed: no series keeps climbing");
} catch (err) {
  console.error("soak: failed:", err);
  exitCode = 2;
} finally {
  stop.abort();
  await receivers.close();
  await sys.stop();
}
process.exit(exitCode);

function writeCsv(): void {
  const columns = [...specs.keys()];
  writeFileSync(join(outDir, "samples.csv"), toCsv(["elapsed_s", ...columns], samples.map((s) => [s.t, ...columns.map((c) => s.values[c])])));
}
