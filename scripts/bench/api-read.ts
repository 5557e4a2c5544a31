// Scenario 1: authenticated GET /api/v1/forms/:id at 64 connections against (a) a bare Express 5 handler
// serving the same JSON from memory and (b) a direct-Postgres Express handler with no RPC hop.
// Also scenario 5's idle RSS and RSS under this load.
import { createUserWithKey, startTestSystem, type TestSystem } from "../../tests/support/system.ts";
import { cpuMeter, load, pssOf, ratio, rssMiB, rssOf, sampleRss, settleAfterSetup, startBaselineServer } from "./common.ts";

/** A form of a user with an API key on `sys`: the read that scenario 1 loads, and the key's header. */
export async function apiReadTarget(sys: TestSystem, email = "bench@example.com") {
  const ada = await createUserWithKey(sys, email);
  const form = await ada.api("POST", "/forms", {
    workspaceId: ada.workspace.id,
    name: "Bench",
    document: { blocks: [{ id: "a", key: "a", type: "SHORT_TEXT", question: "Name" }] },
  });
  return { ada, formId: form.body.id as string, path: `/api/v1/forms/${form.body.id}`, headers: { authorization: `Bearer ${ada.key}` } };
}

export async function apiRead(opts: { connections?: number; seconds?: number } = {}) {
  const connections = opts.connections ?? 64;
  const duration = opts.seconds ?? 8;
  const sys = await startTestSystem("bench_api_read");
  try {
    const { ada, formId, path, headers } = await apiReadTarget(sys);
    const body = JSON.stringify((await ada.api("GET", `/forms/${formId}`)).body);
    await settleAfterSetup();
    const idleRss = rssOf(sys);
    // Proportional set size: shared pages (the node binary's, ~50 MiB resident in each process) divided among
    // the processes sharing them, so the sum is what the six take of the machine's memory.
    const idlePss = pssOf(sys);
    // A short warm-up so the JIT and connection pools are not measured cold.
    await load({ url: sys.url + path, headers, connections, duration: 2 });
    const sampler = sampleRss(sys);
    const cpu = cpuMeter(sys);
    const system = await load({ url: sys.url + path, headers, connections, duration });
    const cpuMsPerRequest = cpu.perUnit(system.total);
    const loadRss = sampler.stop();

    const bare = await startBaselineServer("static", { BENCH_BODY: body, BENCH_KEY: ada.key });
    await load({ url: bare.url + path, headers, connections, duration: 1 });
    const bareResult = await load({ url: bare.url + path, headers, connections, duration });
    const bareRss = rssMiB(bare.pid);
    await bare.stop();

    const direct = await startBaselineServer("pg", { DATABASE_URL: sys.databaseUrl });
    await load({ url: direct.url + path, headers, connections, duration: 1 });
    const directResult = await load({ url: direct.url + path, headers, connections, duration });
    const directRss = rssMiB(direct.pid);
    await direct.stop();

    return {
      connections,
      durationSeconds: duration,
      system: { ...system, cpuMsPerRequest },
      bareExpress: bareResult,
      directPostgres: directResult,
      ratioToBare: ratio(system.requestsPerSecond, bareResult.requestsPerSecond),
      ratioToDirectPostgres: ratio(system.requestsPerSecond, directResult.requestsPerSecond),
      rss: { idle: idleRss, idlePss, underLoad: loadRss, baselines: { bareExpress: bareRss, directPostgres: directRss } },
    };
  } finally {
    await sys.stop();
  }
}
