import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { BadRequestSchema } from "@formsvc/proto/google/rpc/error_details_pb.js";
import { errorAnswer, HttpError, retryAfterSeconds } from "./http-errors.ts";

describe("errorAnswer", () => {
  it("maps RPC codes through the one table", () => {
    assert.deepEqual(errorAnswer(new ConnectError("form not found", Code.NotFound)), { status: 404, message: "form not found" });
    assert.equal(errorAnswer(new ConnectError("x", Code.PermissionDenied)).status, 403);
    assert.equal(errorAnswer(new ConnectError("x", Code.Unauthenticated)).status, 401);
    assert.equal(errorAnswer(new ConnectError("x", Code.InvalidArgument)).status, 400);
    assert.equal(errorAnswer(new ConnectError("x", Code.ResourceExhausted)).status, 429);
  });

  it("passes a service's field violations on as fields, by key", () => {
    const fieldViolations = [
      { field: "email", description: "must be an email address" },
      { field: "q_name", description: "is required" },
    ];
    const invalid = new ConnectError("answers.email (Email): must be an email address; answers.q_name (Name): is required", Code.InvalidArgument, undefined, [
      { desc: BadRequestSchema, value: { fieldViolations } },
    ]);
    assert.deepEqual(errorAnswer(invalid), {
      status: 400,
      message: "answers.email (Email): must be an email address; answers.q_name (Name): is required",
      fields: [
        { key: "email", message: "must be an email address" },
        { key: "q_name", message: "is required" },
      ],
    });
    const internal = new ConnectError("x", Code.Internal, undefined, [{ desc: BadRequestSchema, value: { fieldViolations } }]);
    assert.deepEqual(errorAnswer(internal), { status: 500, message: "internal server error" }, "a 500 says nothing more");
  });

  it("says nothing more on a 500", () => {
    assert.deepEqual(errorAnswer(new ConnectError("db password wrong at 10.0.0.5", Code.Internal)), {
      status: 500,
      message: "internal server error",
    });
    assert.deepEqual(errorAnswer(new Error("secret detail")), { status: 500, message: "internal server error" });
  });

  it("keeps HttpError statuses and headers", () => {
    assert.deepEqual(errorAnswer(new HttpError(429, "slow down", { "Retry-After": "3" })), {
      status: 429,
      message: "slow down",
      headers: { "Retry-After": "3" },
    });
  });

  it("answers a call that got no answer with 503 and Retry-After, never 409, 500 or 504", () => {
    const retry = { status: 503, message: "service temporarily unavailable, try again shortly", headers: { "Retry-After": String(retryAfterSeconds) } };
    assert.deepEqual(errorAnswer(new ConnectError("connect ECONNREFUSED", Code.Unavailable)), retry);
    assert.deepEqual(errorAnswer(new ConnectError("deadline exceeded", Code.DeadlineExceeded)), retry);
    // What connect-node makes of a service that died mid-call (the probe's "409 read ECONNRESET").
    const reset = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET", syscall: "read" });
    assert.deepEqual(errorAnswer(new ConnectError("read ECONNRESET", Code.Aborted, undefined, undefined, reset)), retry);
    assert.deepEqual(errorAnswer(new HttpError(503, "not ready")).headers, { "Retry-After": String(retryAfterSeconds) });
  });

  it("keeps the 4xx status any Express, router or body-parser error carries, in words of its own", () => {
    const bodyError = (status: number, type?: string, extra: object = {}) => Object.assign(new Error("library detail"), { status, statusCode: status, expose: true, type, ...extra });
    assert.deepEqual(errorAnswer(bodyError(400, "entity.parse.failed")), { status: 400, message: "request body is not valid JSON" });
    assert.deepEqual(errorAnswer(bodyError(413, "entity.too.large")), { status: 413, message: "request body is too large" });
    assert.deepEqual(errorAnswer(bodyError(415, "encoding.unsupported")), { status: 415, message: "unsupported body encoding" });
    assert.deepEqual(errorAnswer(bodyError(413, "parameters.too.many")), { status: 413, message: "request body has too many fields" });
    // Garbage under Content-Encoding: gzip: zlib's error, given 400 by body-parser.
    assert.deepEqual(errorAnswer(bodyError(400, undefined, { code: "Z_DATA_ERROR" })), {
      status: 400,
      message: "request body cannot be decoded with its Content-Encoding",
    });
    // The router's failed decodeURIComponent of a path parameter.
    const uriError = Object.assign(new URIError("Failed to decode param '%E0%A4%A'"), { status: 400, statusCode: 400 });
    assert.deepEqual(errorAnswer(uriError), { status: 400, message: "path is not valid percent-encoding" });
    assert.deepEqual(errorAnswer({ statusCode: 416 }), { status: 416, message: "range not satisfiable" });
    assert.deepEqual(errorAnswer(bodyError(500, "stream.not.readable")), { status: 500, message: "internal server error" });
  });
});
