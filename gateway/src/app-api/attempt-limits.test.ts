import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { HttpError } from "../http-errors.ts";
import { MemorySlidingWindow } from "../rate-limit/sliding-window.ts";
import { admitAttempt, passwordResetLimits, signInLimits, signUpLimits, type Attempt } from "./attempt-limits.ts";

/** A store on a clock the test moves, and the outcome of one attempt: "ok" or the 429's Retry-After. */
function setup() {
  let now = 1_000_000_000;
  const store = new MemorySlidingWindow(() => now);
  const signIn = async (attempt: Attempt) => {
    try {
      await admitAttempt(store, signInLimits, attempt);
      return "ok";
    } catch (err) {
      assert.ok(err instanceof HttpError && err.status === 429, String(err));
      assert.match(err.message, /^too many attempts: wait /);
      return Number(err.headers["Retry-After"]);
    }
  };
  return { store, signIn, advance: (ms: number) => (now += ms) };
}

const owner = "owner@example.com";

describe("sign-in attempt limits", () => {
  it("an attacker guessing from one address is stopped there; the owner signs in from their own", async () => {
    const { store, signIn } = setup();
    for (let i = 0; i < 10; i++) assert.equal(await signIn({ address: "198.51.100.9", email: owner }), "ok");
    const refused = await signIn({ address: "198.51.100.9", email: owner });
    assert.ok(typeof refused === "number" && refused >= 1 && refused <= 60, `Retry-After ${refused}`);
    assert.equal(await signIn({ address: "203.0.113.1", email: owner }), "ok", "the owner is not locked out");
    assert.equal(await signIn({ address: "198.51.100.9", email: "someone-else@example.com" }), "ok", "the pair, not the address, is full");
    await store.close();
  });

  it("one address can never fill the email's hourly ceiling, however long it keeps going", async () => {
    const { store, signIn, advance } = setup();
    let admitted = 0;
    // Three hours of one guess every two seconds from one address.
    for (let t = 0; t < 3 * 3600; t += 2) {
      if ((await signIn({ address: "198.51.100.9", email: owner })) === "ok") admitted++;
      advance(2_000);
    }
    assert.equal(admitted, 90, "30 an hour per address and email");
    assert.equal(await signIn({ address: "203.0.113.1", email: owner }), "ok", "the owner still gets in");
    await store.close();
  });

  it("guesses spread over many addresses stop at 100 an hour per email, for everyone", async () => {
    const { store, signIn, advance } = setup();
    for (let i = 0; i < 100; i++) {
      assert.equal(await signIn({ address: `198.51.100.${i % 10}`, email: owner }), "ok", `attempt ${i}`);
      if (i % 10 === 9) advance(61_000); // each address stays under its per-minute limit
    }
    const refused = await signIn({ address: "203.0.113.1", email: owner });
    assert.ok(typeof refused === "number" && refused > 60, `waits for the hour window, Retry-After ${refused}`);
    assert.equal(await signIn({ address: "203.0.113.1", email: "other@example.com" }), "ok", "other emails are unaffected");
    advance(3600_000);
    assert.equal(await signIn({ address: "203.0.113.1", email: owner }), "ok", "the window slides on");
    await store.close();
  });

  it("one address trying many emails is stopped at 30 a minute", async () => {
    const { store, signIn } = setup();
    for (let i = 0; i < 30; i++) assert.equal(await signIn({ address: "198.51.100.7", email: `p${i}@example.com` }), "ok");
    assert.equal(typeof (await signIn({ address: "198.51.100.7", email: "p30@example.com" })), "number");
    await store.close();
  });

  it("sign-up: 10 a minute per address", async () => {
    const store = new MemorySlidingWindow();
    for (let i = 0; i < 10; i++) await admitAttempt(store, signUpLimits, { address: "198.51.100.1", email: "" });
    await assert.rejects(admitAttempt(store, signUpLimits, { address: "198.51.100.1", email: "" }), (err) => err instanceof HttpError && err.status === 429);
    await admitAttempt(store, signUpLimits, { address: "198.51.100.2", email: "" });
    await store.close();
  });

  it("password reset: a stranger's requests do not lock the owner out of their own reset", async () => {
    const store = new MemorySlidingWindow();
    const reset = (address: string) => admitAttempt(store, passwordResetLimits, { address, email: owner }).then(() => "ok", (err) => (err instanceof HttpError ? err.status : err));
    assert.deepEqual([await reset("198.51.100.9"), await reset("198.51.100.9"), await reset("198.51.100.9"), await reset("198.51.100.9")], ["ok", "ok", "ok", 429]);
    assert.equal(await reset("203.0.113.5"), "ok", "the owner, from their own address");
    // The address's inbox has a ceiling, however many addresses ask.
    for (let i = 0; i < 16; i++) assert.equal(await reset(`198.51.100.${100 + i}`), "ok");
    assert.equal(await reset("198.51.100.200"), 429);
    await store.close();
  });
});
