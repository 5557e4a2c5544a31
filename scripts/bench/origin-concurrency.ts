// Delivery of a burst (embedded bus, one quick receiver) with the per-origin cap fixed at 4
// (WEBHOOK_MAX_ORIGIN_CONCURRENCY=4, as before it widened) and widening to 32, interleaved over rounds:
// deliveries a second, lag p50/p99 during the burst, and delivery's CPU per delivery.
// `node scripts/bench/origin-concurrency.ts [--rounds N] [--burst N]`.
import { servicesCpu } from "./common.ts";
import { deliveredBurst, lagStats } from "./delivery.ts";
import { numberArg, switchAB } from "./switch-ab.ts";

type Figures = { deliveriesPerSecond: number; p50LagMs: number; p99LagMs: number; deliveryCpuMs: number; totalCpuMs: number };

export async function originConcurrency(opts: { rounds?: number; burst?: number } = {}) {
  const burst = opts.burst ?? 1500;
  const figures: Record<"on" | "off", Figures[]> = { on: [], off: [] };
  const result = await switchAB(opts.rounds ?? 2, async (value) => {
    const { received, sentAt, cpuMsPerDelivery: perDelivery } = await deliveredBurst(
      `bench_origin_concurrency_${value}`,
      { WEBHOOK_MAX_ORIGIN_CONCURRENCY: value === "on" ? "32" : "4" },
      burst,
    );
    const stats = lagStats(received, sentAt);
    const totalCpuMs = servicesCpu(perDelivery);
    figures[value].push({
      deliveriesPerSecond: stats.deliveriesPerSecond,
      p50LagMs: stats.p50LagMs,
      p99LagMs: stats.p99LagMs,
      deliveryCpuMs: perDelivery.delivery ?? 0,
      totalCpuMs: Math.round(totalCpuMs * 100) / 100,
    });
    return stats.deliveriesPerSecond;
  });
  return { burst, rounds: result.rounds, ratioOnToOff: result.ratioOnToOff, figures };
}

if (import.meta.main) {
  console.log(JSON.stringify(await originConcurrency({ rounds: numberArg("--rounds", 2), burst: numberArg("--burst", 1500) }), null, 2));
}
