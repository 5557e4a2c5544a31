// SignInWithOidc and workspaces' auto-join domains, at identity's handlers over a real Postgres: matching by the
// provider's subject first, else by an email it verified; refusing an unverified one; SIGNUP for new accounts
// (an auto-join domain or a pending invitation admitting one as an invitation would); joining by domain.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Code, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import type { SignUpPolicy } from "@formsvc/platform/config.ts";
import { asCaller as as } from "@formsvc/platform/caller.ts";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { rejectsWith } from "@formsvc/platform/testing/rpc-assertions.ts";
import { IdentityService, Role } from "@formsvc/proto/identity/v1/identity_pb.js";
import { entities } from "../entities/index.ts";
import { migrations } from "../migrations/index.ts";
import { createIdentityHandlers, routes } from "./identity-handlers.ts";

let database: TestDatabase;
let orm: MikroORM;
let client: Client<typeof IdentityService>;

const issuer = "https://sso.example.com/realms/staff";
let counter = 0;
const unique = (local: string, domain = "example.com") => `${local}.${Date.now()}.${counter++}@${domain}`;
const subject = () => `subject-${Date.now()}-${counter++}`;

/** A client of handlers under `signUp`, over the same database. */
function clientUnder(signUp: SignUpPolicy) {
  const handlers = createIdentityHandlers({ orm, publicUrl: "http://forms.test", signUp });
  return createClient(IdentityService, createRouterTransport((router) => routes(router, handlers)));
}

/** An owner with a team workspace, and a plain member of it. */
async function team() {
  const owner = await client.createUser({ email: unique("owner"), name: "Olga" });
  const member = await client.createUser({ email: unique("member"), name: "Mia" });
  const { workspace } = await client.createWorkspace({ name: "Team", ownerEmail: owner.user!.email });
  await client.addMember({ workspaceId: workspace!.id, email: member.user!.email });
  return { ownerId: owner.user!.id, memberId: member.user!.id, workspaceId: workspace!.id };
}

async function passwordHashOf(userId: string): Promise<string | null> {
  const [row] = await orm.em.fork().getConnection().execute(`select "password_hash" from "identity"."users" where "id" = ?`, [userId]);
  return row.password_hash;
}

async function userCountWith(email: string): Promise<number> {
  const [row] = await orm.em.fork().getConnection().execute(`select count(*)::int as "n" from "identity"."users" where "email" = ?`, [email]);
  return row.n;
}

before(async () => {
  database = await createTestDatabase("identity_oidc_test");
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "identity", entities, migrations });
  client = clientUnder({ mode: "open" });
});

after(async () => {
  await orm?.close(true);
  await database?.drop();
});

