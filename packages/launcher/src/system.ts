import { fork, type ChildProcess } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, type WriteStream } from "node:fs";
import { join, relative, resolve } from "node:path";
import { createInterface } from "node:readline";
import { loadConfig, serviceNames } from "@formsvc/platform/config.ts";
import { freePorts } from "./ports.ts";

/** The root of the repository (this file is packages/launcher/src/system.ts). */
export const repoRoot = resolve(import.meta.dirname, "../../..");

const readyTimeoutMs = 30_000;
const stopTimeoutMs = 10_000;
const tailLines = 40;

export interface SystemOptions {
  /**
   * Environment of the processes, over `process.env` (an empty value means the default, so a
   * variable of the parent is "unset" by passing ""). It decides the ports: PORT and <NAME>_URL.
   */
  env: Record<string, string>;
  /** Working directory of the processes; the repository root by default. */
  cwd?: string;
  /** When given, each process's output goes to `<logDir>/<name>.log` instead of this process's stdout. */
  logDir?: string;
  /** Where `services/<name>/src/server.ts` and `gateway/src/server.ts` are; the repository by default. */
  root?: string;
  /** Called when a process exits that was neither stopped nor killed through this handle. */
  onUnexpectedExit?: (name: string, code: number | null, signal: NodeJS.Signals | null) => void;
  /** Aborting stops whatever has been started and makes a pending `startSystem` reject. */
  signal?: AbortSignal;
  /**
   * Processes per name (1 when absent), e.g. `{ gateway: 2, submissions: 2, delivery: 2 }`. Replica k > 1
   * is named `<name>#k` and listens on a free port of its own (its metrics on that port + 1000). Gateway
   * replica k reaches replica k of each replicated service (wrapping around), the only one at its address.
   */
  replicas?: Partial<Record<string, number>>;
}

export interface RunningSystem {
  /** Where the gateway listens, e.g. `http://127.0.0.1:8080`. */
  gatewayUrl: string;
  /** Where each gateway replica listens: `gateway`, `gateway#2`, ... in order. */
  gatewayUrls: string[];
  /** The current process of each name (every service name, then "gateway"). */
  processes: Map<string, ChildProcess>;
  /** The port each process reported when it became ready. */
  ports: Map<string, number>;
  /** Stops the gateway, then the services: SIGTERM, SIGKILL after 10 s. Safe to call twice. */
  stop(): Promise<void>;
  /** Sends `signal` (SIGKILL by default) to one process and waits until it has exited. */
  kill(name: string, signal?: NodeJS.Signals): Promise<void>;
  /** Starts one process again (after `kill`) and waits until it is ready. */
  start(name: string): Promise<ChildProcess>;
  /** `kill(name, signal)` (SIGTERM by default), then `start(name)`. */
  restart(name: string, signal?: NodeJS.Signals): Promise<ChildProcess>;
  /** The last lines a process printed (stdout and stderr), for failure messages. */
  outputTail(name: string): string;
}

/** The name of a process without its replica number: `delivery#2` -> `delivery`. */
export function baseNameOf(name: string): string {
  return name.split("#")[0];
}

/** The entry file of a process: `services/<name>/src/server.ts` or `gateway/src/server.ts`. */
export function entryOf(name: string, root = repoRoot): string {
  name = baseNameOf(name);
  return name === "gateway" ? join(root, "gateway/src/server.ts") : join(root, "services", name, "src/server.ts");
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Settles when a child has exited and its output has been read to the end ("close"). */
const closed = new WeakMap<ChildProcess, Promise<void>>();

function waitForExit(child: ChildProcess): Promise<void> {
  return closed.get(child) ?? (exited(child) ? Promise.resolve() : new Promise((resolve) => child.once("exit", () => resolve())));
}

/** SIGTERM, then SIGKILL when the process is still there after `timeoutMs`. */
async function terminate(child: ChildProcess, timeoutMs = stopTimeoutMs): Promise<void> {
  if (exited(child)) return;
  child.kill("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const forced = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      child.kill("SIGKILL");
      resolve();
    }, timeoutMs);
  });
  await Promise.race([waitForExit(child), forced]);
  clearTimeout(timer);
  await waitForExit(child);
}

