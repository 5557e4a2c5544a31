// Scenario 3: lag from stored response to received POST (p50, p99) at 100 and 500 responses a second,
// on the embedded bus and on Kafka; deliveries per second to a fast receiver against raw undici POSTs to
// the same receiver. Also scenario 5's RSS under delivery load (embedded bus).
import { join } from "node:path";
import { Pool } from "undici";
import { repoRoot } from "@formsvc/launcher/system.ts";
import { startKafka } from "../../deploy/kafka/kafka-runner.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { startReceiver, type Received } from "../../tests/support/receiver.ts";
import { createUserWithKey, startTestSystem, type TestSystem } from "../../tests/support/system.ts";
import { cpuMeter, type CpuExtras, quantile, ratio, rssOf, sampleRss, settleAfterSetup, sleep } from "./common.ts";

/**
 * Respondents' POSTs go over one undici Pool per system, as the ceiling's POSTs do: the load generator
 * shares the machine's two cores with the system it measures, so it spends as little of them as it can
 * (fetch costs about twice the CPU per request).
 */
const pools = new WeakMap<TestSystem, Pool>();

function poolOf(sys: TestSystem): Pool {
  let pool = pools.get(sys);
  if (!pool) {
    pool = new Pool(new URL(sys.url).origin, { connections: 256 });
    pools.set(sys, pool);
  }
  return pool;
}

/** The respondent's body of submission n: one number, what the scenarios' one-question forms ask. */
const oneNumber = (n: number): unknown => ({ answers: { n }, completed: true });

async function post(sys: TestSystem, formId: string, n: number, body: (n: number) => unknown = oneNumber) {
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await poolOf(sys).request({
        method: "POST",
        path: `/f/${formId}/responses`,
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body(n)),
      });
      await res.body.dump();
      if (res.statusCode >= 300) throw new Error(`submission answered ${res.statusCode}`);
      return;
    } catch (err) {
      // A kept-alive socket the gateway closed just as it was reused ("other side closed"): send again.
      if (attempt >= 3 || (err as Error).message.startsWith("submission answered")) throw err;
    }
  }
}

export interface PacedOptions {
  /** The body of submission n (one number by default). */
  body?: (n: number) => unknown;
  /**
   * Told as each submission ends: its latency in ms (from its send to its answer, resends on a closed
   * kept-alive socket included) and its error if it failed. With it, a failed submission does not stop the run.
   */
  onEnd?: (ms: number, error?: Error) => void;
  /** Aborting stops sending; the submissions in flight are waited for. */
  signal?: AbortSignal;
}

/** Open-loop: `total` submissions at `perSecond`, spread over `formIds` round robin, whatever the latency. */
export async function submitPaced(sys: TestSystem, formIds: string[], total: number, perSecond: number, options: PacedOptions = {}) {
  const { body, onEnd, signal } = options;
  const start = performance.now();
  const pending = new Set<Promise<void>>();
  const send = async (n: number) => {
    const t = performance.now();
    try {
      await post(sys, formIds[n % formIds.length], n, body);
    } catch (err) {
      if (!onEnd) throw err;
      onEnd(performance.now() - t, err as Error);
      return;
    }
    onEnd?.(performance.now() - t);
  };
  for (let n = 0; n < total && !signal?.aborted; n++) {
    const due = start + (n * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    // At most 256 submissions in flight: past that the system is saturated and the lag says so anyway.
    while (pending.size >= 256) await Promise.race(pending);
    const p: Promise<void> = send(n).finally(() => pending.delete(p));
    pending.add(p);
  }
  await Promise.all(pending);
}

/** Closed-loop: `total` submissions as fast as `concurrency` clients go. */
export async function submitBurst(sys: TestSystem, formIds: string[], total: number, concurrency = 32) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const n = next++;
        await post(sys, formIds[n % formIds.length], n);
      }
    }),
  );
}

export function lagStats(received: Received[], sentAt?: number) {
  const lags = received.map((r) => r.at - Date.parse(r.body.data.submittedAt)).sort((a, b) => a - b);
  const times = received.map((r) => r.at).sort((a, b) => a - b);
  const seconds = (times.at(-1)! - (sentAt ?? times[0])) / 1000;
  return {
    deliveries: received.length,
    deliveriesPerSecond: Math.round(received.length / seconds),
    p50LagMs: quantile(lags, 0.5),
    p99LagMs: quantile(lags, 0.99),
  };
}

/** A published form of `ada`'s (one NUMBER question unless `blocks` says) with a webhook to each of `urls`. */
export async function makeHookedForm(
  sys: TestSystem,
  ada: Awaited<ReturnType<typeof createUserWithKey>>,
  urls: string | string[],
  name = "Delivery",
  blocks: object[] = [{ id: "n", key: "n", type: "NUMBER", question: "Number" }],
) {
  const form = await ada.api("POST", "/forms", { workspaceId: ada.workspace.id, name, document: { blocks } });
  await sys.cli("form:publish", "--id", form.body.id);
  for (const url of [urls].flat()) {
    const hook = await ada.api("POST", "/webhooks", { formId: form.body.id, url });
    if (hook.status >= 300) throw new Error(`webhook: ${JSON.stringify(hook.body)}`);
  }
  return form.body.id as string;
}

