import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createCompletionNotifier } from "./completion-notifier.ts";
import { lingerMs, outboxPauses } from "./outbox-pauses.ts";

/** Whether `promise` has settled after the microtasks queued so far. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return done;
}

describe("outbox pauses: linger after a small batch", () => {
  it("waits lingerMs after a pass that found a few rows, and not after none or a quarter of a batch", async (t) => {
    t.mock.timers.enable({ apis: ["setTimeout"] });
    const pauses = outboxPauses(undefined);
    assert.equal(await settled(pauses.linger(0, 100)), true, "nothing found: no linger");
    assert.equal(await settled(pauses.linger(25, 100)), true, "a quarter of a batch: no linger");
    const small = pauses.linger(3, 100);
    assert.equal(await settled(small), false, "three rows: it lingers");
    t.mock.timers.tick(lingerMs - 1);
    assert.equal(await settled(small), false);
    t.mock.timers.tick(1);
    assert.equal(await settled(small), true, `over after ${lingerMs} ms`);
    pauses.stop();
  });

  it("stop ends a linger at once, and a completion does not", async (t) => {
    t.mock.timers.enable({ apis: ["setTimeout"] });
    const completions = createCompletionNotifier();
    const pauses = outboxPauses(completions);
    const lingering = pauses.linger(1, 100);
    completions.notify();
    assert.equal(await settled(lingering), false, "a completion is what it waits to gather, not an end");
    pauses.stop();
    assert.equal(await settled(lingering), true);
  });
});
