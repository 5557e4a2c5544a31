// Test assertions about RPC failures, shared by the services' handler tests.
import assert from "node:assert/strict";
import { Code, ConnectError } from "@connectrpc/connect";

/**
 * Awaits `promise`, asserts it failed with a ConnectError of `code` and, when given, a message equal to
 * the string or matching the pattern; returns the error for further checks.
 */
export async function rejectsWith(promise: Promise<unknown>, code: Code, message?: RegExp | string): Promise<ConnectError> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof ConnectError, `expected a ConnectError, got ${String(caught)}`);
  assert.equal(caught.code, code, `expected ${Code[code]}, got ${Code[caught.code]}: ${caught.rawMessage}`);
  if (typeof message === "string") assert.equal(caught.rawMessage, message);
  else if (message) assert.match(caught.rawMessage, message);
  return caught;
}
