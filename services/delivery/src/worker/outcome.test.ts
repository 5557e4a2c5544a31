import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { classify, describeResult, errorOutcomes, statusOutcomes } from "./outcome.ts";

const answer = (statusCode: number) => ({ statusCode, durationMs: 1, responseBody: "" });

describe("outcome classification", () => {
  it("2xx succeeded", () => {
    for (const code of [200, 201, 202, 204, 299]) assert.equal(classify(answer(code)), "succeeded", String(code));
  });

  it("4xx failed without retry (429 and 408 too: the spec retries no 4xx)", () => {
    for (const code of [400, 401, 403, 404, 408, 410, 413, 429, 499]) assert.equal(classify(answer(code)), "failed", String(code));
  });

  it("3xx is not followed and not retried", () => {
    for (const code of [300, 301, 302, 307, 308]) assert.equal(classify(answer(code)), "failed", String(code));
    assert.match(describeResult(answer(302)), /redirects are not followed/);
  });

  it("5xx and any other status are retried", () => {
    for (const code of [500, 502, 503, 504, 599, 600, 101, 199, 0]) assert.equal(classify(answer(code)), "retry", String(code));
  });

  it("no answer: time-out, refused and network errors retried; a refused address or an unusable URL failed", () => {
    const failure = (errorKind: keyof typeof errorOutcomes) => ({ statusCode: 0, durationMs: 1, responseBody: "", errorKind, error: "x" });
    assert.equal(classify(failure("timeout")), "retry");
    assert.equal(classify(failure("refused")), "retry");
    assert.equal(classify(failure("network")), "retry");
    assert.equal(classify(failure("blocked")), "failed");
    assert.equal(classify(failure("invalid")), "failed");
  });

  it("is data: the status rules do not overlap", () => {
    for (const a of statusOutcomes) {
      for (const b of statusOutcomes) if (a !== b) assert.ok(a.to < b.from || b.to < a.from, `${a.from} and ${b.from} overlap`);
    }
    assert.equal(describeResult(answer(200)), "");
    assert.equal(describeResult(answer(503)), "the receiver answered 503");
  });
});
