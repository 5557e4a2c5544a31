import assert from "node:assert/strict";
import { createServer, type AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { HealthCheckResponse_ServingStatus as Status } from "@formsvc/proto/grpc/health/v1/health_pb.js";
import { isDatabaseUnavailable } from "./database-unavailable.ts";
import { HealthState, probeDependency, tcpCheck } from "./health.ts";
import { createLogger } from "./logger.ts";

const logger = createLogger("test", "silent");
const until = async (condition: () => boolean, timeoutMs = 5_000) => {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    assert.ok(Date.now() < end, "condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe("HealthState", () => {
  it("is SERVING only while started and every dependency answers", () => {
    const health = new HealthState();
    assert.equal(health.status, Status.NOT_SERVING);
    health.set(true);
    assert.equal(health.status, Status.SERVING);
    assert.equal(health.setReachable("database", false), true);
    assert.equal(health.setReachable("database", false), false, "no change the second time");
    health.setReachable("kafka", false);
    assert.deepEqual([health.reachable("database"), health.reachable("kafka")], [false, false]);
    health.setReachable("database", true);
    assert.equal(health.status, Status.NOT_SERVING, "kafka is still down");
    health.setReachable("kafka", true);
    assert.equal(health.status, Status.SERVING);
    health.set(false);
    assert.equal(health.status, Status.NOT_SERVING);
  });

  it("stays SERVING while a tolerated dependency is down, and reports it on its own", () => {
    const health = new HealthState();
    health.set(true);
    health.tolerate("kafka");
    health.setReachable("kafka", false);
    assert.equal(health.status, Status.SERVING);
    assert.equal(health.reachable("kafka"), false);
    health.setReachable("database", false);
    assert.equal(health.status, Status.NOT_SERVING, "the database is not tolerated");
  });

  it("wakes watchers when a dependency changes", async () => {
    const health = new HealthState();
    health.set(true);
    const changed = health.changed(new AbortController().signal);
    health.setReachable("database", false);
    await changed;
    assert.equal(health.status, Status.NOT_SERVING);
  });
});

describe("probeDependency", () => {
  it("flips NOT_SERVING while the check fails or hangs, and back when it answers", async () => {
    const health = new HealthState();
    health.set(true);
    let behaviour: "ok" | "fail" | "hang" = "fail";
    const check = () => (behaviour === "ok" ? Promise.resolve() : behaviour === "fail" ? Promise.reject(new Error("refused")) : new Promise(() => {}));
    const stop = probeDependency(health, "database", { check, everyMs: 20, timeoutMs: 50 }, logger);
    try {
      await until(() => health.status === Status.NOT_SERVING);
      behaviour = "ok";
      await until(() => health.status === Status.SERVING);
      behaviour = "hang";
      await until(() => health.status === Status.NOT_SERVING);
      assert.equal(health.reachable("database"), false);
    } finally {
      stop();
    }
  });
});

describe("tcpCheck", () => {
  it("resolves while something listens on loopback and rejects once it is gone", async () => {
    const server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    await tcpCheck([address])();
    await new Promise((resolve) => server.close(resolve));
    await assert.rejects(tcpCheck([address])(), { code: "ECONNREFUSED" });
  });
});

describe("isDatabaseUnavailable", () => {
  it("recognises refused, reset and dropped connections and a server going away, wrapped or not", () => {
    const coded = (code: string) => Object.assign(new Error("x"), { code });
    for (const err of [
      coded("ECONNREFUSED"),
      coded("ETIMEDOUT"),
      coded("57P01"), // admin_shutdown: a fast shutdown ends the session
      coded("57P03"), // cannot_connect_now: starting up
      coded("08006"), // connection_failure
      new Error("Connection terminated unexpectedly"),
      new Error("timeout exceeded when trying to connect"),
      new Error("wrapped", { cause: coded("ECONNRESET") }),
      new AggregateError([coded("ECONNREFUSED")], "every address refused"),
    ]) {
      assert.equal(isDatabaseUnavailable(err), true, String((err as { code?: string }).code ?? err.message));
    }
  });

  it("leaves the query's own failures alone", () => {
    const coded = (code: string) => Object.assign(new Error("x"), { code });
    for (const err of [coded("23505"), coded("42P01"), coded("40001"), new Error("internal"), undefined, "ECONNREFUSED", { code: 14 }]) {
      assert.equal(isDatabaseUnavailable(err), false, String(err));
    }
  });
});
