import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { signUpPolicyOf } from "@formsvc/platform/config.ts";
import { signUpRefusal } from "./sign-up-policy.ts";

describe("SIGNUP", () => {
  it("parses open (the default), invite-only and a list of domains; anything else is a configuration error", () => {
    assert.deepEqual(signUpPolicyOf({}), { mode: "open" });
    assert.deepEqual(signUpPolicyOf({ SIGNUP: " Invite-Only " }), { mode: "invite-only" });
    assert.deepEqual(signUpPolicyOf({ SIGNUP: "domains:Example.com, @example.org" }), { mode: "domains", domains: ["example.com", "example.org"] });
    for (const bad of ["closed", "domains:", "domains:not a domain", "domains:localhost"]) {
      assert.throws(() => signUpPolicyOf({ SIGNUP: bad }), /SIGNUP must be open, invite-only or domains:/, bad);
    }
  });

  it("refuses and admits by mode: invite-only admits invitations only; domains admits their addresses alone, either way", () => {
    const open = signUpPolicyOf({});
    const inviteOnly = signUpPolicyOf({ SIGNUP: "invite-only" });
    const domains = signUpPolicyOf({ SIGNUP: "domains:example.com" });
    assert.equal(signUpRefusal(open, "a@anywhere.test", "sign-up"), undefined);
    assert.equal(signUpRefusal(inviteOnly, "a@example.com", "sign-up"), "sign-up is by invitation only: ask someone in a workspace here to invite you");
    assert.equal(signUpRefusal(inviteOnly, "a@anywhere.test", "invitation"), undefined);
    assert.equal(signUpRefusal(domains, "a@example.com", "sign-up"), undefined);
    assert.equal(signUpRefusal(domains, "a@example.com", "invitation"), undefined);
    assert.equal(signUpRefusal(domains, "a@mail.example.com", "sign-up"), "sign-up is open to addresses at example.com only");
    assert.equal(signUpRefusal(domains, "a@example.com.evil.test", "invitation"), "invitations go to addresses at example.com only");
  });
});
