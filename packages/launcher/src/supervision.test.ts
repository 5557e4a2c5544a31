import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decideRestart, defaultRestartPolicy, noCrashes, type CrashHistory, type RestartPolicy } from "./supervision.ts";

const policy: RestartPolicy = { initialDelayMs: 500, maxDelayMs: 10_000, stableAfterMs: 30_000, crashLoopCrashes: 5, crashLoopWindowMs: 60_000 };

/** Crashes at each of `times` (ms), each after running `upMs`; the decisions in order. */
function crashAt(times: number[], upMs: number, p = policy) {
  let history: CrashHistory = noCrashes;
  return times.map((now) => {
    const decision = decideRestart(p, history, now - upMs, now);
    history = decision.history;
    return decision;
  });
}

describe("decideRestart", () => {
  it("the defaults are the documented ones: 0.5 s doubling to 10 s, stable after 30 s, 5 crashes in 60 s", () => {
    assert.deepEqual(defaultRestartPolicy, policy);
  });

  it("doubles the pause with each crash in a row, up to the maximum", () => {
    // Crashes 20 s apart never make five within a minute, so the doubling shows to its cap.
    const decisions = crashAt([0, 20_000, 40_000, 60_000, 80_000, 100_000, 120_000], 1_000);
    assert.deepEqual(
      decisions.map((d) => (d.action === "restart" ? d.delayMs : d.action)),
      [500, 1_000, 2_000, 4_000, 8_000, 10_000, 10_000],
    );
  });

  it("starts the doubling afresh after a stable run", () => {
    let history: CrashHistory = noCrashes;
    for (const now of [0, 1_000, 3_000]) history = decideRestart(policy, history, now - 100, now).history;
    assert.equal(history.streak, 3);
    const afterStableRun = decideRestart(policy, history, 10_000, 10_000 + policy.stableAfterMs);
    assert.deepEqual(afterStableRun.action === "restart" && afterStableRun.delayMs, 500);
    assert.equal(afterStableRun.history.streak, 1);
  });

  it("gives up at the fifth crash within the window and says why", () => {
    const decisions = crashAt([0, 1_000, 3_000, 6_000, 59_000], 100);
    assert.deepEqual(decisions.map((d) => d.action), ["restart", "restart", "restart", "restart", "give-up"]);
    const last = decisions.at(-1)!;
    assert.equal(last.action === "give-up" && last.reason, "it crashed 5 times within 60 s");
  });

  it("forgets crashes older than the window", () => {
    const decisions = crashAt([0, 1_000, 3_000, 6_000, 61_000], 100);
    assert.equal(decisions.at(-1)!.action, "restart");
    assert.deepEqual(decisions.at(-1)!.history.crashes, [3_000, 6_000, 61_000]);
  });

  it("takes its numbers from the policy", () => {
    const strict = { ...policy, crashLoopCrashes: 2, crashLoopWindowMs: 5_000, initialDelayMs: 100, maxDelayMs: 150 };
    assert.deepEqual(
      crashAt([0, 6_000, 7_000], 10, strict).map((d) => (d.action === "restart" ? d.delayMs : d.action)),
      [100, 150, "give-up"],
    );
  });
});
