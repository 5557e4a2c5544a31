import { fork, type ChildProcess } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, type WriteStream } from "node:fs";
import { join, relative, resolve } from "node:path";
import { createInterface } from "node:readline";
import { loadConfig, serviceNames } from "@formsvc/platform/config.ts";
import { createLogger, type Logger } from "@formsvc/platform/logger.ts";
import { stopTimeoutMs } from "@formsvc/platform/stopping.ts";
import { freePorts } from "./ports.ts";
import { decideRestart, defaultRestartPolicy, noCrashes, type CrashHistory, type RestartPolicy } from "./supervision.ts";

/** The root of the repository (this file is packages/launcher/src/system.ts). */
export const repoRoot = resolve(import.meta.dirname, "../../..");

/** How long a process may take to report ready when the system starts (not when the supervisor restarts it). */
const defaultReadyTimeoutMs = 30_000;
const tailLines = 40;
/** Lines of a crashed process's output quoted in the launcher's log, each cut to so many characters. */
const crashTailLines = 10;
const crashLineChars = 300;

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
  /**
   * How long each process may take to report ready at the start of the system and on `start` (30 s by
   * default); past it, it is stopped and starting fails. A process the supervisor restarts has no such
   * limit: alive, it may be waiting for its database, by design, however long that is down.
   */
  readyTimeoutMs?: number;
  /**
   * Crashed processes are restarted with backoff, and one that crash-loops stops the whole system
   * (`defaultRestartPolicy`, with these numbers over it); `false` leaves a crashed process down.
   */
  supervise?: false | Partial<RestartPolicy>;
  /** Called once a crashed process has been restarted by the supervisor and is ready again. */
  onRestart?: (event: RestartEvent) => void;
  /**
   * Called when the supervisor gave up on a crash-looping process, after it stopped the system. One that
   * crash-loops while the system is still starting makes `startSystem` reject with that error instead.
   */
  onCrashLoop?: (error: Error) => void;
  /** Where crashes and restarts are logged; a pino logger named "launcher" when absent. */
  logger?: Logger;
  /** Aborting stops whatever has been started and makes a pending `startSystem` reject. */
  signal?: AbortSignal;
  /**
   * Processes per name (1 when absent), e.g. `{ gateway: 2, submissions: 2, delivery: 2 }`. Replica k > 1
   * is named `<name>#k` and listens on a free port of its own (its metrics on that port + 1000). Gateway
   * replica k reaches replica k of each replicated service (wrapping around), the only one at its address.
   */
  replicas?: Partial<Record<string, number>>;
}

/** A crashed process the supervisor has restarted. */
export interface RestartEvent {
  name: string;
  /** How the crashed process ended. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The pause before this restart (ms). */
  delayMs: number;
  /** From the crash to the new process's readiness (ms). */
  downMs: number;
  /** Crashes of this name within the crash-loop window, this one included. */
  recentCrashes: number;
  pid: number;
}

export interface RunningSystem {
  /** Where the gateway listens, e.g. `http://127.0.0.1:8080`. */
  gatewayUrl: string;
  /** Where each gateway replica listens: `gateway`, `gateway#2`, ... in order. */
  gatewayUrls: string[];
  /** The current process of each name (every service name, then "gateway"; with ONE_PROCESS only "formsvc"). */
  processes: Map<string, ChildProcess>;
  /** The port each process reported when it became ready. */
  ports: Map<string, number>;
  /**
   * Stops the gateway, then the services: SIGTERM, SIGKILL after stopTimeoutMs (25 s; each process finishes its
   * requests within 20 s and exits by itself within 23 s: @formsvc/platform/stopping.ts). Safe to call twice.
   */
  stop(): Promise<void>;
  /** Sends `signal` (SIGKILL by default) to one process and waits until it has exited. */
  kill(name: string, signal?: NodeJS.Signals): Promise<void>;
  /** Starts one process again (after `kill`) and waits until it is ready. */
  start(name: string): Promise<ChildProcess>;
  /** `kill(name, signal)` (SIGTERM by default), then `start(name)`. */
  restart(name: string, signal?: NodeJS.Signals): Promise<ChildProcess>;
  /** The last lines a process printed (stdout and stderr), for failure messages. */
  outputTail(name: string): string;
  /**
   * Resolves at the next restart of `name` by the supervisor (after a crash, not after `kill`/`start`);
   * rejects when the system stops (or crash-loops) first.
   */
  nextRestart(name: string): Promise<RestartEvent>;
}

/** The name of a process without its replica number: `delivery#2` -> `delivery`. */
export function baseNameOf(name: string): string {
  return name.split("#")[0];
}

/** The one process that hosts every service and the gateway when ONE_PROCESS is on. */
export const oneProcessName = "formsvc";

/** The entry file of a process: `services/<name>/src/server.ts`, `gateway/src/server.ts` or the one process's. */
export function entryOf(name: string, root = repoRoot): string {
  name = baseNameOf(name);
  if (name === oneProcessName) return join(root, "packages/launcher/src/one-process.ts");
  return name === "gateway" ? join(root, "gateway/src/server.ts") : join(root, "services", name, "src/server.ts");
}

