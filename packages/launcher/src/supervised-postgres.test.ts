import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { createLogger } from "@formsvc/platform/logger.ts";
import { eventually } from "@formsvc/platform/testing/eventually.ts";
import { clusterProcesses } from "./embedded-postgres.ts";
import { freePort } from "./ports.ts";
import { startSupervisedPostgres, type PostgresRestart } from "./supervised-postgres.ts";
import { isRunning } from "./testing/launched.ts";

// The embedded Postgres as the launcher runs it: restarted on its port and data when it is killed, and never
// outliving the process that started it, even one killed by SIGKILL.

let dataDir: string;
before(() => {
  dataDir = mkdtempSync(join(tmpdir(), "formsvc-supervised-postgres-"));
});
after(() => rmSync(dataDir, { recursive: true, force: true }));

const alive = isRunning;

async function selectOne(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query("select 1 as one")).rows[0].one;
  } finally {
    await client.end();
  }
}

describe("the supervised embedded Postgres", () => {
  it("is restarted on its port and data after a SIGKILL", { timeout: 180_000 }, async (t) => {
    let restarted!: (event: PostgresRestart) => void;
    const restart = new Promise<PostgresRestart>((resolve) => (restarted = resolve));
    const crashLoops: Error[] = [];
    const postgres = await startSupervisedPostgres({
      dataDir,
      database: "supervised",
      port: await freePort(),
      logger: createLogger("launcher", "silent"),
      onRestart: (event) => restarted(event),
      onCrashLoop: (error) => crashLoops.push(error),
    });
    try {
      assert.equal(await selectOne(postgres.databaseUrl), 1);
      const killed = postgres.current().process.pid!;
      process.kill(killed, "SIGKILL");
      const event = await restart;
      assert.equal(event.signal, "SIGKILL");
      assert.notEqual(event.pid, killed);
      assert.equal(postgres.current().port, postgres.port);
      assert.equal(await selectOne(postgres.databaseUrl), 1);
      assert.deepEqual(crashLoops, []);
      t.diagnostic(`restarted ${event.delayMs} ms after the SIGKILL, accepting connections after ${event.downMs} ms`);
    } finally {
      await postgres.stop();
    }
    assert.deepEqual(clusterProcesses(join(dataDir, "postgres")), [], "stopped: nothing runs in the cluster");
  });

  it("stops when the process that started it is SIGKILLed", { timeout: 180_000 }, async () => {
    const script = `
      const { startEmbeddedPostgres } = await import(${JSON.stringify(join(import.meta.dirname, "embedded-postgres.ts"))});
      const postgres = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)}, database: "supervised", port: ${await freePort()} });
      console.log(JSON.stringify({ pid: postgres.process.pid }));
      setInterval(() => {}, 1000);
    `;
    const launcher = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      const [line] = (await once(launcher.stdout!, "data")) as [Buffer];
      const { pid } = JSON.parse(line.toString()) as { pid: number };
      assert.ok(alive(pid));
      launcher.kill("SIGKILL");
      await eventually(() => !alive(pid), 60_000, "the postmaster to exit");
      await eventually(() => clusterProcesses(join(dataDir, "postgres")).length === 0, 60_000, "every process of the cluster to exit");
    } finally {
      launcher.kill("SIGKILL");
    }
  });
});
