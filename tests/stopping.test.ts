import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Agent, request, type IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { clusterProcesses } from "@formsvc/launcher/embedded-postgres.ts";
import { freeSystemPorts } from "@formsvc/launcher/ports.ts";
import { repoRoot } from "@formsvc/launcher/system.ts";
import { descendantsOf, isRunning, killLauncher, launch, type Launched } from "@formsvc/launcher/testing/launched.ts";
import { stopTimeoutMs } from "@formsvc/platform/stopping.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";

// `npm start` (its entry, on embedded Postgres in a fresh DATA_DIR) stopped and broken the ways an operator and
// the machine do it: the embedded Postgres SIGKILLed (restarted alone; the rest waits and heals), SIGTERM under a
// steady load of keep-alive respondents (every request the gateway accepted is answered, and every 2xx is
// stored), and the launcher itself SIGKILLed (its Postgres does not outlive it).

let dataDir: string;
let env: Record<string, string>;
let launched: Launched | undefined;
let base: string;
let key: string;
let workspaceId: string;

const clusterDir = () => join(dataDir, "postgres");
const postmasterPid = () => Number(readFileSync(join(clusterDir(), "postmaster.pid"), "utf8").split("\n")[0]);
const alive = isRunning;

async function cli(...args: string[]): Promise<any> {
  const { stdout } = await promisify(execFile)(process.execPath, [join(repoRoot, "packages/cli/src/main.ts"), ...args], { env });
  return JSON.parse(stdout);
}

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function publishedForm(name: string): Promise<string> {
  const form = await api("POST", "/forms", { workspaceId, name, document: { blocks: [{ id: "n", key: "n", type: "NUMBER", question: "Number" }] } });
  assert.equal(form.status, 201, JSON.stringify(form.body));
  await cli("form:publish", "--id", form.body.id);
  return form.body.id;
}

async function listedIds(formId: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let page = 1; ; page++) {
    const res = await api("GET", `/forms/${formId}/submissions?limit=100&page=${page}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    for (const item of res.body.items) ids.add(item.id);
    if (!res.body.hasMore) return ids;
  }
}

/** The pids of the services and the gateway under the launcher. */
function systemPids(): number[] {
  return descendantsOf(launched!.child.pid!)
    .filter((p) => /\/services\/\w+\/src\/server\.ts|\/gateway\/src\/server\.ts/.test(p.cmdline))
    .map((p) => p.pid)
    .sort((a, b) => a - b);
}

interface Posted {
  status: number;
  /** The error's code when no answer came (ECONNREFUSED, ECONNRESET, ...). */
  error?: string;
  /** Whether the request went on a connection that had carried an earlier one. */
  reusedSocket: boolean;
  connection?: string;
  responseId?: string;
  startedAt: number;
  endedAt: number;
}

/** Posts one hosted response on `agent`'s keep-alive connection; `hold`, when given, delays the second half of the body. */
function postResponse(formId: string, n: number, agent: Agent, hold?: Promise<unknown>): Promise<Posted> {
  const body = Buffer.from(JSON.stringify({ answers: { n }, completed: true }));
  const startedAt = performance.now();
  return new Promise((resolve) => {
    const req = request(
      { host: "127.0.0.1", port: new URL(base).port, path: `/f/${formId}/responses`, method: "POST", agent, headers: { "content-type": "application/json", "content-length": body.length } },
      (res: IncomingMessage) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => {
          let responseId: string | undefined;
          try {
            responseId = JSON.parse(text).responseId;
          } catch {}
          resolve({ status: res.statusCode!, reusedSocket: req.reusedSocket, connection: res.headers.connection, responseId, startedAt, endedAt: performance.now() });
        });
        res.on("error", (err: NodeJS.ErrnoException) => resolve({ status: 0, error: err.code ?? err.message, reusedSocket: req.reusedSocket, startedAt, endedAt: performance.now() }));
      },
    );
    req.on("error", (err: NodeJS.ErrnoException) => resolve({ status: 0, error: err.code ?? err.message, reusedSocket: req.reusedSocket, startedAt, endedAt: performance.now() }));
    if (!hold) return void req.end(body);
    req.write(body.subarray(0, 10));
    void hold.then(() => req.end(body.subarray(10)));
  });
}

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "formsvc-stopping-"));
  env = {
    ...(process.env as Record<string, string>),
    ...(await freeSystemPorts()),
    DATA_DIR: dataDir,
    DATABASE_URL: "",
    SECRET_KEY: "",
    PUBLIC_URL: "",
    LOG_FORMAT: "",
    LOG_LEVEL: "info",
    KAFKA_BROKERS: "",
    REDIS_URL: "",
    RATE_LIMIT_PER_IP: "1000000",
    RATE_LIMIT_PER_KEY: "1000000",
    RESPONSE_RATE_PER_IP: "1000000",
  };
  delete env.NODE_TEST_CONTEXT;
  launched = await launch(env);
  base = `http://127.0.0.1:${env.PORT}`;
  const created = await cli("user:create", "--email", "stopping@example.com");
  workspaceId = created.workspace.id;
  key = (await cli("key:create", "--email", "stopping@example.com", "--name", "stopping")).key;
});

