import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { describe, it } from "node:test";
import { freePorts } from "./ports.ts";

describe("freePorts", () => {
  it("gives distinct ports, each free, below the kernel's ephemeral range with room for a metrics port (+1000)", async () => {
    const ephemeralStart = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    const ports = await freePorts(12);
    assert.equal(new Set(ports).size, 12);
    for (const port of ports) {
      assert.ok(port >= 10_000 && port + 1000 < ephemeralStart, `${port} below ${ephemeralStart} - 1000`);
      const server = createServer();
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen({ port, host: "127.0.0.1", exclusive: true }, resolve);
      });
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("with a companion offset, holds each port's companion too: no pick lands on another's metrics port", async () => {
    const ports = await freePorts(12, "127.0.0.1", { companionOffset: 1000 });
    const all = [...ports, ...ports.map((port) => port + 1000)];
    assert.equal(new Set(all).size, 24);
    for (const port of all) {
      const server = createServer();
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen({ port, host: "127.0.0.1", exclusive: true }, resolve);
      });
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
