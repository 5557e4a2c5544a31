// A burst of completed responses delivered to one receiver on the embedded bus, with delivery's webhook
// cache off and on (WEBHOOK_CACHE), interleaved over rounds: deliveries/s, lag and CPU per delivery.
// `node scripts/bench/webhook-cache.ts [--rounds N] [--burst N]`.
import { servicesCpu } from "./common.ts";
import { deliveredBurst, lagStats } from "./delivery.ts";
import { numberArg, rounded, switchAB } from "./switch-ab.ts";

type Figures = { deliveriesPerSecond: number; p99LagMs: number; cpuMsPerDelivery: number; webhooksCpuMs: number; deliveryCpuMs: number };

export async function webhookCache(opts: { rounds?: number; burst?: number } = {}) {
  const burst = opts.burst ?? 1000;
  const figures: Record<"on" | "off", Figures[]> = { on: [], off: [] };
  const result = await switchAB(opts.rounds ?? 3, async (value) => {
    const { received, cpuMsPerDelivery: perDelivery } = await deliveredBurst(`bench_webhook_cache_${value}`, { WEBHOOK_CACHE: value }, burst);
    const stats = lagStats(received);
    figures[value].push({
      deliveriesPerSecond: stats.deliveriesPerSecond,
      p99LagMs: stats.p99LagMs,
      cpuMsPerDelivery: servicesCpu(perDelivery),
      webhooksCpuMs: perDelivery.webhooks ?? 0,
      deliveryCpuMs: perDelivery.delivery ?? 0,
    });
    return stats.deliveriesPerSecond;
  });
  return { burst, rounds: result.rounds, ratioOnToOff: result.ratioOnToOff, figures };
}

if (import.meta.main) {
  const result = await webhookCache({ rounds: numberArg("--rounds", 3), burst: numberArg("--burst", 1000) });
  for (const value of ["off", "on"] as const) {
    const runs = result.figures[value];
    const fixed = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(", ");
    console.log(
      `delivery burst WEBHOOK_CACHE=${value}: deliveries/s ${rounded(runs.map((r) => r.deliveriesPerSecond))}; p99 lag ms ${rounded(runs.map((r) => r.p99LagMs))}; ` +
        `CPU ms/delivery ${fixed(runs.map((r) => r.cpuMsPerDelivery))} (webhooks ${fixed(runs.map((r) => r.webhooksCpuMs))}, delivery ${fixed(runs.map((r) => r.deliveryCpuMs))})`,
    );
  }
  console.log(`deliveries/s ratio on/off ${result.ratioOnToOff}`);
  console.log(`webhook-cache ${JSON.stringify(result)}`);
}
