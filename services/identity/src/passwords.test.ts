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

  it("name what is wrong with a new password", () => {
    assert.match(passwordProblem("1234567")!, /at least 8/);
    assert.equal(passwordProblem("12345678"), undefined);
    assert.equal(passwordProblem("🙂".repeat(200)), undefined, "characters, not bytes");
    assert.match(passwordProblem("x".repeat(201))!, /at most 200/);
  });
});