after(() => {
  if (launched) killLauncher(launched.child);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe("stopping and breaking npm start", () => {
  it("a SIGKILL of the embedded Postgres heals without a restart of the rest", { timeout: 180_000 }, async (t) => {
    const formId = await publishedForm("Postgres killed");
    const pids = systemPids();
    assert.equal(pids.length, 6, "five services and the gateway");
    const killed = postmasterPid();
    const killedAt = performance.now();
    process.kill(killed, "SIGKILL");

    // Started again by the launcher on its port and data.
    await eventuallyPasses(async () => launched!.output(), (out) => out.includes("the embedded Postgres restarted"), 120_000, 50);
    const restartedSeconds = (performance.now() - killedAt) / 1000;
    assert.notEqual(postmasterPid(), killed);
    assert.ok(alive(postmasterPid()));
    // The system answers again by itself, and a response submitted now is stored.
    const answered = await eventuallyPasses(
      () =>
        fetch(`${base}/f/${formId}/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ answers: { n: 1 }, completed: true }) })
          .then(async (res) => ({ status: res.status, body: (await res.json()) as { responseId?: string } }))
          .catch((err: Error) => ({ status: 0, body: { error: String(err) } as { responseId?: string } })),
      (r) => r.status === 200,
      120_000,
      50,
    );
    const servedSeconds = (performance.now() - killedAt) / 1000;
    assert.ok((await listedIds(formId)).has(answered.body.responseId!), "the response submitted after the restart is stored");
    assert.deepEqual(systemPids(), pids, "no service and no gateway was restarted");
    t.diagnostic(`Postgres SIGKILLed: restarted after ${restartedSeconds.toFixed(2)} s, a response stored again after ${servedSeconds.toFixed(2)} s`);
  });

  it("a SIGTERM under a steady load answers every request the gateway accepted, and every 2xx is stored", { timeout: 240_000 }, async (t) => {
    const formId = await publishedForm("Stopped under load");
    const gatewayLog = join(dataDir, "logs", "gateway.log");
    const results: Posted[] = [];
    let sigtermAt = Infinity;
    let stop = false;
    // Respondents, each on its own keep-alive connection, posting one response after another.
    const loops = Array.from({ length: 4 }, async (_, loop) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        for (let i = 0; !stop; i++) {
          const posted = await postResponse(formId, loop * 100_000 + i, agent);
          results.push(posted);
          // The gateway no longer takes connections: this respondent would go to another replica, or come back.
          if (posted.status === 0 && !posted.reusedSocket) return;
        }
      } finally {
        agent.destroy();
      }
    });
    // And one slow respondent, whose request is half sent when the launcher is asked to stop.
    const slowAgent = new Agent({ keepAlive: true, maxSockets: 1 });
    let gatewayStopping!: () => void;
    const drainBegun = new Promise<void>((resolve) => (gatewayStopping = resolve));
    try {
      await eventuallyPasses(async () => results.filter((r) => r.status === 200).length, (n) => n >= 40, 60_000, 50);
      // Its connection is one the gateway has accepted: a first request went on it.
      assert.equal((await postResponse(formId, 900_001, slowAgent)).status, 200);
      const slow = postResponse(formId, 900_002, slowAgent, drainBegun);

      sigtermAt = performance.now();
      launched!.child.kill("SIGTERM");
      // The rest of the slow body once the gateway is draining.
      await eventuallyPasses(async () => (existsSync(gatewayLog) ? readFileSync(gatewayLog, "utf8") : ""), (text) => text.includes('"msg":"gateway stopping"'), 30_000, 20);
      gatewayStopping();
      const slowAnswer = await slow;
      assert.equal(slowAnswer.status, 200, JSON.stringify(slowAnswer));
      assert.equal(slowAnswer.connection, "close");
      results.push(slowAnswer);

      const exit = await launched!.exit;
      const stopSeconds = (performance.now() - sigtermAt) / 1000;
      assert.deepEqual(exit, { code: 0, signal: null }, launched!.output());
      assert.ok(stopSeconds < stopTimeoutMs / 1000, `stopped within the launcher's own timer (${stopSeconds.toFixed(1)} s)`);
      stop = true;
      await Promise.all(loops);
      launched = undefined;

      const inFlight = results.filter((r) => r.startedAt < sigtermAt && r.endedAt > sigtermAt);
      const afterSigterm = results.filter((r) => r.startedAt >= sigtermAt);
      const statuses = (list: Posted[]) => list.reduce<Record<string, number>>((acc, r) => ((acc[r.error ?? r.status] = (acc[r.error ?? r.status] ?? 0) + 1), acc), {});
      t.diagnostic(
        `SIGTERM: stopped in ${stopSeconds.toFixed(1)} s; ${results.length} requests; in flight at SIGTERM: ${inFlight.length} ${JSON.stringify(statuses(inFlight))}; sent after: ${afterSigterm.length} ${JSON.stringify(statuses(afterSigterm))}`,
      );
      assert.ok(inFlight.length >= 1, "some requests were in flight at SIGTERM");
      assert.ok(inFlight.every((r) => r.status === 200), JSON.stringify(inFlight));
      // Nothing the gateway had accepted failed: a failure is only a new connection it no longer took.
      const failed = results.filter((r) => r.status !== 200);
      assert.deepEqual(failed.filter((r) => r.status !== 0 || r.reusedSocket || !["ECONNREFUSED", "ECONNRESET", "EPIPE"].includes(r.error!)), [], "no 5xx, no reset of an accepted request");
    } finally {
      stop = true;
      gatewayStopping();
      slowAgent.destroy();
      await Promise.all(loops);
    }

    // Started again on the same data: every 2xx is stored, and nothing else (a refused request stored nothing).
    launched = await launch(env);
    const stored = results.filter((r) => r.status === 200).map((r) => r.responseId!);
    const listed = await listedIds(formId);
    assert.deepEqual(stored.filter((id) => !listed.has(id)), [], "every response answered 2xx is stored");
    assert.equal(listed.size, stored.length + 1, "and only those (and the slow respondent's first)");
  });

  it("a SIGKILL of the launcher leaves no Postgres behind", { timeout: 120_000 }, async (t) => {
    assert.ok(launched, "the system runs (started again by the test before)");
    const postgres = postmasterPid();
    assert.ok(alive(postgres));
    const pids = systemPids();
    const killedAt = performance.now();
    launched.child.kill("SIGKILL");
    await launched.exit;
    await eventuallyPasses(async () => alive(postgres), (up) => !up, 60_000, 50);
    const goneSeconds = (performance.now() - killedAt) / 1000;
    await eventuallyPasses(async () => clusterProcesses(clusterDir()), (left) => left.length === 0, 60_000, 50);
    await eventuallyPasses(async () => pids.filter(alive), (left) => left.length === 0, 60_000, 50);
    launched = undefined;
    t.diagnostic(`launcher SIGKILLed: its Postgres was gone after ${goneSeconds.toFixed(2)} s`);
  });
});
