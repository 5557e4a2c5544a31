import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { upstreamFailure } from "./upstream-failure.ts";

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