/**
 * Starts every service (in parallel), waits until each has reported `{ready}` over IPC, then
 * starts the gateway the same way. On any failure, whatever was started is stopped again.
 */
export async function startSystem(options: SystemOptions): Promise<RunningSystem> {
  if (options.signal?.aborted) throw new Error("starting the system was aborted");
  const root = options.root ?? repoRoot;
  const env: Record<string, string> = { ...(process.env as Record<string, string>), ...options.env };
  // A system started from a test file must not think it is a test process itself.
  delete env.NODE_TEST_CONTEXT;
  const config = loadConfig(env);
  // Each replica's own environment: its address, and for a gateway the replicas it talks to.
  const replicaCount = (name: string) => Math.max(1, Math.floor(options.replicas?.[name] ?? 1));
  const namesOf = (name: string) => Array.from({ length: replicaCount(name) }, (_, i) => (i === 0 ? name : `${name}#${i + 1}`));
  const serviceProcesses = serviceNames.flatMap(namesOf);
  const gatewayProcesses = namesOf("gateway");
  const envOf = new Map<string, Record<string, string>>();
  const extra = [...serviceProcesses, ...gatewayProcesses].filter((n) => n.includes("#"));
  const extraPorts = extra.length ? await freePorts(extra.length) : [];
  extra.forEach((name, i) => {
    const base = baseNameOf(name);
    const own = base === "gateway" ? { PORT: String(extraPorts[i]) } : { [`${base.toUpperCase()}_URL`]: `http://127.0.0.1:${extraPorts[i]}` };
    envOf.set(name, own);
  });
  const addressOf = (name: string) => envOf.get(name)?.[`${baseNameOf(name).toUpperCase()}_URL`] ?? config.services[baseNameOf(name) as (typeof serviceNames)[number]];
  gatewayProcesses.forEach((gateway, k) => {
    const own = { ...envOf.get(gateway) };
    for (const service of serviceNames) {
      const replicas = namesOf(service);
      if (replicas.length > 1) own[`${service.toUpperCase()}_URL`] = addressOf(replicas[k % replicas.length]);
    }
    envOf.set(gateway, own);
  });
  if (options.logDir) mkdirSync(options.logDir, { recursive: true });

  const processes = new Map<string, ChildProcess>();
  const ports = new Map<string, number>();
  const tails = new Map<string, string[]>();
  const logFiles = new Map<string, WriteStream>();
  /** Processes whose exit is expected: being stopped or killed through this handle. */
  const expectedExits = new Set<ChildProcess>();
  let stopping = false;

  const record = (name: string, line: string) => {
    const tail = tails.get(name) ?? [];
    tail.push(line);
    if (tail.length > tailLines) tail.shift();
    tails.set(name, tail);
  };
  const outputTail = (name: string) => (tails.get(name) ?? []).join("\n") || "(nothing)";

  const pipeLines = (name: string, stream: NodeJS.ReadableStream | null, to: NodeJS.WritableStream) => {
    if (!stream) return;
    createInterface({ input: stream, crlfDelay: Infinity }).on("line", (line) => {
      record(name, line);
      const file = logFiles.get(name);
      if (!file) to.write(line + "\n");
      else if (!file.writableEnded) file.write(line + "\n");
    });
  };

  const spawnProcess = (name: string): Promise<ChildProcess> => {
    const entry = entryOf(name, root);
    if (!existsSync(entry)) {
      return Promise.reject(new Error(`cannot start ${name}: ${relative(process.cwd(), entry) || entry} does not exist`));
    }
    if (options.logDir && !logFiles.has(name)) {
      logFiles.set(name, createWriteStream(join(options.logDir, `${name}.log`), { flags: "a" }));
    }
    const child = fork(entry, [], {
      cwd: options.cwd ?? root,
      env: { ...env, ...envOf.get(name) },
      execPath: process.execPath,
      execArgv: [],
      stdio: ["ignore", "pipe", "pipe", "ipc"],
      // Its own process group: a Ctrl-C in the terminal reaches only the launcher, which stops
      // the processes in order. A launcher that dies anyway closes the IPC channel, and a
      // service exits when that happens (see runService).
      detached: true,
    });
    closed.set(child, new Promise((resolve) => child.once("close", () => resolve())));
    processes.set(name, child);
    pipeLines(name, child.stdout, process.stdout);
    pipeLines(name, child.stderr, process.stderr);

    let ready = false;
    child.once("exit", (code, signal) => {
      if (ready && !stopping && !expectedExits.has(child)) options.onUnexpectedExit?.(name, code, signal);
    });

    return new Promise<ChildProcess>((resolvePromise, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const settle = (err?: Error) => {
        clearTimeout(timer);
        child.off("message", onMessage);
        child.off("exit", onEarlyExit);
        options.signal?.removeEventListener("abort", onAbort);
        if (err) {
          expectedExits.add(child);
          void terminate(child, 2_000);
          reject(err);
        } else {
          ready = true;
          resolvePromise(child);
        }
      };
      const onMessage = (message: unknown) => {
        const m = message as { ready?: string; port?: number } | null;
        if (m?.ready !== baseNameOf(name)) return;
        if (typeof m.port === "number") ports.set(name, m.port);
        settle();
      };
      // Once its output is read to the end, so that the message can quote the cause.
      const onEarlyExit = (code: number | null, signal: NodeJS.Signals | null) =>
        void waitForExit(child).then(() => {
          const how = signal ? `by ${signal}` : `with code ${code}`;
          settle(new Error(`${name} exited ${how} before it was ready; its last output:\n${outputTail(name)}`));
        });
      const onAbort = () => settle(new Error(`starting ${name} was aborted`));
      child.on("message", onMessage);
      child.once("exit", onEarlyExit);
      options.signal?.addEventListener("abort", onAbort, { once: true });
      timer = setTimeout(
        () => settle(new Error(`${name} did not report ready within ${readyTimeoutMs / 1000} s; its last output:\n${outputTail(name)}`)),
        readyTimeoutMs,
      );
      if (options.signal?.aborted) onAbort();
    });
  };

  const stopAll = async () => {
    stopping = true;
    const stopOne = async (name: string) => {
      const child = processes.get(name);
      if (!child) return;
      expectedExits.add(child);
      await terminate(child);
    };
    // The edge first, so nothing new comes in while the services finish what they are doing.
    await Promise.all(gatewayProcesses.map(stopOne));
    await Promise.all(serviceProcesses.map(stopOne));
    await Promise.all([...logFiles.values()].map((file) => new Promise((done) => file.end(done))));
  };

  try {
    await Promise.all(serviceProcesses.map(spawnProcess));
    await Promise.all(gatewayProcesses.map(spawnProcess));
  } catch (err) {
    await stopAll();
    throw err;
  }

  const kill = async (name: string, signal: NodeJS.Signals = "SIGKILL") => {
    const child = processes.get(name);
    if (!child) throw new Error(`no process named ${name}`);
    expectedExits.add(child);
    if (!exited(child)) child.kill(signal);
    await waitForExit(child);
  };

  const start = async (name: string) => {
    const current = processes.get(name);
    if (current && !exited(current)) throw new Error(`${name} is still running`);
    return spawnProcess(name);
  };

  let stopped: Promise<void> | undefined;
  return {
    gatewayUrl: `http://127.0.0.1:${ports.get("gateway") ?? config.port}`,
    gatewayUrls: gatewayProcesses.map((g) => `http://127.0.0.1:${ports.get(g) ?? envOf.get(g)?.PORT ?? config.port}`),
    processes,
    ports,
    stop: () => (stopped ??= stopAll()),
    kill,
    start,
    restart: async (name, signal = "SIGTERM") => {
      await kill(name, signal);
      return start(name);
    },
    outputTail,
  };
}
