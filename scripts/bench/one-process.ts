// The whole system as six processes and as one (ONE_PROCESS), in alternating rounds on a fresh system each:
// idle memory (RSS and PSS summed over its processes), ingest (50 connections: req/s, CPU per response, peak
// RSS), delivery lag at 500 responses a second and a delivered burst (deliveries/s, CPU per delivery).
// `node scripts/bench/one-process.ts [--rounds N] [--seconds S]`.
import { startReceiver } from "../../tests/support/receiver.ts";
import { startTestSystem } from "../../tests/support/system.ts";
import { memoryOf, sampleRss, servicesCpu, sleep, summed } from "./common.ts";
import { lagStats, measuredBurst, pacedLag, warmHookedForm } from "./delivery.ts";
import { loadIngest } from "./ingest.ts";
import { numberArg, switchAB } from "./switch-ab.ts";

export async function oneProcess(opts: { rounds?: number; seconds?: number } = {}) {
  const seconds = opts.seconds ?? 8;
  const figures: Record<"on" | "off", object[]> = { on: [], off: [] };
  const result = await switchAB(opts.rounds ?? 3, async (value) => {
    const sys = await startTestSystem(`bench_one_process_${value}`, { ONE_PROCESS: value, WEBHOOK_ALLOW_PRIVATE_URLS: "true" });
    const receiver = await startReceiver();
    try {
      await sleep(8000);
      const idle = memoryOf(sys);
      const sampler = sampleRss(sys);
      const { system } = await loadIngest(sys, 50, seconds);
      const peakRss = summed(sampler.stop());

      const formId = await warmHookedForm(sys, receiver, "hooks@example.com");
      const lag500 = await pacedLag(sys, receiver, formId, 500, 1000);
      const measured = await measuredBurst(sys, receiver, formId, 1000);
      const burst = lagStats(measured.received, measured.sentAt);

      figures[value].push({
        idleRssMiB: idle.rss,
        idlePssMiB: idle.pss,
        ingestPerSecond: system.requestsPerSecond,
        ingestP99ms: system.p99ms,
        cpuMsPerResponse: servicesCpu(system.cpuMsPerRequest),
        peakRssUnderIngestMiB: peakRss,
        lagAt500PerSecond: { p50ms: lag500.p50LagMs, p99ms: lag500.p99LagMs },
        deliveriesPerSecond: burst.deliveriesPerSecond,
        cpuMsPerDelivery: servicesCpu(measured.cpuMsPerDelivery),
      });
      return idle.rss;
    } finally {
      await receiver.close();
      await sys.stop();
    }
  });
  return { seconds, rounds: result.rounds, idleRssRatioOnToOff: result.ratioOnToOff, figures };
}

if (import.meta.main) {
  const result = await oneProcess({ rounds: numberArg("--rounds", 3), seconds: numberArg("--seconds", 8) });
  for (const value of ["off", "on"] as const) for (const run of result.figures[value]) console.log(`ONE_PROCESS=${value} ${JSON.stringify(run)}`);
  console.log(`one-process ${JSON.stringify(result)}`);
}
