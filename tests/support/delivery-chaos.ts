import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { eventually, startReceiver } from "./receiver.ts";
import { createUserWithKey, startTestSystem, type TestSystem } from "./system.ts";

/** Faults injected into a run while its responses are sent. */
export interface Faults {
  /** Called once a fraction of the responses have been sent. */
  at: { fraction: number; inject(sys: TestSystem): Promise<void> }[];
}

interface RunFigures {
  responses: number;
  healthyUnique: number;
  healthyDuplicates: number;
  flappingUnique: number;
  flappingDuplicates: number;
  p50LagMs: number;
  p99LagMs: number;
}

const responses = Number(process.env.CHAOS_RESPONSES ?? 500);
const ratePerSecond = 100;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Delivery under faults, on one bus: a clean baseline (healthy receiver only), an isolation run
 * (plus a receiver failing half its requests and one that never answers in time), and a chaos
 * run (the same receivers while delivery is SIGKILLed twice and `busFaults` strike).
 */
export function chaosSuite(
  bus: string,
  busEnv: () => Promise<{ env: Record<string, string>; stop(): Promise<void>; faults: Faults["at"] }>,
) {
  let sys: TestSystem;
  let stopBus: () => Promise<void>;
  let busFaults: Faults["at"];
  let ada: Awaited<ReturnType<typeof createUserWithKey>>;
  const figures: Record<string, RunFigures> = {};

  before(async () => {
    const setup = await busEnv();
    stopBus = setup.stop;
    busFaults = setup.faults;
    sys = await startTestSystem(`chaos_${bus}`, {
      WEBHOOK_ALLOW_PRIVATE_URLS: "true",
      // Short waits so a receiver failing half its requests is through within seconds; thirteen
      // attempts leave one chance in 8192 that a delivery fails every time.
      WEBHOOK_RETRY_SCHEDULE: "0.2,0.4,0.8,1,1,1,1,1,1,1,1,1",
      ...setup.env,
    });
    ada = await createUserWithKey(sys, "chaos@example.com");
  });
  after(async () => {
    console.log(`delivery figures on the ${bus} bus: ${JSON.stringify(figures)}`);
    await sys?.stop();
    await stopBus?.();
  });

  async function run(name: string, withBadReceivers: boolean, faults: Faults["at"]): Promise<RunFigures> {
    const healthy = await startReceiver();
    let flaps = 0;
    const flapping = await startReceiver(() => ({ status: flaps++ % 2 ? 200 : 503 }));
    const slow = await startReceiver(() => ({ status: 200, delayMs: 15_000 }));
    const form = await ada.api("POST", "/forms", {
      workspaceId: ada.workspace.id,
      name: `Chaos ${name}`,
      document: { blocks: [{ id: "n", key: "n", type: "NUMBER", question: "Number" }] },
    });
    await sys.cli("form:publish", "--id", form.body.id);
    const hooks = [healthy.url, ...(withBadReceivers ? [flapping.url, slow.url] : [])];
    for (const url of hooks) assert.equal((await ada.api("POST", "/webhooks", { formId: form.body.id, url })).status, 201);

    const pending = [...faults].sort((a, b) => a.fraction - b.fraction);
    const injected: Promise<void>[] = [];
    const started = Date.now();
    for (let i = 0; i < responses; i++) {
      // Faults strike while responses keep arriving.
      while (pending.length && i >= pending[0].fraction * responses) injected.push(pending.shift()!.inject(sys));
      const due = started + (i * 1000) / ratePerSecond;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      // The respondent's request is the one thing that must never fail, whatever delivery is doing.
      const res = await fetch(`${sys.url}/f/${form.body.id}/responses`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ answers: { n: i }, completed: true }),
      });
      assert.equal(res.status, 200);
      await res.arrayBuffer();
    }
    for (const fault of pending) injected.push(fault.inject(sys));
    await Promise.all(injected);

    const delivered = (r: typeof healthy) => r.received.filter((x) => x.status === 200);
    const unique = (r: typeof healthy) => new Set(delivered(r).map((x) => x.body?.eventId)).size;
    const duplicates = (r: typeof healthy) => delivered(r).length - unique(r);
    await eventually(async () => unique(healthy), (n) => n >= responses, 180_000, 500);
    if (withBadReceivers) await eventually(async () => unique(flapping), (n) => n >= responses, 180_000, 500);

    // Lag: from the stored response (its submittedAt) to the first arrival of its event.
    const firstArrival = new Map<string, number>();
    for (const r of healthy.received) {
      if (!firstArrival.has(r.body.eventId)) firstArrival.set(r.body.eventId, r.at - Date.parse(r.body.data.submittedAt));
    }
    const lags = [...firstArrival.values()].sort((a, b) => a - b);
    const result = {
      responses,
      healthyUnique: unique(healthy),
      healthyDuplicates: duplicates(healthy),
      flappingUnique: withBadReceivers ? unique(flapping) : 0,
      flappingDuplicates: withBadReceivers ? duplicates(flapping) : 0,
      p50LagMs: percentile(lags, 50),
      p99LagMs: percentile(lags, 99),
    };
    figures[name] = result;
    await Promise.all([healthy.close(), flapping.close(), slow.close()]);
    return result;
  }

  describe(`delivery under faults on the ${bus} bus`, () => {
    it("keeps the healthy receiver's lag while other receivers fail or hang", async () => {
      const clean = await run("clean", false, []);
      assert.equal(clean.healthyUnique, responses);
      const isolated = await run("isolation", true, []);
      assert.equal(isolated.healthyUnique, responses);
      assert.equal(isolated.flappingUnique, responses);
      // Within twice the clean run's p99 (a 50 ms floor keeps a tiny baseline from being noise).
      assert.ok(
        isolated.p99LagMs <= 2 * Math.max(clean.p99LagMs, 50),
        `healthy p99 lag ${isolated.p99LagMs} ms against ${clean.p99LagMs} ms without bad receivers`,
      );
    });

    it("loses nothing when delivery is killed twice and the bus fails", async () => {
      const killDelivery = async (s: TestSystem) => {
        await s.system.kill("delivery", "SIGKILL");
        await s.system.start("delivery");
      };
      const result = await run("chaos", true, [
        { fraction: 0.25, inject: killDelivery },
        ...busFaults,
        { fraction: 0.75, inject: killDelivery },
      ]);
      assert.equal(result.healthyUnique, responses, "every response reached the healthy receiver");
      assert.equal(result.flappingUnique, responses, "every response reached the flapping receiver");
    });
  });
}
