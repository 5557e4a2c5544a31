import assert from "node:assert/strict";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Logger } from "@formsvc/platform/logger.ts";
import { freeSystemPorts } from "./ports.ts";
import { startSystem, type RestartEvent, type SystemOptions } from "./system.ts";
import { delayReady, writeStandIns } from "./testing/stand-ins.ts";

/** A logger that keeps what it is given, for assertions on what the supervisor reported. */
function recordingLogger() {
  const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  const at = (level: string) => (fields: Record<string, unknown>, message: string) => void lines.push({ level, fields, message });
  return { lines, logger: { info: at("info"), warn: at("warn"), error: at("error"), fatal: at("fatal") } as unknown as Logger };
}

const exitOf = (pid: number) =>
  new Promise<void>((resolve) => {
    const poll = setInterval(() => {
      try {
        process.kill(pid, 0);
      } catch {
        clearInterval(poll);
        resolve();
      }
    }, 20);
  });

describe("the launcher's supervisor", () => {
  let root: string;
  before(() => {
    root = mkdtempSync(join(tmpdir(), "formsvc-supervise-"));
    writeStandIns(root);
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  const start = async (options: Partial<SystemOptions> = {}, env: Record<string, string> = {}) =>
    startSystem({ root, logDir: join(root, "logs"), env: { ...(await freeSystemPorts()), CRASHING: "", ...env }, ...options });

  it("restarts a process killed from outside, logs how it ended, and leaves one killed through the handle down", async () => {
    const { lines, logger } = recordingLogger();
    const restarts: RestartEvent[] = [];
    const system = await start({ logger, onRestart: (event) => restarts.push(event), supervise: { initialDelayMs: 100 } });
    try {
      const before = system.processes.get("forms")!.pid!;
      const restarted = system.nextRestart("forms");
      process.kill(before, "SIGKILL");
      const event = await restarted;
      assert.deepEqual([event.name, event.code, event.signal, event.delayMs, event.recentCrashes], ["forms", null, "SIGKILL", 100, 1]);
      assert.notEqual(event.pid, before);
      assert.equal(system.processes.get("forms")!.pid, event.pid);
      assert.deepEqual(restarts, [event]);
      const crash = lines.find((l) => l.level === "error")!;
      assert.equal(crash.message, "forms was killed by SIGKILL: restarting it");
      assert.deepEqual([crash.fields.signal, crash.fields.restartInMs], ["SIGKILL", 100]);
      assert.match(String(crash.fields.lastOutput), new RegExp(`forms up, pid ${before}`));

      // Deliberate: no restart, until the test starts it itself. The supervisor decides when the exit has
      // been read to its end, before kill() returns: a crash would have been logged by now.
      await system.kill("webhooks");
      assert.notEqual(system.processes.get("webhooks")!.exitCode ?? system.processes.get("webhooks")!.signalCode, null);
      assert.deepEqual(lines.filter((l) => l.fields.process === "webhooks"), []);
      await system.start("webhooks");
      await system.restart("gateway");
      assert.equal(restarts.length, 1, "kill, start and restart through the handle are not crashes");
    } finally {
      await system.stop();
    }
  });

  it("stops the whole system when a process crash-loops, and says which and why", async () => {
    const { lines, logger } = recordingLogger();
    const policy = { initialDelayMs: 20, maxDelayMs: 40, crashLoopCrashes: 3, crashLoopWindowMs: 60_000 };
    let crashLoop: (error: Error) => void;
    const gaveUp = new Promise<Error>((resolve) => (crashLoop = resolve));
    const system = await start({ logger, supervise: policy, onCrashLoop: (error) => crashLoop(error) }, { CRASHING: "delivery" });
    const pids = [...system.processes.values()].map((child) => child.pid!);
    const error = await gaveUp;
    assert.match(error.message, /^delivery exited with code 3 and crash-loops: it crashed 3 times within 60 s; stopping everything/);
    assert.match(error.message, /delivery failing: boom/);
    assert.deepEqual(
      lines.filter((l) => l.level === "error").map((l) => l.fields.restartInMs),
      [20, 40],
    );
    assert.equal(lines.filter((l) => l.level === "fatal").length, 1);
    // Everything was stopped before onCrashLoop was called: the first processes and the restarted ones.
    await Promise.all([...pids, ...[...system.processes.values()].map((child) => child.pid!)].map(exitOf));
  });

  it("leaves a crashed process down when supervision is off", async () => {
    const { lines, logger } = recordingLogger();
    const system = await start({ logger, supervise: false }, { CRASHING: "identity" });
    try {
      const crashed = system.processes.get("identity")!;
      if (crashed.exitCode === null) await once(crashed, "exit");
      assert.equal(crashed.exitCode, 3);
      assert.equal(system.processes.get("identity"), crashed, "not started again");
      assert.deepEqual(lines, []);
    } finally {
      await system.stop();
    }
  });

  it("fails the start with the crash-loop error when a process crash-loops while the system still starts", async () => {
    const { logger } = recordingLogger();
    let crashLoops = 0;
    // The gateway takes its time, so delivery crash-loops before the system is up.
    delayReady(root, "gateway", 5_000);
    try {
      const starting = start(
        { logger, supervise: { initialDelayMs: 20, maxDelayMs: 40, crashLoopCrashes: 3 }, onCrashLoop: () => crashLoops++ },
        { CRASHING: "delivery" },
      );
      await assert.rejects(starting, /^Error: delivery exited with code 3 and crash-loops: it crashed 3 times within 60 s; stopping everything/);
      assert.equal(crashLoops, 0, "reported once, by the rejection");
    } finally {
      delayReady(root, "gateway", 0);
    }
  });

  it("waits as long as it takes for a restarted process to be ready, and rejects restart waiters when stopped", async () => {
    const { lines, logger } = recordingLogger();
    // 2 s to be ready at the start; the restarted one takes 3 s (as if waiting for its database).
    const system = await start({ logger, readyTimeoutMs: 2_000, supervise: { initialDelayMs: 20 } });
    try {
      delayReady(root, "forms", 3_000);
      const restarted = system.nextRestart("forms");
      process.kill(system.processes.get("forms")!.pid!, "SIGKILL");
      const event = await restarted;
      assert.ok(event.downMs >= 3_000, `down ${event.downMs} ms`);
      assert.equal(lines.filter((l) => l.level === "error").length, 1, "one crash, no timeout counted as another");

      const waiting = assert.rejects(system.nextRestart("webhooks"), /the system stopped/);
      await system.stop();
      await waiting;
      await assert.rejects(system.nextRestart("webhooks"), /the system stopped/);
    } finally {
      delayReady(root, "forms", 0);
      await system.stop();
    }
  });
});
