import { randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { metricsPortOf, servicePort, serviceNames, type Config } from "@formsvc/platform/config.ts";

/** Whether `port` can be listened on at `host` right now; `host` null means every interface (as the gateway listens). */
export function isPortFree(port: number, host: string | null = "127.0.0.1"): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen({ port, ...(host === null ? {} : { host }), exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A port the system is configured to listen on, and the variable that moves it. */
export interface ConfiguredPort {
  port: number;
  variable: string;
  /** How to set the variable to another port, for the message. */
  example: string;
}

/** Every port `npm start`'s processes listen on: the gateway's, then each service's RPC and metrics ports. */
export function configuredPorts(config: Config, env: Record<string, string | undefined> = process.env): ConfiguredPort[] {
  const ports: ConfiguredPort[] = [{ port: config.port, variable: "PORT", example: `PORT=${config.port + 10}` }];
  for (const name of serviceNames) {
    const rpc = servicePort(config, name);
    const variable = `${name.toUpperCase()}_URL`;
    ports.push({ port: rpc, variable, example: `${variable}=http://127.0.0.1:${rpc + 10}` });
    const metrics = metricsPortOf(config, name, env);
    ports.push({ port: metrics, variable: `${name.toUpperCase()}_METRICS_PORT`, example: `${name.toUpperCase()}_METRICS_PORT=${metrics + 10}` });
  }
  return ports;
}

/**
 * The first configured port something else already listens on, as a one-line message naming the
 * variable to change; undefined when every port is free.
 */
export async function busyPortMessage(config: Config, env: Record<string, string | undefined> = process.env): Promise<string | undefined> {
  for (const { port, variable, example } of configuredPorts(config, env)) {
    const free = variable === "PORT" ? await isPortFree(port, null) : await isPortFree(port, config.listenHost);
    if (!free) return `port ${port} is already in use (${variable}); stop what listens there or choose another port, e.g. ${example} npm start`;
  }
  return undefined;
}

/** The first port of the kernel's ephemeral range (Linux: ip_local_port_range), 32768 where it cannot be read. */
function ephemeralRangeStart(): number {
  try {
    return Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
}

const lowestPickedPort = 10_000;

/** A service's metrics port, by default: its RPC port + 1000 (metricsPortOf). */
const metricsOffset = 1000;

/**
 * `count` distinct ports the system currently has free at `host`, picked at random below the kernel's ephemeral
 * range: a port from that range (what port 0 gives) can be taken between this pick and the bind that uses it, by
 * another test's `listen(0)` or as an outgoing connection's local port (which refuses the listen: EADDRINUSE).
 * With `companionOffset`, each port's companion (port + offset: a service's metrics port) is free too, and held
 * with it, so that no two picks, nor a pick and a companion, coincide.
 */
export async function freePorts(count: number, host = "127.0.0.1", options: { companionOffset?: number } = {}): Promise<number[]> {
  const offset = options.companionOffset;
  const span = ephemeralRangeStart() - metricsOffset - lowestPickedPort;
  // Every server stays open until all are bound, so no port is picked twice.
  const servers: Server[] = [];
  const picked: number[] = [];
  const bind = (port: number) =>
    new Promise<Server | undefined>((resolve) => {
      const server = createServer();
      server.once("error", () => resolve(undefined));
      server.listen({ port, host, exclusive: true }, () => resolve(server));
    });
  try {
    for (let tries = 0; picked.length < count; tries++) {
      if (tries === 1000) throw new Error(`no ${count} free ports found from ${lowestPickedPort} at ${host}`);
      const port = lowestPickedPort + randomInt(span);
      const ports = offset === undefined ? [port] : [port, port + offset];
      const bound = await Promise.all(ports.map(bind));
      servers.push(...bound.filter((server): server is Server => server !== undefined));
      if (bound.every(Boolean)) picked.push(port);
    }
    return picked;
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/** A port the system currently has free at `host`. */
export async function freePort(host = "127.0.0.1"): Promise<number> {
  return (await freePorts(1, host))[0];
}

/**
 * Environment that puts the gateway (`PORT`) and every service (`<NAME>_URL`) on free ports,
 * so that a test's system does not collide with `npm start` or with another test's system.
 */
export async function freeSystemPorts(): Promise<Record<string, string>> {
  // Each service's metrics port (its RPC port + 1000) is free too: another system's pick must not land on it.
  const [gateway, ...services] = await freePorts(1 + serviceNames.length, "127.0.0.1", { companionOffset: metricsOffset });
  const env: Record<string, string> = { PORT: String(gateway) };
  serviceNames.forEach((name, i) => (env[`${name.toUpperCase()}_URL`] = `http://127.0.0.1:${services[i]}`));
  return env;
}
