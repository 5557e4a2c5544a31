import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { SendResult } from "./send-result.ts";
import { OriginBreakers, originOf } from "./breaker.ts";

const answer = (statusCode: number): SendResult => ({ statusCode, durationMs: 1, responseBody: "" });
const refused: SendResult = { statusCode: 0, durationMs: 1, responseBody: "", errorKind: "refused", error: "connection refused" };
const send = (result: SendResult) => () => Promise.resolve(result);
const origin = "https://receiver.test";

async function fire(breakers: OriginBreakers, results: SendResult[], at = origin) {
  const verdicts = [];
  for (const r of results) verdicts.push(await breakers.run(at, send(r)));
  return verdicts;
}

describe("origin breakers", () => {
  it("keys breakers by origin", () => {
    assert.equal(originOf("https://Example.com:443/a/b?c=1"), "https://example.com");
    assert.equal(originOf("http://127.0.0.1:8080/x"), "http://127.0.0.1:8080");
    assert.equal(originOf("not a url"), "invalid");
  });

  it("stays closed below 10 calls, opens at the 10th failure, and defers until it half-opens", async () => {
    let now = 1_000_000;
    const breakers = new OriginBreakers({ resetTimeoutMs: 60_000, now: () => now });
    const first = await fire(breakers, Array(9).fill(answer(503)));
    assert.ok(first.every((v) => v.kind === "sent"));
    assert.equal(breakers.blockedUntil(origin), undefined, "9 calls are too few to judge");
    const [tenth] = await fire(breakers, [refused]);
    assert.equal(tenth.kind, "sent");
    assert.equal(breakers.blockedUntil(origin)?.getTime(), now + 60_000);
    now += 1_000;
    let called = false;
    const verdict = await breakers.run(origin, () => {
      called = true;
      return Promise.resolve(answer(200));
    });
    assert.deepEqual(verdict, { kind: "open", retryAt: new Date(1_000_000 + 60_000) });
    assert.equal(called, false, "nothing is sent while open");
    assert.equal(breakers.blockedUntil("https://other.test"), undefined, "other origins are untouched");
    assert.equal((await breakers.run("https://other.test", send(answer(200)))).kind, "sent");
    breakers.shutdown();
  });

  it("opens only above 50 % failures", async () => {
    const breakers = new OriginBreakers({ resetTimeoutMs: 60_000 });
    await fire(breakers, [...Array(5).fill(answer(200)), ...Array(5).fill(answer(500))]);
    assert.equal(breakers.blockedUntil(origin), undefined, "5 of 10 failed: not more than half");
    await fire(breakers, [answer(500)]);
    assert.ok(breakers.blockedUntil(origin), "6 of 11 failed");
    breakers.shutdown();
  });

  it("does not count 4xx, 3xx or refused addresses as failures", async () => {
    const breakers = new OriginBreakers({ resetTimeoutMs: 60_000 });
    const blocked: SendResult = { statusCode: 0, durationMs: 0, responseBody: "", errorKind: "blocked", error: "no" };
    const verdicts = await fire(breakers, [...Array(10).fill(answer(404)), ...Array(5).fill(answer(301)), ...Array(5).fill(blocked)]);
    assert.equal(breakers.blockedUntil(origin), undefined);
    assert.deepEqual(verdicts.map((v) => v.kind === "sent" && v.result.statusCode).slice(0, 2), [404, 404], "the results come back as they were");
    breakers.shutdown();
  });

  it("half-open lets one call through; its success closes the breaker", async () => {
    const breakers = new OriginBreakers({ resetTimeoutMs: 50, probeWaitMs: 700 });
    await fire(breakers, Array(10).fill(answer(502)));
    assert.ok(breakers.blockedUntil(origin));
    await new Promise((r) => setTimeout(r, 80));
    assert.equal(breakers.blockedUntil(origin), undefined, "half-open: one may go");
    let release!: () => void;
    const probe = breakers.run(origin, () => new Promise<SendResult>((resolve) => (release = () => resolve(answer(200)))));
    const second = await breakers.run(origin, send(answer(200)));
    assert.equal(second.kind, "open", "only one call while half-open");
    assert.ok(second.kind === "open" && second.retryAt.getTime() - Date.now() > 500);
    release();
    assert.equal((await probe).kind, "sent");
    assert.equal(breakers.blockedUntil(origin), undefined, "closed again");
    assert.equal((await breakers.run(origin, send(answer(200)))).kind, "sent");
    breakers.shutdown();
  });

  it("a failing half-open call opens it again", async () => {
    const breakers = new OriginBreakers({ resetTimeoutMs: 50 });
    await fire(breakers, Array(10).fill(answer(500)));
    await new Promise((r) => setTimeout(r, 80));
    await fire(breakers, [answer(500)]);
    const until = breakers.blockedUntil(origin);
    assert.ok(until && until.getTime() > Date.now(), "open again");
    breakers.shutdown();
  });

  it("drops breakers idle for 10 minutes", async () => {
    let now = 0;
    const breakers = new OriginBreakers({ now: () => now });
    await fire(breakers, [answer(200)], "https://a.test");
    await fire(breakers, [answer(200)], "https://b.test");
    assert.equal(breakers.size, 2);
    now += 9 * 60_000;
    await fire(breakers, [answer(200)], "https://b.test");
    assert.equal(breakers.size, 2, "nothing idle long enough yet");
    now += 60_000 + 1;
    await fire(breakers, [answer(200)], "https://c.test");
    assert.equal(breakers.size, 2, "a.test dropped, b.test and c.test kept");
    now += 10 * 60_000 + 1;
    breakers.sweep();
    assert.equal(breakers.size, 0);
    breakers.shutdown();
  });
});
