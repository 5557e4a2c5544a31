import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { solveChallenge } from "altcha-lib";
import { deriveKey } from "altcha-lib/algorithms/pbkdf2";
import { Redis } from "ioredis";
import { defaultSettings } from "@formsvc/form-document";
import { refusals } from "@formsvc/form-document/response-rules";
import { memoryReplayStore, proofOfWork, redisReplayStore, type ReplayStore } from "./captcha.ts";

// The proof-of-work check on its own: a solution (solved here by altcha-lib's own solver) passes once, for
// its form only; the replay stores, in memory and in the real Redis, spend a key once until it expires.

const redis = new Redis(process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379", { maxRetriesPerRequest: 2 });
after(() => redis.quit());

const settings = { ...defaultSettings, proofOfWork: { workFactor: 50 } };

/** A solved challenge of `formId` as the widget sends it: base64 JSON {challenge, solution}. */
async function solvedPayload(captcha: ReturnType<typeof proofOfWork>, formId: string): Promise<string> {
  let challenge: unknown;
  const res = { setHeader() {}, json: (body: unknown) => (challenge = body) };
  await captcha.sendChallenge(res as never, formId, settings);
  const solution = await solveChallenge({ challenge: challenge as never, deriveKey });
  assert.ok(solution, "the challenge is solvable");
  return Buffer.from(JSON.stringify({ challenge, solution })).toString("base64");
}

describe("proof-of-work check", () => {
  it("passes a solution once, for its own form; refuses a missing, forged or replayed one", async () => {
    const captcha = proofOfWork({ secret: "test secret", replays: memoryReplayStore() });
    const payload = await solvedPayload(captcha, "form1");
    await assert.rejects(captcha.check("form2", settings, payload), { message: refusals.captchaInvalid });
    await captcha.check("form1", settings, payload);
    await assert.rejects(captcha.check("form1", settings, payload), { message: refusals.captchaReplayed });
    await assert.rejects(captcha.check("form1", settings, undefined), { message: refusals.captchaMissing });
    await assert.rejects(captcha.check("form1", settings, "not base64 json"), { message: refusals.captchaInvalid });
    const otherSecret = proofOfWork({ secret: "another secret" });
    await assert.rejects(otherSecret.check("form1", settings, await solvedPayload(captcha, "form1")), { message: refusals.captchaInvalid });
    await captcha.check("form1", defaultSettings, undefined);
  });

  for (const [name, store] of [
    ["memory", memoryReplayStore()],
    ["Redis", redisReplayStore(redis, `formsvc:captcha-test:${Date.now()}:`)],
  ] as [string, ReplayStore][]) {
    it(`spends a key once until it expires (${name})`, async () => {
      assert.equal(await store.spend("a", 60_000), true);
      assert.equal(await store.spend("a", 60_000), false);
      assert.equal(await store.spend("b", 1), true);
      // Expired after its millisecond: spendable again (waited for, not slept on).
      while (!(await store.spend("b", 60_000))) await new Promise((resolve) => setImmediate(resolve));
      assert.equal(await store.spend("b", 60_000), false);
    });
  }
});