/** Where the processes keep Node's compile cache unless NODE_COMPILE_CACHE says (`NODE_DISABLE_COMPILE_CACHE=1`: none). */
export function compileCacheDir(root = repoRoot): string {
  return join(root, "node_modules", ".cache", "node-compile");
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Settles when a child has exited and its output has been read to the end ("close"). */
const closed = new WeakMap<ChildProcess, Promise<void>>();

function waitForExit(child: ChildProcess): Promise<void> {
  return closed.get(child) ?? (exited(child) ? Promise.resolve() : new Promise((resolve) => child.once("exit", () => resolve())));
}

/** SIGTERM, then SIGKILL when the process is still there after `timeoutMs` (longer than it takes to stop by itself). */
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
  // Node's compile cache keeps each source's type-stripped text and V8 code: from the second start on, a
  // process neither loads the TypeScript stripper (~18 MiB resident each) nor compiles from scratch.
  env.NODE_COMPILE_CACHE ||= compileCacheDir(root);
  // glibc gives each thread that allocates its own arena (up to 8 per core) and seldom hands their free pages
  // back. A Node process allocates mostly on its main thread (V8's heap is not malloc's): with one arena six idle
  // processes hold ~23 MiB less than with the default and ~8 less than with two, at ingest's throughput (±1 %).
  env.MALLOC_ARENA_MAX ||= "1";
  const config = loadConfig(env);
  // Each replica's own environment: its address, and for a gateway the replicas it talks to.
  const replicaCount = (name: string) => Math.max(1, Math.floor(options.replicas?.[name] ?? 1));
  const namesOf = (name: string) => Array.from({ length: replicaCount(name) }, (_, i) => (i === 0 ? name : `${name}#${i + 1}`));
  if (config.oneProcess && Object.values(options.replicas ?? {}).some((n) => (n ?? 1) > 1)) {
    throw new Error("ONE_PROCESS runs one of each service: replicas need a process each");
  }
  // With ONE_PROCESS, the one process stands where the gateway does: started last and stopped first.
  const serviceProcesses = config.oneProcess ? [] : serviceNames.flatMap(namesOf);
  const gatewayProcesses = config.oneProcess ? [oneProcessName] : namesOf("gateway");
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
  const outputTail = (name: string, lines = tailLines) => (tails.get(name) ?? []).slice(-lines).join("\n") || "(nothing)";

  const pipeLines = (name: string, stream: NodeJS.ReadableStream | null, to: NodeJS.WritableStream) => {
    if (!stream) return;
    createInterface({ input: stream, crlfDelay: Infinity }).on("line", (line) => {
      record(name, line);
      const file = logFiles.get(name);
      if (!file) to.write(line + "\n");
      else if (!file.writableEnded) file.write(line + "\n");
    });
  };

  /** Starts `name` and waits until it is ready, at most `readyTimeoutMs` (null: no limit). */
  const spawnProcess = (name: string, readyTimeoutMs: number | null = options.readyTimeoutMs ?? defaultReadyTimeoutMs): Promise<ChildProcess> => {
    // Stopping (a crash loop while the system still starts): nothing new may start behind stopAll's back.
    if (stopping) return Promise.reject(crashLoop ?? new Error(`cannot start ${name}: the system is stopping`));
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
    const spawnedAt = performance.now();
    child.once("exit", (code, signal) => {
      if (!ready || stopping || expectedExits.has(child)) return;
      if (policy) void waitForExit(child).then(() => superviseCrash(name, { code, signal }, spawnedAt, performance.now()));
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
        // The one process reports each service it hosts by its own name, then itself.
        if (name === oneProcessName && m?.ready && typeof m.port === "number") ports.set(m.ready, m.port);
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
      if (readyTimeoutMs !== null) {
        timer = setTimeout(
          () => settle(new Error(`${name} did not report ready within ${readyTimeoutMs / 1000} s; its last output:\n${outputTail(name)}`)),
          readyTimeoutMs,
        );
      }
      if (options.signal?.aborted) onAbort();
    });
  };

  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= stopAll());
  /** Set once every process is ready and `startSystem` is about to resolve. */
  let startupDone = false;
  /** Why the supervisor stopped everything, when a process crash-looped. */
  let crashLoop: Error | undefined;
  const policy = options.supervise === false ? undefined : { ...defaultRestartPolicy, ...options.supervise };
  const logger = options.logger ?? createLogger("launcher");
  const crashHistories = new Map<string, CrashHistory>();
  /** Restarts waiting out their backoff. */
  const pendingRestarts = new Map<string, NodeJS.Timeout>();
  const restartWaiters = new Map<string, { resolve: (event: RestartEvent) => void; reject: (error: Error) => void }[]>();
  const rejectRestartWaiters = (error: Error) => {
    for (const waiter of [...restartWaiters.values()].flat()) waiter.reject(error);
    restartWaiters.clear();
  };
  /** Bumped by each deliberate `kill`/`start` of a name: a restart under way for an older one stands down. */
  const generations = new Map<string, number>();
  const deliberate = (name: string) => {
    generations.set(name, (generations.get(name) ?? 0) + 1);
    clearTimeout(pendingRestarts.get(name));
    pendingRestarts.delete(name);
  };

  /** A ready process died (or its restart failed): restart it after a pause, or stop everything if it crash-loops. */
  const superviseCrash = (name: string, ended: { code: number | null; signal: NodeJS.Signals | null } | { error: Error }, startedAt: number, crashedAt: number) => {
    if (stopping || !policy) return;
    const decision = decideRestart(policy, crashHistories.get(name) ?? noCrashes, startedAt, crashedAt);
    crashHistories.set(name, decision.history);
    const { code = null, signal = null } = "error" in ended ? {} : ended;
    const how = "error" in ended ? `could not be restarted (${ended.error.message.split("\n")[0]})` : signal ? `was killed by ${signal}` : `exited with code ${code}`;
    const lastOutput = outputTail(name, crashTailLines)
      .split("\n")
      .map((line) => (line.length > crashLineChars ? `${line.slice(0, crashLineChars)}…` : line))
      .join("\n");
    if (decision.action === "give-up") {
      const error = new Error(`${name} ${how} and crash-loops: ${decision.reason}; stopping everything. Its last output:\n${lastOutput}`);
      logger.fatal({ process: name, code, signal, lastOutput }, `${name} ${how} and crash-loops (${decision.reason}): stopping everything`);
      crashLoop = error;
      rejectRestartWaiters(error);
      // While the system still starts, startSystem rejects with it instead (see below).
      const started = startupDone;
      void stop().then(() => {
        if (started) options.onCrashLoop?.(error);
      });
      return;
    }
    const recentCrashes = decision.history.crashes.length;
    logger.error({ process: name, code, signal, restartInMs: decision.delayMs, recentCrashes, lastOutput }, `${name} ${how}: restarting it`);
    const generation = generations.get(name) ?? 0;
    const timer = setTimeout(() => {
      pendingRestarts.delete(name);
      const attemptAt = performance.now();
      // Ready whenever it is: alive, it may be waiting for its database (a timeout would count that as a crash).
      spawnProcess(name, null).then(
        (child) => {
          const event = { name, code, signal, delayMs: decision.delayMs, downMs: Math.round(performance.now() - crashedAt), recentCrashes, pid: child.pid! };
          logger.info({ process: name, pid: child.pid, downMs: event.downMs }, `${name} restarted`);
          options.onRestart?.(event);
          for (const waiter of restartWaiters.get(name) ?? []) waiter.resolve(event);
          restartWaiters.delete(name);
        },
        (error: Error) => {
          if (!stopping && generation === (generations.get(name) ?? 0)) superviseCrash(name, { error }, attemptAt, performance.now());
        },
      );
    }, decision.delayMs);
    pendingRestarts.set(name, timer);
  };

  const stopAll = async () => {
    stopping = true;
    for (const timer of pendingRestarts.values()) clearTimeout(timer);
    rejectRestartWaiters(new Error("the system stopped"));
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
    await Promise.all(serviceProcesses.map((name) => spawnProcess(name)));
    await Promise.all(gatewayProcesses.map((name) => spawnProcess(name)));
  } catch (err) {
    await stop();
    // A process the supervisor gave up on: what failed the others is only its consequence.
    throw crashLoop ?? err;
  }
  if (crashLoop) {
    await stop();
    throw crashLoop;
  }
  startupDone = true;

  const kill = async (name: string, signal: NodeJS.Signals = "SIGKILL") => {
    const child = processes.get(name);
    if (!child) throw new Error(`no process named ${name}`);
    deliberate(name);
    expectedExits.add(child);
    if (!exited(child)) child.kill(signal);
    await waitForExit(child);
  };

  const start = async (name: string) => {
    const current = processes.get(name);
    if (current && !exited(current)) throw new Error(`${name} is still running`);
    deliberate(name);
    return spawnProcess(name);
  };

  const gatewayPortOf = (g: string) => ports.get(g === oneProcessName ? "gateway" : g) ?? envOf.get(g)?.PORT ?? config.port;
  return {
    gatewayUrl: `http://127.0.0.1:${ports.get("gateway") ?? config.port}`,
    gatewayUrls: gatewayProcesses.map((g) => `http://127.0.0.1:${gatewayPortOf(g)}`),
    processes,
    ports,
    stop,
    kill,
    start,
    restart: async (name, signal = "SIGTERM") => {
      await kill(name, signal);
      return start(name);
    },
    outputTail,
    nextRestart: (name) =>
      new Promise((resolve, reject) => {
        if (stopping) reject(crashLoop ?? new Error("the system stopped"));
        else restartWaiters.set(name, [...(restartWaiters.get(name) ?? []), { resolve, reject }]);
      }),
  };
}
