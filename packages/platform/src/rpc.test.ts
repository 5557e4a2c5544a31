import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@formsvc/proto/grpc/health/v1/health_pb.js";
import { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { livenessService } from "./health.ts";
import { createLogger } from "./logger.ts";
import { metrics } from "./metrics.ts";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { createServiceClient, databaseUnavailableMessage, startRpcServer } from "./rpc.ts";

describe("RPC client", () => {
  it("sends a unary call once more when the server refused its stream unprocessed (a stopping server's GOAWAY)", async () => {
    let refusals = 1;
    let served = 0;
    const handle = connectNodeAdapter({
      routes: (router) =>
        router.service(Health, {
          check: () => (served++, { status: Status.SERVING }),
          watch: async function* () {},
        }),
    });
    const server = http2.createServer((req, res) => {
      if (refusals-- > 0) return void req.stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      handle(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const health = createServiceClient(Health, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      assert.equal((await health.check({})).status, Status.SERVING);
      assert.equal(served, 1, "refused once, served on the second try");
      // Refused twice in a row: the second refusal is the caller's to see.
      refusals = 2;
      await assert.rejects(health.check({}), (err) => /REFUSED_STREAM/.test(String(ConnectError.from(err).message)));
    } finally {
      server.close();
    }
  });

  it("answers UNAVAILABLE for a failure the server did not send (a stream cut short), and passes on the server's own codes", async () => {
    const handle = connectNodeAdapter({
      routes: (router) =>
        router.service(Health, {
          check: () => {
            throw new ConnectError("no such service", Code.NotFound);
          },
          watch: async function* () {},
        }),
    });
    // Watch's answer ends before the Connect protocol's end-of-stream message, as when a process dies mid-answer:
    // connect's client names that INVALID_ARGUMENT, which the gateway would have answered as the caller's 400.
    const server = http2.createServer((req, res) => {
      if (!req.url.endsWith("/Watch")) return handle(req, res);
      res.writeHead(200, { "content-type": "application/connect+proto" });
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const health = createServiceClient(Health, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      await assert.rejects(
        (async () => {
          for await (const _ of health.watch({})) assert.fail("no message was sent");
        })(),
        (err) => ConnectError.from(err).code === Code.Unavailable && /EndStreamResponse/.test(ConnectError.from(err).rawMessage),
      );
      await assert.rejects(health.check({}), (err) => ConnectError.from(err).code === Code.NotFound && ConnectError.from(err).rawMessage === "no such service");
    } finally {
      server.close();
    }
  });
});

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
    server.health.set(true);
    // A dependency down: not ready, still alive.
    server.health.setReachable("database", false);
    assert.equal((await health.check({})).status, Status.NOT_SERVING);
    assert.equal((await health.check({ service: livenessService })).status, Status.SERVING);
    const text = await metrics.metrics();
    assert.match(text, /rpc_server_duration_seconds_count\{method="Check",code="OK"\} \d+/);
    assert.match(text, /rpc_client_duration_seconds_count\{target="grpc.health.v1.Health",method="Check",code="OK"\} \d+/);
    await server.close();
  });

  it("answers UNAVAILABLE when the database cannot be reached, and stops serving at once", async () => {
    const answered = (code: Code, message: string) => (err: unknown) => {
      const failure = ConnectError.from(err);
      assert.deepEqual([failure.code, failure.rawMessage], [code, message]);
      return true;
    };
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    const server = await startRpcServer({
      port: 0,
      logger: createLogger("test", "silent"),
      routes: (router) =>
        router.service(IdentityService, {
          createUser: () => Promise.reject(refused),
          setPlan: () => Promise.reject(new Error("a bug")),
        }),
    });
    try {
      const url = `http://127.0.0.1:${server.port}`;
      const identity = createServiceClient(IdentityService, url);
      await assert.rejects(identity.createUser({ email: "a@example.com" }), answered(Code.Unavailable, databaseUnavailableMessage));
      assert.equal((await createServiceClient(Health, url).check({})).status, Status.NOT_SERVING);
      // Anything else stays an internal error that says nothing more.
      await assert.rejects(identity.setPlan({}), answered(Code.Internal, "internal error"));
    } finally {
      await server.close();
    }
  });

  it("fails a client stream the caller cuts short after its last message: the server never takes it as whole", async () => {
    const chunks = 3;
    let allArrived!: () => void;
    const arrived = new Promise<void>((resolve) => (allArrived = resolve));
    const ended: Promise<string>[] = [];
    const server = await startRpcServer({
      port: 0,
      logger: createLogger("test", "silent"),
      routes: (router) =>
        router.service(SubmissionsService, {
          createUpload(requests) {
            const outcome = (async () => {
              let received = 0;
              for await (const request of requests) if (request.part.case === "chunk" && ++received === chunks) allArrived();
              return `ended after ${received} chunks`;
            })().catch((err: unknown) => `failed: ${ConnectError.from(err).code}`);
            ended.push(outcome);
            return outcome.then(() => ({}));
          },
        }),
    });
    try {
      const submissions = createServiceClient(SubmissionsService, `http://127.0.0.1:${server.port}`);
      // All the bytes sent, then the sender changes its mind (as the gateway discards a repeated upload).
      const cut = submissions.createUpload(
        (async function* () {
          yield { part: { case: "header" as const, value: { formId: "f", name: "a.bin", contentType: "", size: 0n } } };
          for (let i = 0; i < chunks; i++) yield { part: { case: "chunk" as const, value: new Uint8Array(64 * 1024) } };
          await arrived;
          throw new Error("discarded");
        })(),
      );
      await assert.rejects(cut);
      assert.equal(await ended[0], `failed: ${Code.Canceled}`);
      // A stream the caller ends is whole.
      await submissions.createUpload(
        (async function* () {
          yield { part: { case: "header" as const, value: { formId: "f", name: "b.bin", contentType: "", size: 0n } } };
          yield { part: { case: "chunk" as const, value: new Uint8Array(8) } };
        })(),
      );
      assert.equal(await ended[1], "ended after 1 chunks");
    } finally {
      await server.close();
    }
  });
});
