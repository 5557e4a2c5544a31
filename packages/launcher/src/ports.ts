import { createServer } from "node:net";
import { serviceNames } from "@formsvc/platform/config.ts";

/** Whether `port` can be listened on at `host` right now. */
export function isPortFree(port: number, host = "127.0.0.1"): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** `count` distinct ports the system currently has free at `host`. */
export async function freePorts(count: number, host = "127.0.0.1"): Promise<number[]> {
  // Every server stays open until all are bound, so the kernel never hands out one port twice.
  const servers = Array.from({ length: count }, () => createServer());
  try {
    return await Promise.all(
      servers.map(
        (server) =>
          new Promise<number>((resolve, reject) => {
            server.once("error", reject);
            server.listen({ port: 0, host, exclusive: true }, () => resolve((server.address() as { port: number }).port));
          }),
      ),
    );
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
  const [gateway, ...services] = await freePorts(1 + serviceNames.length);
  const env: Record<string, string> = { PORT: String(gateway) };
  serviceNames.forEach((name, i) => (env[`${name.toUpperCase()}_URL`] = `http://127.0.0.1:${services[i]}`));
  return env;
}
