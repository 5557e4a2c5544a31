import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { classify, describeResult, disablesWebhook, errorOutcomes, honouredRetryAfter, statusExceptions, statusOutcomes } from "./send-result.ts";

const answer = (statusCode: number) => ({ statusCode, durationMs: 1, responseBody: "" });

describe("outcome classification", () => {
  it("2xx succeeded", () => {
    for (const code of [200, 201, 202, 204, 299]) assert.equal(classify(answer(code)), "succeeded", String(code));
  });

  it("4xx failed without retry, except 429 and 408 (retried, honouring Retry-After)", () => {
    for (const code of [400, 401, 403, 404, 410, 413, 499]) assert.equal(classify(answer(code)), "failed", String(code));
    for (const code of [408, 429]) {
      assert.equal(classify(answer(code)), "retry", String(code));
      assert.equal(honouredRetryAfter({ ...answer(code), retryAfter: "2" }), "2");
    }
    assert.equal(honouredRetryAfter({ ...answer(503), retryAfter: "2" }), undefined, "only 429 and 408 are waited for");
  });

  it("410 Gone fails and disables the webhook; nothing else does", () => {
    assert.equal(disablesWebhook(answer(410)), "the receiver answered 410 Gone");
    for (const code of [200, 404, 429, 500]) assert.equal(disablesWebhook(answer(code)), undefined, String(code));
    assert.equal(disablesWebhook({ statusCode: 0, errorKind: "refused" }), undefined);
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
    assert.equal(new Set(statusExceptions.map((e) => e.status)).size, statusExceptions.length, "one rule per exceptional status");
    assert.equal(describeResult(answer(200)), "");
    assert.equal(describeResult(answer(503)), "the receiver answered 503");
  });
});
