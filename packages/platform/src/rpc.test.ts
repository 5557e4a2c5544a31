import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@formsvc/proto/grpc/health/v1/health_pb.js";
import { createLogger } from "./logger.ts";
import { metrics } from "./metrics.ts";
import { createServiceClient, startRpcServer } from "./rpc.ts";

describe("RPC server", () => {
  it("serves grpc.health.v1 and counts RPCs in its metrics", async () => {
    const server = await startRpcServer({ port: 0, logger: createLogger("test", "silent"), routes: () => {} });
    const health = createServiceClient(Health, `http://127.0.0.1:${server.port}`);
    assert.equal((await health.check({})).status, Status.SERVING);
    const watch = health.watch({})[Symbol.asyncIterator]();
    assert.equal((await watch.next()).value?.status, Status.SERVING);
    server.health.set(false);
    assert.equal((await watch.next()).value?.status, Status.NOT_SERVING);
    await watch.return?.();
    const text = await metrics.metrics();
    assert.match(text, /rpc_server_duration_seconds_count\{method="Check",code="OK"\} \d+/);
    assert.match(text, /rpc_client_duration_seconds_count\{target="grpc.health.v1.Health",method="Check",code="OK"\} \d+/);
    await server.close();
  });
});
