import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { errorAnswer, HttpError } from "./http-errors.ts";

describe("errorAnswer", () => {
  it("maps RPC codes through the one table", () => {
    assert.deepEqual(errorAnswer(new ConnectError("form not found", Code.NotFound)), { status: 404, message: "form not found" });
    assert.equal(errorAnswer(new ConnectError("x", Code.PermissionDenied)).status, 403);
    assert.equal(errorAnswer(new ConnectError("x", Code.Unauthenticated)).status, 401);
    assert.equal(errorAnswer(new ConnectError("x", Code.InvalidArgument)).status, 400);
    assert.equal(errorAnswer(new ConnectError("x", Code.ResourceExhausted)).status, 429);
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

  it("answers unreachable services with 503", () => {
    assert.equal(errorAnswer(new ConnectError("connect ECONNREFUSED", Code.Unavailable)).status, 503);
  });
});
