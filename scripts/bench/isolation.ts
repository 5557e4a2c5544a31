// Scenario 4: scenario 3's burst over ten webhooks (one per form), first all healthy (the clean run), then
// with 3 of the 10 (30 %) pointing at receivers that never answer within the delivery timeout. The healthy
// receivers' p99 lag and throughput, as a ratio of the clean run. Embedded bus.
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { startReceiver } from "../../tests/support/receiver.ts";
import { createUserWithKey, startTestSystem } from "../../tests/support/system.ts";
import { ratio, sleep } from "./common.ts";
import { lagStats, makeHookedForm, submitBurst } from "./delivery.ts";

export async function isolation(opts: { total?: number } = {}) {
  const total = opts.total ?? 600;
  const sys = await startTestSystem("bench_isolation", { WEBHOOK_ALLOW_PRIVATE_URLS: "true" });
  const healthy = await startReceiver();
  // Answers after 15 s: beyond the sender's 10 s timeout.
  const slow = await startReceiver(() => ({ status: 200, delayMs: 15_000 }));
  try {
    const ada = await createUserWithKey(sys, "bench@example.com");
    const cleanForms: string[] = [];
    for (let i = 0; i < 10; i++) cleanForms.push(await makeHookedForm(sys, ada, healthy.url, `clean ${i}`));
    const mixedForms: string[] = [];
    for (let i = 0; i < 10; i++) mixedForms.push(await makeHookedForm(sys, ada, i < 3 ? slow.url : healthy.url, `mixed ${i}`));

    await submitBurst(sys, cleanForms, 50, 8);
    await eventuallyPasses(async () => healthy.received.length, (n) => n >= 50, 120_000, 100);
    await sleep(500);
    healthy.received.length = 0;

    let t0 = Date.now();
    await submitBurst(sys, cleanForms, total);
    await eventuallyPasses(async () => healthy.received.length, (n) => n >= total, 600_000, 100);
    const clean = lagStats(healthy.received, t0);
    healthy.received.length = 0;

    const healthyExpected = mixedForms.filter((_, i) => i >= 3).length;
    const expected = Math.ceil((total * healthyExpected) / mixedForms.length);
    t0 = Date.now();
    await submitBurst(sys, mixedForms, total);
    await eventuallyPasses(async () => healthy.received.length, (n) => n >= expected, 600_000, 100);
    const withTimeouts = lagStats(healthy.received, t0);

    return {
      responses: total,
      clean,
      withTimeouts: { ...withTimeouts, slowReceiverRequests: slow.received.length },
      p99LagRatio: ratio(withTimeouts.p99LagMs, clean.p99LagMs),
      throughputRatio: ratio(withTimeouts.deliveriesPerSecond, clean.deliveriesPerSecond),
    };
  } finally {
    await healthy.close();
    await slow.close();
    await sys.stop();
  }
}
