import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { startEmbeddedPostgres, type EmbeddedPostgres } from "@formsvc/launcher/embedded-postgres.ts";
import { freePort } from "@formsvc/launcher/ports.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { startReceiver } from "./support/receiver.ts";
import { assertStoredAndDelivered, startRespondentLoad } from "./support/respondent-load.ts";
import { createUserWithKey, startTestSystem, type TestSystem } from "./support/system.ts";

// The system on a Postgres of its own (the launcher's embedded one, in a temporary directory), which the
// test stops under load and starts again on the same port and data: the machine's shared Postgres is
// never touched. While it is down the system says so (503s, /readyz); afterwards it serves by itself.

const database = "formsvc";
let dataDir: string;
let postgres: EmbeddedPostgres;
let sys: TestSystem;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

const startPostgres = (port: number) => startEmbeddedPostgres({ dataDir, database, port });

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "formsvc-outage-"));
  postgres = await startPostgres(await freePort());
  receiver = await startReceiver();
  sys = await startTestSystem("database_outage", {
    DATABASE_URL: postgres.databaseUrl,
    WEBHOOK_ALLOW_PRIVATE_URLS: "true",
    WEBHOOK_RETRY_SCHEDULE: "0.2,0.4,0.8,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1",
  });
});
after(async () => {
  await sys?.stop();
  await postgres?.stop();
  await receiver?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const readyz = async () => {
  const res = await fetch(`${sys.url}/readyz`);
  return { status: res.status, body: (await res.json()) as { status: string; services: Record<string, string> } };
};

describe("a database outage under load", () => {
  it("is answered 503 with Retry-After and /readyz not ready, and is over by itself when Postgres returns", { timeout: 300_000 }, async () => {
    const ada = await createUserWithKey(sys, "outage@example.com");
    const form = await ada.api("POST", "/forms", {
      workspaceId: ada.workspace.id,
      name: "Outage",
      document: { blocks: [{ id: "n", key: "n", type: "NUMBER", question: "Number" }] },
    });
    assert.equal(form.status, 201, JSON.stringify(form.body));
    await sys.cli("form:publish", "--id", form.body.id);
    assert.equal((await ada.api("POST", "/webhooks", { formId: form.body.id, url: receiver.url })).status, 201);
    assert.deepEqual((await readyz()).status, 200);

    const load = startRespondentLoad(sys.url, form.body.id);
    let outage: { readyzSeconds: number; apiSeconds: number; downSeconds: number; recoverySeconds: number };
    try {
      await eventuallyPasses(async () => load.stored.length, (n) => n >= 20, 30_000, 100);

      const stoppedAt = performance.now();
      await postgres.stop();
      const notReady = await eventuallyPasses(readyz, (r) => r.status === 503, 30_000, 100);
      const readyzSeconds = (performance.now() - stoppedAt) / 1000;
      assert.equal(notReady.body.status, "not ready");
      assert.ok(Object.values(notReady.body.services).includes("not serving"), JSON.stringify(notReady.body));

      const unavailable = await eventuallyPasses(() => ada.api("GET", "/users/me"), (r) => r.status !== 200, 30_000, 100);
      const apiSeconds = (performance.now() - stoppedAt) / 1000;
      assert.equal(unavailable.status, 503, JSON.stringify(unavailable.body));
      assert.match(unavailable.headers.get("content-type") ?? "", /application\/json/);
      assert.equal(typeof unavailable.body.error, "string");
      assert.match(unavailable.headers.get("retry-after") ?? "", /^\d+$/);
      for (const path of [`/forms/${form.body.id}`, `/forms/${form.body.id}/submissions`, "/forms"]) {
        const res = await ada.api("GET", path);
        assert.equal(res.status, 503, `${path}: ${JSON.stringify(res.body)}`);
      }
      // The operator's CLI says the same, without a stack.
      await assert.rejects(sys.cli("key:list", "--email", "outage@example.com"), /unavailable.*try again/);

      // A process that crashes meanwhile is restarted and waits for its database instead of crash-looping.
      const formsBack = sys.system.nextRestart("forms");
      process.kill(sys.system.processes.get("forms")!.pid!, "SIGKILL");

      // A while down under load, then Postgres comes back on the same port and data.
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      const downSeconds = (performance.now() - stoppedAt) / 1000;
      const port = postgres.port;
      postgres = await startPostgres(port);
      assert.equal(postgres.port, port, "the embedded Postgres came back on its port");
      const restartedAt = performance.now();
      await eventuallyPasses(readyz, (r) => r.status === 200, 60_000, 100);
      assert.equal((await formsBack).recentCrashes, 1);
      await eventuallyPasses(() => ada.api("GET", "/users/me"), (r) => r.status === 200, 30_000, 100);
      const storedBefore = load.stored.length;
      await eventuallyPasses(async () => load.stored.length, (n) => n >= storedBefore + 20, 30_000, 100);
      outage = {
        readyzSeconds: Number(readyzSeconds.toFixed(2)),
        apiSeconds: Number(apiSeconds.toFixed(2)),
        downSeconds: Number(downSeconds.toFixed(2)),
        recoverySeconds: Number(((performance.now() - restartedAt) / 1000).toFixed(2)),
      };
    } finally {
      await load.stop();
    }

    // Respondents were answered 503 JSON with Retry-After while it was down: never a 500, never a hang.
    const failed = load.answers.filter((a) => a.status !== 200);
    const statuses: Record<number, number> = {};
    for (const a of load.answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
    console.log(`database outage figures (seconds from stopping Postgres, recovery from its start): ${JSON.stringify(outage)}; respondent answers by status: ${JSON.stringify(statuses)}`);
    assert.ok(failed.length > 0, "some respondents came during the outage");
    for (const a of failed) {
      assert.equal(a.status, 503, JSON.stringify(a));
      assert.match(a.contentType ?? "", /application\/json/);
      assert.equal(typeof a.body.error, "string");
      assert.match(a.retryAfter ?? "", /^\d+$/);
    }

    // Nothing answered 2xx was lost: stored, listed and delivered.
    await assertStoredAndDelivered(ada.api, form.body.id, load.stored, receiver);
  });
});
