import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Code, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { Secret, TOTP } from "otpauth";
import { asCaller } from "@formsvc/platform/caller.ts";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { eventually } from "@formsvc/platform/testing/eventually.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { rejectsWith } from "@formsvc/platform/testing/rpc-assertions.ts";
import { IdentityService, Role } from "@formsvc/proto/identity/v1/identity_pb.js";
import { entities } from "../entities/index.ts";
import { migrations } from "../migrations/index.ts";
import { createIdentityHandlers, routes } from "./identity-handlers.ts";
import { maxSecondFactorFailures, recoveryCodeCount, secondFactorChallengeLifetimeMs } from "./two-factor.ts";

let database: TestDatabase;
let orm: MikroORM;
let client: Client<typeof IdentityService>;
/** Added to the real time by the handlers' clock (a code of the next step is a new code). */
let skewMs = 0;
const clock = () => Date.now() + skewMs;
let counter = 0;
const uniqueEmail = (local: string) => `${local}.${Date.now()}.${counter++}@example.com`;
const password = "a long and unusual passphrase";

/** The code an authenticator app shows now (by the handlers' clock) for `secret`. */
const codeOf = (secret: string, at = clock()) => new TOTP({ algorithm: "SHA1", digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate({ timestamp: at });
/** Moves the clock to the next 30-second step: the codes of the last one were used. */
const nextStep = () => (skewMs += 30_000);

before(async () => {
  database = await createTestDatabase("identity_two_factor_test");
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "identity", entities, migrations });
  const handlers = createIdentityHandlers({ orm, now: () => new Date(clock()), publicUrl: "http://forms.test", secretKey: "a test secret key" });
  client = createClient(IdentityService, createRouterTransport((router) => routes(router, handlers)));
});

after(async () => {
  await orm?.close(true);
  await database?.drop();
});

async function signedUp(local: string) {
  const email = uniqueEmail(local);
  const { user, workspace } = await client.signUp({ email, name: local, password });
  return { email, user: user!, workspace: workspace! };
}

/** Signs `userId` up for a second factor: the secret and the recovery codes. */
async function enrolled(userId: string) {
  const begun = await client.beginTwoFactorEnrolment({}, asCaller(userId));
  const { recoveryCodes } = await client.confirmTwoFactorEnrolment({ code: codeOf(begun.secret) }, asCaller(userId));
  nextStep();
  return { secret: begun.secret, recoveryCodes };
}

