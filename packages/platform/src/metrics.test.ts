import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { createLogger } from "./logger.ts";
import { startMetricsServer } from "./metrics.ts";

/** A port free on `host` right now (listening on 0 and closing again). */
async function freePort(host: string): Promise<number> {
  const probe = createServer().listen(0, host);
  await once(probe, "listening");
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

async function listening(server: Server): Promise<AddressInfo> {
  if (!server.listening) await once(server, "listening");
  return server.address() as AddressInfo;
}

describe("metrics server", () => {
  const logger = createLogger("test", "silent");

  for (const host of ["127.0.0.1", "::1"]) {
    it(`binds the interface it is given (${host}), not every interface, and serves /metrics there`, async () => {
      const server = startMetricsServer(await freePort(host), logger, host);
      try {
        const { address, port } = await listening(server);
        assert.equal(address, host);
        const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
        const res = await fetch(`${url}/metrics`);
        assert.equal(res.status, 200);
        assert.match(await res.text(), /process_cpu_user_seconds_total/);
        assert.equal((await fetch(`${url}/other`)).status, 404);
      } finally {
        server.close();
      }
    });
  }

  it("serves nothing on an invalid port, without throwing", () => {
    const server = startMetricsServer(0, logger, "127.0.0.1");
    assert.equal(server.listening, false);
  });
});
