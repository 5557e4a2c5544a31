import assert from "node:assert/strict";
import { once } from "node:events";
import { Agent, createServer, request, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { drainable } from "./http-drain.ts";

/** A server whose /slow requests wait until `release()`; `arrived` settles when one has come in. */
async function slowServer() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let arrived!: () => void;
  const slowArrived = new Promise<void>((resolve) => (arrived = resolve));
  const server: Server = createServer((req, res) => {
    if (req.url === "/slow") {
      arrived();
      void released.then(() => res.end("slow done"));
    } else res.end("ok");
  });
  const drain = drainable(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, drain, port: (server.address() as AddressInfo).port, release, slowArrived };
}

interface Answer {
  status: number;
  body: string;
  connection: string | undefined;
  reusedSocket: boolean;
}

function get(port: number, path: string, agent: Agent | false): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, agent }, (res: IncomingMessage) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, body, connection: res.headers.connection, reusedSocket: req.reusedSocket }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("drainable", () => {
  it("answers the requests in flight and those on open connections with Connection: close, refuses new connections, then resolves", async () => {
    const { drain, port, release, slowArrived } = await slowServer();
    const idle = new Agent({ keepAlive: true, maxSockets: 1 });
    const busy = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await get(port, "/fast", idle);
      assert.equal(first.connection, "keep-alive");
      const slow = get(port, "/slow", busy);
      await slowArrived;

      const drained = drain(5_000);
      // The idle keep-alive connection still serves a request that comes on it, and then closes.
      const onIdle = await get(port, "/fast", idle);
      assert.deepEqual(onIdle, { status: 200, body: "ok", connection: "close", reusedSocket: true });
      // A new connection is refused.
      await assert.rejects(get(port, "/fast", false), { code: "ECONNREFUSED" });
      // The request in flight is answered in full, and its connection closes after it.
      release();
      assert.deepEqual(await slow, { status: 200, body: "slow done", connection: "close", reusedSocket: false });
      const result = await drained;
      assert.equal(result.cut, 0);
    } finally {
      idle.destroy();
      busy.destroy();
    }
  });

  it("closes what is still open at the limit and says how many", async () => {
    const { drain, port, release, slowArrived } = await slowServer();
    const slow = get(port, "/slow", false);
    slow.catch(() => {});
    await slowArrived;
    const result = await drain(100);
    assert.equal(result.cut, 1);
    await assert.rejects(slow, { code: "ECONNRESET" });
    release();
  });
});