describe("two-factor sign-in", () => {
  it("enrols an authenticator: an otpauth URI, a wrong code refused, then ten recovery codes; the secret is stored sealed", async () => {
    const { email, user } = await signedUp("enrolling");
    const begun = await client.beginTwoFactorEnrolment({}, asCaller(user.id));
    assert.match(begun.secret, /^[A-Z2-7]{32}$/);
    const uri = new URL(begun.uri);
    assert.equal(uri.protocol, "otpauth:");
    assert.equal(uri.searchParams.get("secret"), begun.secret);
    assert.equal(uri.searchParams.get("issuer"), "formsvc");
    assert.ok(decodeURIComponent(uri.pathname).endsWith(email), uri.pathname);
    // Not on until confirmed.
    assert.equal((await client.getCurrentUser({}, asCaller(user.id))).user?.twoFactorEnabled, false);
    await rejectsWith(client.confirmTwoFactorEnrolment({ code: "000000" === codeOf(begun.secret) ? "111111" : "000000" }, asCaller(user.id)), Code.InvalidArgument, /^code: that code is not right/);
    const { recoveryCodes } = await client.confirmTwoFactorEnrolment({ code: codeOf(begun.secret) }, asCaller(user.id));
    assert.equal(recoveryCodes.length, recoveryCodeCount);
    for (const code of recoveryCodes) assert.match(code, /^[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}$/);
    assert.equal(new Set(recoveryCodes).size, recoveryCodeCount);
    assert.equal((await client.getCurrentUser({}, asCaller(user.id))).user?.twoFactorEnabled, true);
    const status = await client.getTwoFactorStatus({}, asCaller(user.id));
    assert.deepEqual([status.enabled, status.recoveryCodesLeft], [true, recoveryCodeCount]);
    await rejectsWith(client.beginTwoFactorEnrolment({}, asCaller(user.id)), Code.AlreadyExists, /is on already/);
    // Neither the secret nor a recovery code lies readable in the database.
    const [row] = await orm.em.getConnection().execute(`select * from "identity"."users" where "id" = ?`, [user.id]);
    const codes = await orm.em.getConnection().execute(`select * from "identity"."recovery_codes" where "user_id" = ?`, [user.id]);
    const stored = JSON.stringify([row, codes]);
    assert.ok(!stored.includes(begun.secret) && !stored.toLowerCase().includes(begun.secret.toLowerCase()));
    for (const code of recoveryCodes) assert.ok(!stored.includes(code) && !stored.includes(code.replaceAll("-", "")));
  });

  it("a password sign-in of an enrolled person is a challenge that only a fresh code passes: a used code, a wrong one and a second use refused", async () => {
    const { email, user } = await signedUp("signing-in");
    const { secret } = await enrolled(user.id);
    const verified = await client.verifyPassword({ email, password });
    assert.equal(verified.user?.id, user.id);
    assert.ok(verified.secondFactorChallenge.length >= 40);
    const code = codeOf(secret);
    await rejectsWith(client.passSecondFactor({ challenge: verified.secondFactorChallenge, code: code === "123456" ? "654321" : "123456" }), Code.InvalidArgument, /not right/);
    const passed = await client.passSecondFactor({ challenge: verified.secondFactorChallenge, code });
    assert.equal(passed.user?.id, user.id);
    // The challenge is spent, and the code too: the same code with a new challenge is refused.
    await rejectsWith(client.passSecondFactor({ challenge: verified.secondFactorChallenge, code }), Code.Unauthenticated, /sign in again/);
    const again = await client.verifyPassword({ email, password });
    await rejectsWith(client.passSecondFactor({ challenge: again.secondFactorChallenge, code }), Code.InvalidArgument, /not right/);
    nextStep();
    assert.equal((await client.passSecondFactor({ challenge: again.secondFactorChallenge, code: codeOf(secret) })).user?.id, user.id);
    // Without a second factor, no challenge.
    const plain = await signedUp("plain");
    assert.equal((await client.verifyPassword({ email: plain.email, password })).secondFactorChallenge, "");
  });

  it("a challenge ends after five wrong codes, and after five minutes", async () => {
    const { email, user } = await signedUp("guessing");
    const { secret } = await enrolled(user.id);
    const { secondFactorChallenge: challenge } = await client.verifyPassword({ email, password });
    const wrong = codeOf(secret) === "000000" ? "000001" : "000000";
    for (let i = 1; i < maxSecondFactorFailures; i++) await rejectsWith(client.passSecondFactor({ challenge, code: wrong }), Code.InvalidArgument, /not right/);
    await rejectsWith(client.passSecondFactor({ challenge, code: wrong }), Code.Unauthenticated, /sign in again/);
    await rejectsWith(client.passSecondFactor({ challenge, code: codeOf(secret) }), Code.Unauthenticated, /sign in again/);

    const late = await client.verifyPassword({ email, password });
    skewMs += secondFactorChallengeLifetimeMs + 1000;
    await rejectsWith(client.passSecondFactor({ challenge: late.secondFactorChallenge, code: codeOf(secret) }), Code.Unauthenticated, /sign in again/);
  });

  it("a recovery code passes once, typed in any case and without dashes; new codes replace the old ones", async () => {
    const { email, user } = await signedUp("recovering");
    const { secret, recoveryCodes } = await enrolled(user.id);
    const first = await client.verifyPassword({ email, password });
    assert.equal((await client.passSecondFactor({ challenge: first.secondFactorChallenge, code: recoveryCodes[0].toUpperCase().replaceAll("-", "") })).user?.id, user.id);
    const second = await client.verifyPassword({ email, password });
    await rejectsWith(client.passSecondFactor({ challenge: second.secondFactorChallenge, code: recoveryCodes[0] }), Code.InvalidArgument, /not right/);
    assert.equal((await client.getTwoFactorStatus({}, asCaller(user.id))).recoveryCodesLeft, recoveryCodeCount - 1);

    const { recoveryCodes: fresh } = await client.regenerateRecoveryCodes({ code: codeOf(secret) }, asCaller(user.id));
    nextStep();
    assert.equal(fresh.length, recoveryCodeCount);
    await rejectsWith(client.passSecondFactor({ challenge: second.secondFactorChallenge, code: recoveryCodes[1] }), Code.InvalidArgument, /not right/);
    assert.equal((await client.passSecondFactor({ challenge: second.secondFactorChallenge, code: fresh[1] })).user?.id, user.id);
  });

  it("turning it off takes a code; then the password alone signs in again", async () => {
    const { email, user } = await signedUp("leaving");
    const { secret } = await enrolled(user.id);
    await rejectsWith(client.disableTwoFactor({ code: "" }, asCaller(user.id)), Code.InvalidArgument, /^code: enter a code/);
    await client.disableTwoFactor({ code: codeOf(secret) }, asCaller(user.id));
    assert.equal((await client.verifyPassword({ email, password })).secondFactorChallenge, "");
    const status = await client.getTwoFactorStatus({}, asCaller(user.id));
    assert.deepEqual([status.enabled, status.recoveryCodesLeft], [false, 0]);
    await rejectsWith(client.disableTwoFactor({ code: codeOf(secret) }, asCaller(user.id)), Code.FailedPrecondition, /not on/);
  });

  it("an owner with a second factor may require one of the workspace's members: until they enrol their sessions are marked, and they cannot turn it off", async () => {
    const owner = await signedUp("owner");
    const member = await signedUp("member");
    const { workspace } = await client.createWorkspace({ name: "Careful team" }, asCaller(owner.user.id));
    await client.addMember({ workspaceId: workspace!.id, email: member.email, role: Role.MEMBER });
    await rejectsWith(
      client.setWorkspaceTwoFactorRequirement({ workspaceId: workspace!.id, required: true }, asCaller(owner.user.id)),
      Code.FailedPrecondition,
      /for yourself first/,
    );
    await enrolled(owner.user.id);
    await rejectsWith(
      client.setWorkspaceTwoFactorRequirement({ workspaceId: workspace!.id, required: true }, asCaller(member.user.id)),
      Code.PermissionDenied,
      /only the workspace's owner/,
    );
    const set = await client.setWorkspaceTwoFactorRequirement({ workspaceId: workspace!.id, required: true }, asCaller(owner.user.id));
    assert.equal(set.workspace?.requireTwoFactor, true);

    const { token } = await client.createSession({ userId: member.user.id });
    assert.equal((await client.resolveSession({ token })).twoFactorRequired, true);
    assert.deepEqual((await client.getTwoFactorStatus({}, asCaller(member.user.id))).requiredBy, ["Careful team"]);
    const { secret } = await enrolled(member.user.id);
    assert.equal((await client.resolveSession({ token })).twoFactorRequired, false);
    await rejectsWith(client.disableTwoFactor({ code: codeOf(secret) }, asCaller(member.user.id)), Code.FailedPrecondition, /Careful team requires it/);
    // The owner's own session was never held back.
    const ownerSession = await client.createSession({ userId: owner.user.id });
    assert.equal((await client.resolveSession({ token: ownerSession.token })).twoFactorRequired, false);
  });

  it("a password reset by mail asks for the second factor too; a wrong code leaves the link usable", async () => {
    const { email, user } = await signedUp("resetting");
    const { secret } = await enrolled(user.id);
    await client.requestPasswordReset({ email });
    const mail = await eventually(
      async () => (await orm.em.getConnection().execute<{ text: string }[]>(`select "text" from "identity"."mail_outbox" where "to_address" = ? and "subject" = 'Set a new password'`, [email]))[0],
      10_000,
      "the reset mail",
    );
    const token = decodeURIComponent(/reset-password\?token=([\w-]+)/.exec(mail.text)![1]);
    const newPassword = "another long and unusual passphrase";
    await rejectsWith(client.resetPassword({ token, password: newPassword }), Code.InvalidArgument, /^second_factor_code: enter a code/);
    await rejectsWith(client.resetPassword({ token, password: newPassword, secondFactorCode: "12345a" }), Code.InvalidArgument, /^second_factor_code: that code is not right/);
    const reset = await client.resetPassword({ token, password: newPassword, secondFactorCode: codeOf(secret) });
    assert.equal(reset.user?.id, user.id);
    assert.ok((await client.verifyPassword({ email, password: newPassword })).secondFactorChallenge);
  });

  it("without SECRET_KEY nobody can enrol (and nothing is stored readable)", async () => {
    const keyless = createIdentityHandlers({ orm, publicUrl: "http://forms.test" });
    const keylessClient = createClient(IdentityService, createRouterTransport((router) => routes(router, keyless)));
    const { user } = await signedUp("keyless");
    await rejectsWith(keylessClient.beginTwoFactorEnrolment({}, asCaller(user.id)), Code.FailedPrecondition, /needs SECRET_KEY/);
  });
});
