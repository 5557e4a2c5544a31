import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decoyPasswordHash, hashPassword, passwordProblem, verifyPassword } from "./passwords.ts";

describe("password hashes", () => {
  it("verify the right password only, in any Unicode normal form", async () => {
    const hash = await hashPassword("Crème brûlée 42");
    assert.equal(await verifyPassword("Crème brûlée 42", hash), true);
    assert.equal(await verifyPassword("Cre\u0300me bru\u0302le\u0301e 42", hash), true, "NFD input is normalised");
    assert.equal(await verifyPassword("crème brûlée 42", hash), false);
    assert.equal(await verifyPassword("", hash), false);
  });

  it("never match a malformed or foreign hash, nor the decoy", async () => {
    for (const stored of ["", "plain", "bcrypt$x$y", "scrypt$0$8$1$AAAA$AAAA", "scrypt$16384$8$1$$AAAA", "scrypt$99999999$8$1$AAAA$AAAA"]) {
      assert.equal(await verifyPassword("whatever", stored), false, stored);
    }
    assert.equal(await verifyPassword("whatever", await decoyPasswordHash()), false);
  });

  it("name what is wrong with a new password: its length, counted in characters", async () => {
    assert.match((await passwordProblem("1234567"))!, /at least 8/);
    assert.match((await passwordProblem("🙂🙂🙂🙂🙂🙂🙂"))!, /at least 8/, "seven characters, though 28 bytes");
    assert.match((await passwordProblem("x".repeat(201)))!, /at most 200/);
  });

  it("refuse common and easily guessed passwords with zxcvbn's reason, and accept hard ones", async () => {
    const refused: [string, RegExp][] = [
      ["12345678", /^password is too easy to guess: This is one of the ten most used passwords\./],
      ["password1", /commonly used password/],
      ["qwertyuiop", /hundred most used/],
      ["aaaaaaaaaaaa", /Repeated characters/],
      ["abcdefghijk", /easy to guess/],
      ["P@ssw0rd", /similar to a commonly used password|commonly used/],
    ];
    for (const [password, reason] of refused) assert.match((await passwordProblem(password)) ?? "accepted", reason, password);
    for (const password of ["correct horse battery", "analytical-engine-1843", "Crème brûlée 42", "s3cret-enough"]) {
      assert.equal(await passwordProblem(password), undefined, password);
    }
  });

  it("refuse a password made of the person's own name or email", async () => {
    const password = "lovelace-ada";
    assert.equal(await passwordProblem(password), undefined, "strong for a stranger");
    assert.match((await passwordProblem(password, ["ada.lovelace1815@example.com", "Ada Lovelace"]))!, /^password is too easy to guess: It should not contain your name or email\./);
  });
});