describe("SignInWithOidc", () => {
  it("makes the account on the first sign-in (no password, the address verified, a personal workspace) and finds it by subject after, whatever the email is by then", async () => {
    const sub = subject();
    const email = unique("Ada");
    const first = await client.signInWithOidc({ issuer, subject: sub, email: email.toUpperCase(), emailVerified: true, name: "Ada Lovelace" });
    assert.equal(first.created, true);
    assert.deepEqual([first.user?.email, first.user?.name, first.user?.emailVerified], [email.toLowerCase(), "Ada Lovelace", true]);
    assert.equal(await passwordHashOf(first.user!.id), null);
    const { workspaces } = await client.listWorkspaces({}, as(first.user!.id));
    assert.deepEqual(workspaces.map((w) => [w.name, w.personal, w.role]), [["Ada Lovelace's workspace", true, Role.OWNER]]);

    const again = await client.signInWithOidc({ issuer, subject: sub, email, emailVerified: true, name: "Ada" });
    assert.deepEqual([again.user?.id, again.created], [first.user!.id, false]);
    // The provider changed the address (and has not verified the new one yet): the link still finds the account.
    const moved = await client.signInWithOidc({ issuer, subject: sub, email: unique("ada.new"), emailVerified: false, name: "Ada" });
    assert.deepEqual([moved.user?.id, moved.user?.email], [first.user!.id, email.toLowerCase()]);
    // The same subject at another issuer is another person.
    const elsewhere = await client.signInWithOidc({ issuer: "https://login.example.net", subject: sub, email: unique("other"), emailVerified: true, name: "" });
    assert.notEqual(elsewhere.user?.id, first.user!.id);
    assert.match(elsewhere.user!.name, /^other\./);
  });

  it("links an existing account by its verified email, marks the address verified, and refuses another subject of the issuer with that address", async () => {
    const email = unique("existing");
    const { user } = await client.createUser({ email, name: "Eve", password: "a password from before sso" });
    assert.equal(user?.emailVerified, false);
    const sub = subject();
    const linked = await client.signInWithOidc({ issuer, subject: sub, email, emailVerified: true, name: "Eve at the provider" });
    assert.deepEqual([linked.user?.id, linked.created, linked.user?.emailVerified, linked.user?.name], [user!.id, false, true, "Eve"]);
    assert.equal((await client.signInWithOidc({ issuer, subject: sub, email, emailVerified: true, name: "" })).user?.id, user!.id);

    await rejectsWith(
      client.signInWithOidc({ issuer, subject: subject(), email, emailVerified: true, name: "Someone given the address later" }),
      Code.PermissionDenied,
      "this email's account signs in as another person at the provider",
    );
  });

  it("refuses an email the provider has not verified, or none, making and linking nothing", async () => {
    const email = unique("unverified");
    await rejectsWith(
      client.signInWithOidc({ issuer, subject: subject(), email, emailVerified: false, name: "Una" }),
      Code.FailedPrecondition,
      `the provider has not verified ${email} (email_verified is not true): verify it there, then sign in again`,
    );
    assert.equal(await userCountWith(email), 0);
    // An existing account is not taken over by an unverified claim of its address either.
    const { user } = await client.createUser({ email: unique("victim"), name: "Vic" });
    await rejectsWith(client.signInWithOidc({ issuer, subject: subject(), email: user!.email, emailVerified: false, name: "" }), Code.FailedPrecondition);
    await rejectsWith(client.signInWithOidc({ issuer, subject: subject(), email: "", emailVerified: true, name: "" }), Code.FailedPrecondition, /gave no email address/);
    await rejectsWith(client.signInWithOidc({ issuer, subject: "", email, emailVerified: true, name: "" }), Code.InvalidArgument);
  });

  it("follows SIGNUP for new accounts: invite-only refuses a walk-in but admits a pending invitation's or an auto-join domain's address; existing accounts sign in", async () => {
    const strict = clientUnder({ mode: "invite-only" });
    const walkIn = unique("walk-in");
    await rejectsWith(
      strict.signInWithOidc({ issuer, subject: subject(), email: walkIn, emailVerified: true, name: "" }),
      Code.PermissionDenied,
      "sign-up is by invitation only: ask someone in a workspace here to invite you",
    );
    assert.equal(await userCountWith(walkIn), 0);

    const { ownerId, workspaceId } = await team();
    const invitedEmail = unique("invited");
    await strict.inviteMember({ workspaceId, email: invitedEmail }, as(ownerId));
    const invited = await strict.signInWithOidc({ issuer, subject: subject(), email: invitedEmail, emailVerified: true, name: "Ina" });
    assert.equal(invited.created, true);
    // The invitation still waits to be accepted: nobody joins without accepting.
    assert.deepEqual(invited.joinedWorkspaceIds, []);
    assert.deepEqual((await strict.listMyInvitations({}, as(invited.user!.id))).invitations.map((i) => i.workspaceId), [workspaceId]);

    const domain = `team${Date.now()}.example.org`;
    await strict.setAutoJoinDomains({ workspaceId, domains: [domain] }, as(ownerId));
    const colleague = await strict.signInWithOidc({ issuer, subject: subject(), email: unique("colleague", domain), emailVerified: true, name: "" });
    assert.deepEqual([colleague.created, colleague.joinedWorkspaceIds], [true, [workspaceId]]);

    const { user } = await client.createUser({ email: unique("made-by-operator"), name: "Op" });
    assert.equal((await strict.signInWithOidc({ issuer, subject: subject(), email: user!.email, emailVerified: true, name: "" })).user?.id, user!.id);
  });

  it("follows SIGNUP=domains: an outside address gets no account, and a workspace cannot open an outside domain by auto-join", async () => {
    const company = clientUnder({ mode: "domains", domains: ["example.com"] });
    await rejectsWith(
      company.signInWithOidc({ issuer, subject: subject(), email: unique("out", "elsewhere.test"), emailVerified: true, name: "" }),
      Code.PermissionDenied,
      "sign-up is open to addresses at example.com only",
    );
    assert.equal((await company.signInWithOidc({ issuer, subject: subject(), email: unique("staff"), emailVerified: true, name: "" })).created, true);
    const { ownerId, workspaceId } = await team();
    await rejectsWith(
      company.setAutoJoinDomains({ workspaceId, domains: ["example.com", "elsewhere.test"] }, as(ownerId)),
      Code.PermissionDenied,
      "auto-join domains follow SIGNUP: invitations go to addresses at example.com only",
    );
    assert.deepEqual((await company.setAutoJoinDomains({ workspaceId, domains: ["example.com"] }, as(ownerId))).domains, ["example.com"]);
    await company.setAutoJoinDomains({ workspaceId, domains: [] }, as(ownerId));
  });
});

