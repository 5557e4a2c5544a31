import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { isTransportFailure, upstreamFailure } from "./upstream-failure.ts";

const failureOf = (fn: () => never): ConnectError => {
  try {
    fn();
  } catch (err) {
    return err as ConnectError;
  }
  throw new Error("did not throw");
};

describe("upstreamFailure", () => {
  it("passes NOT_FOUND (with our message if given) and the caller's own problems through; anything else is UNAVAILABLE with the cause", () => {
    const notFound = failureOf(() => upstreamFailure("forms", new ConnectError("form not found", Code.NotFound)));
    assert.deepEqual([notFound.code, notFound.rawMessage], [Code.NotFound, "form not found"]);
    const renamed = failureOf(() => upstreamFailure("forms", new ConnectError("form not found", Code.NotFound), { notFoundMessage: "webhook not found" }));
    assert.equal(renamed.rawMessage, "webhook not found");
    const denied = failureOf(() => upstreamFailure("identity", new ConnectError("not a member", Code.PermissionDenied)));
    assert.deepEqual([denied.code, denied.rawMessage], [Code.PermissionDenied, "not a member"]);
    const down = failureOf(() => upstreamFailure("identity", new ConnectError("connect ECONNREFUSED 10.0.0.7:8081", Code.Unavailable)));
    assert.deepEqual([down.code, down.rawMessage], [Code.Unavailable, "identity is unavailable"]);
    assert.match(String((down.cause as ConnectError).rawMessage), /ECONNREFUSED/);
    const strict = failureOf(() => upstreamFailure("forms", new ConnectError("who are you", Code.Unauthenticated), { passThrough: [] }));
    assert.deepEqual([strict.code, strict.rawMessage], [Code.Unavailable, "forms is unavailable"]);
  });
});

describe("isTransportFailure", () => {
  const nodeError = (code: string, message: string) => Object.assign(new Error(message), { code });

  it("is true for unreachable, timed-out and broken calls, whatever code connect gave them", () => {
    assert.equal(isTransportFailure(new ConnectError("connect ECONNREFUSED 127.0.0.1:8081", Code.Unavailable)), true);
    assert.equal(isTransportFailure(new ConnectError("deadline exceeded", Code.DeadlineExceeded)), true);
    // connect-node's answer to a service that died mid-call: ABORTED "read ECONNRESET", the socket error as cause.
    assert.equal(isTransportFailure(new ConnectError("read ECONNRESET", Code.Aborted, undefined, undefined, nodeError("ECONNRESET", "read ECONNRESET"))), true);
    assert.equal(isTransportFailure(new ConnectError("socket hang up", Code.Unknown)), true);
    assert.equal(isTransportFailure(new ConnectError("http/2 stream closed with error code INTERNAL_ERROR (0x2)", Code.Internal)), true);
    // A service killed mid-call: its session is destroyed and the stream closes with CANCEL under us.
    assert.equal(isTransportFailure(new ConnectError("http/2 stream closed with error code CANCEL (0x8)", Code.Canceled)), true);
  });

  it("is false for answers the other service gave, and for calls we cancelled", () => {
    assert.equal(isTransportFailure(new ConnectError("form not found", Code.NotFound)), false);
    assert.equal(isTransportFailure(new ConnectError("duplicate key", Code.Internal)), false);
    const ourAbort = new AbortController();
    ourAbort.abort();
    assert.equal(isTransportFailure(ConnectError.from(ourAbort.signal.reason, Code.Canceled)), false);
    const looped = new Error("loop");
    looped.cause = looped;
    assert.equal(isTransportFailure(new ConnectError("odd", Code.Unknown, undefined, undefined, looped)), false);
  });
});
