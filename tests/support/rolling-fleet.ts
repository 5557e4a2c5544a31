// The system as Kubernetes runs it during a rolling update: each service and the gateway behind a stable
// address (a TCP proxy, standing in for a Service and kube-proxy) in front of its processes, which listen on
// ports of their own. `roll(name, root)` replaces a process the way a Deployment with maxSurge 1 does: the new
// one (from another tree: the previous release or this one) starts and becomes ready, the address sends new
// connections only to it, and the old one is asked to stop (SIGTERM), finishing what it holds.
import { fork, type ChildProcess } from "node:child_process";
import { createWriteStream, mkdirSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { serviceNames } from "@formsvc/platform/config.ts";
import { stopTimeoutMs } from "@formsvc/platform/stopping.ts";
import { freePorts } from "@formsvc/launcher/ports.ts";
import { compileCacheDir, entryOf } from "@formsvc/launcher/system.ts";

const fleetNames = [...serviceNames, "gateway"] as const;
type FleetName = (typeof fleetNames)[number];

interface Member {
  child: ChildProcess;
  port: number;
  root: string;
}

/** A stable address in front of members that come and go: new connections go round the current ones. */
interface StableAddress {
  port: number;
  members: Member[];
  close(): Promise<void>;
}

async function stableAddress(port: number): Promise<StableAddress> {
  const members: Member[] = [];
  const sockets = new Set<Socket>();
  let turn = 0;
  const server: Server = createServer((client) => {
    const member = members[turn++ % members.length];
    if (!member) return void client.destroy();
    const upstream = connect({ host: "127.0.0.1", port: member.port, noDelay: true });
    client.setNoDelay(true);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.once("close", () => sockets.delete(socket));
    }
    // A half close passes through (HTTP/2's GOAWAY and a drained HTTP/1.1 connection end that way); an error resets both.
    client.pipe(upstream);
    upstream.pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.resetAndDestroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port, host: "127.0.0.1", exclusive: true }, () => resolve());
  });
  return {
    port,
    members,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export interface RollStep {
  name: FleetName;
  /** From the new process's start to its readiness (ms). */
  readyMs: number;
  /** From the old process's SIGTERM to its exit (ms). */
  stoppedMs: number;
  /** How the old process ended. */
  exit: { code: number | null; signal: NodeJS.Signals | null };
}

export interface Fleet {
  /** The gateway's stable address (PUBLIC_URL). */
  url: string;
  /** The environment every process shares (for the CLI): the stable addresses, the database, the secret. */
  env: Record<string, string>;
  /** The tree each name's current process runs from. */
  rootOf(name: FleetName): string;
  /** Replaces `name`'s process with one from `root`: started, ready, given the address, then the old one stopped. */
  roll(name: FleetName, root: string): Promise<RollStep>;
  /** Processes that ended without being asked to (a crash), each with the end of its stderr. */
  unexpectedExits: string[];
  stop(): Promise<void>;
}

/** Every service (then the gateway) from `root`, each behind its stable address; `env` over the shared environment. */
export async function startFleet(options: { root: string; env: Record<string, string>; logDir: string }): Promise<Fleet> {
  mkdirSync(options.logDir, { recursive: true });
  const addressPorts = await freePorts(fleetNames.length);
  const addresses = new Map<FleetName, StableAddress>();
  const url = (port: number) => `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    ...options.env,
    PORT: String(addressPorts[fleetNames.indexOf("gateway")]),
    PUBLIC_URL: url(addressPorts[fleetNames.indexOf("gateway")]),
    MALLOC_ARENA_MAX: "1",
  };
  delete env.NODE_TEST_CONTEXT;
  serviceNames.forEach((name) => (env[`${name.toUpperCase()}_URL`] = url(addressPorts[fleetNames.indexOf(name)])));
  let generation = 0;
  const children = new Set<ChildProcess>();
  const stopping = new Set<ChildProcess>();
  const unexpectedExits: string[] = [];

  /** Starts `name` from `root` on ports of its own and resolves once it reports ready. */
  const spawn = async (name: FleetName, root: string): Promise<Member> => {
    const [port, metricsPort] = await freePorts(2);
    const own: Record<string, string> =
      name === "gateway" ? { PORT: String(port) } : { [`${name.toUpperCase()}_URL`]: url(port), [`${name.toUpperCase()}_METRICS_PORT`]: String(metricsPort) };
    const log = createWriteStream(join(options.logDir, `${name}.${++generation}.log`));
    const child = fork(entryOf(name, root), [], {
      cwd: root,
      env: { ...env, ...own, NODE_COMPILE_CACHE: compileCacheDir(root) },
      execPath: process.execPath,
      execArgv: [],
      stdio: ["ignore", "pipe", "pipe", "ipc"],
      detached: true,
    });
    children.add(child);
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
    let tail = "";
    child.stderr!.on("data", (chunk: Buffer) => (tail = (tail + chunk.toString("utf8")).slice(-3000)));
    child.once("exit", (code, signal) => {
      children.delete(child);
      if (!stopping.has(child)) unexpectedExits.push(`${name} (${root}) exited (${code ?? signal}) at ${new Date().toISOString()}:\n${tail}`);
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${name} (${root}) was not ready within 60 s:\n${tail}`)), 60_000);
      child.on("message", (message: { ready?: string } | null) => {
        if (message?.ready !== name) return;
        clearTimeout(timer);
        resolve();
      });
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`${name} (${root}) exited (${code ?? signal}) before it was ready:\n${tail}`));
      });
    });
    return { child, port, root };
  };

  const stopMember = async (member: Member): Promise<{ code: number | null; signal: NodeJS.Signals | null }> => {
    const { child } = member;
    if (child.exitCode !== null || child.signalCode !== null) return { code: child.exitCode, signal: child.signalCode };
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
    stopping.add(child);
    child.kill("SIGTERM");
    const forced = setTimeout(() => child.kill("SIGKILL"), stopTimeoutMs);
    try {
      return await exited;
    } finally {
      clearTimeout(forced);
    }
  };

  try {
    for (const name of fleetNames) addresses.set(name, await stableAddress(addressPorts[fleetNames.indexOf(name)]));
    // The services together, then the gateway, as the launcher starts them.
    const services = await Promise.all(serviceNames.map((name) => spawn(name, options.root)));
    serviceNames.forEach((name, i) => addresses.get(name)!.members.push(services[i]));
    addresses.get("gateway")!.members.push(await spawn("gateway", options.root));
  } catch (err) {
    for (const child of children) child.kill("SIGKILL");
    await Promise.all([...addresses.values()].map((address) => address.close()));
    throw err;
  }

  return {
    url: env.PUBLIC_URL,
    env,
    unexpectedExits,
    rootOf: (name) => addresses.get(name)!.members.at(-1)!.root,
    async roll(name, root) {
      const address = addresses.get(name)!;
      const started = performance.now();
      const next = await spawn(name, root);
      const readyMs = performance.now() - started;
      const old = address.members.splice(0, address.members.length, next);
      const stopping = performance.now();
      const exits = await Promise.all(old.map(stopMember));
      return { name, readyMs, stoppedMs: performance.now() - stopping, exit: exits[0] };
    },
    async stop() {
      // The gateway first, then the services, as the launcher stops them.
      for (const member of addresses.get("gateway")!.members) await stopMember(member);
      await Promise.all(serviceNames.flatMap((name) => addresses.get(name)!.members.map(stopMember)));
      await Promise.all([...addresses.values()].map((address) => address.close()));
    },
  };
}
