import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { after, before, describe, it } from "node:test";
import { isPortFree } from "@formsvc/launcher/ports.ts";
import { dependencyServicePrefix } from "@formsvc/platform/health.ts";
import { createServiceClient } from "@formsvc/platform/rpc.ts";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@formsvc/proto/grpc/health/v1/health_pb.js";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";

// With KAFKA_BROKERS set, the services that use Kafka (submissions' relay, delivery's consumer) report
// whether a broker takes a connection (health service `dependency:kafka`) but stay ready while none
// does: the outbox keeps responses until the broker is back, so respondents are still answered. The
// "broker" here is only a loopback port that is closed, then listening.

/**
 * A free port below the kernel's ephemeral range. The broker's port stays unbound while the system starts
 * and the services keep dialling it; in the ephemeral range (where `freePort` picks) an outgoing
 * connection could be given it as its local port, or a dial to it connect to itself, and the later
 * `listen` fail with EADDRINUSE. Below the range only an explicit `listen` takes a port.
 */
async function portOutsideEphemeralRange(): Promise<number> {
  let low = 32_768;
  try {
    low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]) || low;
  } catch {
    // Not Linux: its usual lower bound.
  }
  for (;;) {
    const port = 10_000 + Math.floor(Math.random() * (low - 10_000));
    if (await isPortFree(port)) return port;
  }
}

let sys: TestSystem;
let brokerPort: number;
before(async () => {
  brokerPort = await portOutsideEphemeralRange();
  sys = await startTestSystem("kafka_readiness", { KAFKA_BROKERS: `127.0.0.1:${brokerPort}` });
});
after(() => sys?.stop());

const readyz = async () => {
  const res = await fetch(`${sys.url}/readyz`);
  return { status: res.status, body: (await res.json()) as { status: string; services: Record<string, string> } };
};

const kafkaStatus = (service: "submissions" | "delivery") =>
  createServiceClient(Health, sys.env[`${service.toUpperCase()}_URL`])
    .check({ service: `${dependencyServicePrefix}kafka` })
    .then((r) => r.status);

describe("readiness with KAFKA_BROKERS", () => {
  it("reports Kafka down while no broker answers, stays ready meanwhile, and reports it up once one does", async () => {
    for (const service of ["submissions", "delivery"] as const) {
      await eventuallyPasses(() => kafkaStatus(service), (status) => status === Status.NOT_SERVING, 30_000, 200);
    }
    const during = await readyz();
    assert.equal(during.status, 200, JSON.stringify(during.body));
    assert.deepEqual(during.body.services, { identity: "serving", forms: "serving", submissions: "serving", webhooks: "serving", delivery: "serving" });

    const broker = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => broker.listen(brokerPort, "127.0.0.1", resolve));
    try {
      for (const service of ["submissions", "delivery"] as const) {
        await eventuallyPasses(() => kafkaStatus(service), (status) => status === Status.SERVING, 30_000, 200);
      }
      assert.equal((await readyz()).status, 200);
    } finally {
      await new Promise((resolve) => broker.close(resolve));
    }
  });
});