describe("auto-join domains", () => {
  it("are set by the owner only, read by the owner and admins, normalised, and checked", async () => {
    const { ownerId, memberId, workspaceId } = await team();
    const set = await client.setAutoJoinDomains({ workspaceId, domains: [" @Example.ORG ", "example.net", "example.org"] }, as(ownerId));
    assert.deepEqual(set.domains, ["example.net", "example.org"]);
    assert.deepEqual((await client.getAutoJoinDomains({ workspaceId }, as(ownerId))).domains, ["example.net", "example.org"]);

    await rejectsWith(client.setAutoJoinDomains({ workspaceId, domains: ["example.com"] }, as(memberId)), Code.PermissionDenied, "only the workspace's owner sets its auto-join domains");
    await rejectsWith(client.getAutoJoinDomains({ workspaceId }, as(memberId)), Code.PermissionDenied);
    const stranger = await client.createUser({ email: unique("stranger"), name: "Stan" });
    await rejectsWith(client.getAutoJoinDomains({ workspaceId }, as(stranger.user!.id)), Code.NotFound);
    await rejectsWith(client.setAutoJoinDomains({ workspaceId, domains: ["*.example.org"] }, as(ownerId)), Code.InvalidArgument, /"\*\.example\.org" is not an email domain/);
    await rejectsWith(
      client.setAutoJoinDomains({ workspaceId, domains: Array.from({ length: 21 }, (_, i) => `d${i}.example.org`) }, as(ownerId)),
      Code.InvalidArgument,
      "at most 20 auto-join domains",
    );
    assert.deepEqual((await client.setAutoJoinDomains({ workspaceId, domains: [] }, as(ownerId))).domains, []);
    assert.deepEqual((await client.getAutoJoinDomains({ workspaceId }, as(ownerId))).domains, []);
  });

  it("join a new account and an existing one on their first sign-in through OIDC, as members, once", async () => {
    const { ownerId, workspaceId } = await team();
    const domain = `acme${Date.now()}.example.org`;
    await client.setAutoJoinDomains({ workspaceId, domains: [domain] }, as(ownerId));
    const roleIn = async (userId: string) => (await client.listMembers({ workspaceId })).members.find((m) => m.user?.id === userId)?.role;

    const sub = subject();
    const newcomer = await client.signInWithOidc({ issuer, subject: sub, email: unique("new", domain), emailVerified: true, name: "Nia" });
    assert.deepEqual([newcomer.created, newcomer.joinedWorkspaceIds], [true, [workspaceId]]);
    assert.equal(await roleIn(newcomer.user!.id), Role.MEMBER);
    // Having left, a later sign-in does not bring them back.
    await client.removeMember({ workspaceId, userId: newcomer.user!.id }, as(newcomer.user!.id));
    assert.deepEqual((await client.signInWithOidc({ issuer, subject: sub, email: newcomer.user!.email, emailVerified: true, name: "" })).joinedWorkspaceIds, []);
    assert.equal(await roleIn(newcomer.user!.id), undefined);

    const { user } = await client.createUser({ email: unique("before", domain), name: "Bea" });
    const linked = await client.signInWithOidc({ issuer, subject: subject(), email: user!.email, emailVerified: true, name: "" });
    assert.deepEqual([linked.created, linked.joinedWorkspaceIds], [false, [workspaceId]]);
    assert.equal(await roleIn(user!.id), Role.MEMBER);
    // Someone at another domain joins nothing.
    assert.deepEqual((await client.signInWithOidc({ issuer, subject: subject(), email: unique("outsider", "example.net"), emailVerified: true, name: "" })).joinedWorkspaceIds, []);
  });
});
