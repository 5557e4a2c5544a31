// Probe: every process under --cpu-prof through a load, then the functions with the most self time in each
// process's profile. `delivery` (the default): a burst of responses delivered to a fast receiver (over Kafka
// with --kafka); `api-read`: scenario 1's authenticated GET at 64 connections for 10 s; `ingest`: scenario 2's
// POST of five answers at 50 connections for 15 s.
// `node scripts/bench/profile.ts [delivery|api-read|ingest] [--kafka] [--burst N] [--dir D]`.
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "@formsvc/launcher/system.ts";
import { startKafka } from "../../deploy/kafka/kafka-runner.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { startReceiver } from "../../tests/support/receiver.ts";
import { startTestSystem } from "../../tests/support/system.ts";
import { apiReadTarget } from "./api-read.ts";
import { load } from "./common.ts";
import { loadIngest } from "./ingest.ts";
import { submitBurst, warmHookedForm } from "./delivery.ts";
import { numberArg } from "./switch-ab.ts";

type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount: number };
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[] };

function topFunctions(profile: Profile, count: number) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const n = byId.get(id)!;
    const url = n.callFrame.url.replace(/^.*node_modules\//, "~/").replace(/^file:\/\/.*?\/(services|packages|gateway)\//, "$1/");
    const key = `${n.callFrame.functionName || "(anonymous)"} ${url}:${n.callFrame.lineNumber + 1}`;
    const dt = profile.timeDeltas[i] ?? 0;
    self.set(key, (self.get(key) ?? 0) + dt);
    total += dt;
  });
  const byPackage = new Map<string, number>();
  for (const [key, us] of self) {
    const m = /~\/((@[^/]+\/)?[^/]+)/.exec(key) ?? /(services\/[^/]+|packages\/[^/]+|gateway)/.exec(key) ?? /\((\w+)\)/.exec(key);
    const pkg = m ? m[1] : key.includes("node:") ? "node:" : "other";
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
  }
  const pct = (us: number) => `${((100 * us) / total).toFixed(1)}%`;
  return {
    totalMs: Math.round(total / 1000),
    functions: [...self].sort((a, b) => b[1] - a[1]).slice(0, count).map(([k, us]) => `${pct(us)} ${k}`),
    packages: [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([k, us]) => `${pct(us)} ${k}`),
  };
}

const dir = process.argv.includes("--dir") ? process.argv[process.argv.indexOf("--dir") + 1] : "/tmp/prof";
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
const burst = numberArg("--burst", 2000);
const scenario = process.argv.includes("api-read") ? "api-read" : process.argv.includes("ingest") ? "ingest" : "delivery";
const kafka = process.argv.includes("--kafka") ? await startKafka({ dataDir: join(repoRoot, "test-output", `kafka-profile-${process.pid}`) }) : undefined;
const sys = await startTestSystem("profile", { WEBHOOK_ALLOW_PRIVATE_URLS: "true", KAFKA_BROKERS: kafka?.brokers ?? "", NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${dir}` });
const receiver = await startReceiver();
try {
  if (scenario === "api-read") {
    const { path, headers } = await apiReadTarget(sys);
    const result = await load({ url: sys.url + path, headers, connections: 64, duration: 10 });
    console.log(`read at ${result.requestsPerSecond} req/s`);
  } else if (scenario === "ingest") {
    const { system } = await loadIngest(sys, 50, 15);
    console.log(`ingest at ${system.requestsPerSecond} req/s`);
  } else {
    const formId = await warmHookedForm(sys, receiver);
    const t0 = performance.now();
    await submitBurst(sys, [formId], burst);
    await eventuallyPasses(async () => receiver.received.length, (n) => n >= burst, 600_000, 100);
    console.log(`delivered ${burst} in ${Math.round(performance.now() - t0)} ms`);
  }
} finally {
  await receiver.close();
  await sys.stop();
  await kafka?.stop();
}
const pids = new Map([...sys.system.processes].map(([name, child]) => [String(child.pid), name]));
for (const file of readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"))) {
  const pid = /CPU\.\d+\.\d+\.(\d+)\./.exec(file)?.[1] ?? "";
  const name = pids.get(pid);
  if (!name) continue;
  console.log(`\n## ${name}`, JSON.stringify(topFunctions(JSON.parse(readFileSync(join(dir, file), "utf8")), 25), null, 1));
}