/** A user's published form with a webhook to `receiver`, warmed by 50 deliveries (connections, topic) then cleared. */
export async function warmHookedForm(sys: TestSystem, receiver: { url: string; received: Received[] }, email = "bench@example.com"): Promise<string> {
  const ada = await createUserWithKey(sys, email);
  const formId = await makeHookedForm(sys, ada, receiver.url);
  await submitBurst(sys, [formId], 50, 8);
  await eventuallyPasses(async () => receiver.received.length, (n) => n >= 50, 120_000, 100);
  await sleep(500);
  receiver.received.length = 0;
  return formId;
}

type Receiving = { received: Received[] };

/** `total` responses to `formId` at `perSecond`, once all have been delivered: their lag. The receiver is emptied. */
export async function pacedLag(sys: TestSystem, receiver: Receiving, formId: string, perSecond: number, total: number) {
  await submitPaced(sys, [formId], total, perSecond);
  await eventuallyPasses(async () => receiver.received.length, (n) => n >= total, 300_000, 100);
  const stats = lagStats(receiver.received);
  receiver.received.length = 0;
  return stats;
}

/** `burst` responses to `formId` at 32 connections, once all have been delivered: what arrived, when the burst was sent, each process's CPU per delivery. */
export async function measuredBurst(sys: TestSystem, receiver: Receiving, formId: string, burst: number, extras: CpuExtras = {}) {
  const cpu = cpuMeter(sys, extras);
  const sentAt = Date.now();
  await submitBurst(sys, [formId], burst);
  await eventuallyPasses(async () => receiver.received.length, (n) => n >= burst, 600_000, 100);
  return { received: [...receiver.received], sentAt, cpuMsPerDelivery: cpu.perUnit(burst) };
}

/**
 * A fresh system (`env` beside WEBHOOK_ALLOW_PRIVATE_URLS) with a warmed hooked form: `burst` responses
 * delivered to one quick receiver. What arrived, when the burst was sent, and each process's CPU per delivery.
 */
export async function deliveredBurst(name: string, env: Record<string, string>, burst: number) {
  const sys = await startTestSystem(name, { WEBHOOK_ALLOW_PRIVATE_URLS: "true", ...env });
  const receiver = await startReceiver();
  try {
    return await measuredBurst(sys, receiver, await warmHookedForm(sys, receiver), burst);
  } finally {
    await receiver.close();
    await sys.stop();
  }
}

export async function delivery(bus: "embedded" | "kafka", opts: { burst?: number; rates?: [number, number][] } = {}) {
  const burst = opts.burst ?? 1000;
  const rates = opts.rates ?? [
    [100, 500],
    [500, 1000],
  ];
  const kafka = bus === "kafka" ? await startKafka({ dataDir: join(repoRoot, "test-output", `kafka-bench-${process.pid}`) }) : undefined;
  const sys = await startTestSystem(`bench_delivery_${bus}`, { WEBHOOK_ALLOW_PRIVATE_URLS: "true", KAFKA_BROKERS: kafka?.brokers ?? "" });
  const receiver = await startReceiver();
  try {
    // Warm-up: a few deliveries so the first measured one does not pay for connections and topic creation.
    const formId = await warmHookedForm(sys, receiver);
    await settleAfterSetup();
    const idleRss = rssOf(sys);
    const sampler = sampleRss(sys);

    const lag: Record<string, ReturnType<typeof lagStats> & { perSecond: number }> = {};
    for (const [perSecond, total] of rates) lag[`${perSecond}/s`] = { perSecond, ...(await pacedLag(sys, receiver, formId, perSecond, total)) };

    const measured = await measuredBurst(sys, receiver, formId, burst, { kafkaPid: kafka?.pid });
    // Each process's CPU per response taken in and delivered.
    const throughput = { ...lagStats(measured.received), cpuMsPerDelivery: measured.cpuMsPerDelivery };
    const loadRss = sampler.stop();
    receiver.received.length = 0;

    // Ceiling: the same number of signed-size POSTs straight from undici to the same receiver.
    const body = JSON.stringify({ type: "response.completed", data: { submittedAt: new Date().toISOString(), answers: { n: 1 }, pad: "x".repeat(400) } });
    const pool = new Pool(new URL(receiver.url).origin, { connections: 32 });
    const path = new URL(receiver.url).pathname;
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < burst) {
          next++;
          const res = await pool.request({ method: "POST", path, headers: { "content-type": "application/json" }, body });
          await res.body.dump();
        }
      }),
    );
    const rawPerSecond = Math.round(burst / ((performance.now() - t0) / 1000));
    await pool.close();
    receiver.received.length = 0;

    return {
      bus,
      lag,
      throughput,
      rawUndici: { deliveriesPerSecond: rawPerSecond },
      throughputRatio: ratio(throughput.deliveriesPerSecond, rawPerSecond),
      rss: { idle: idleRss, underLoad: loadRss },
    };
  } finally {
    await receiver.close();
    await sys.stop();
    await kafka?.stop();
  }
}
