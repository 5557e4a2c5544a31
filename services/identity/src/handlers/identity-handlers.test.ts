import assert from "node:assert/strict";
import { eventually } from "@formsvc/platform/testing/eventually.ts";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { assertMigrationsApplyOnce, createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { asCaller } from "@formsvc/platform/caller.ts";
import { workspaceChangesChannel } from "@formsvc/platform/pg-notices.ts";
import { recordChannel } from "@formsvc/platform/testing/notices.ts";
import { BeginIdempotencyResponse_Outcome as Outcome, IdentityService, Plan, Role } from "@formsvc/proto/identity/v1/identity_pb.js";
import { generateApiKey, hashSecret } from "../api-keys.ts";
import { entities } from "../entities/index.ts";
import { idempotencyLeaseMs, idempotencyTtlMs } from "../idempotency.ts";
import { migrations } from "../migrations/index.ts";
import { createIdentityHandlers, routes, sessionLifetimeMs } from "./identity-handlers.ts";
import { rejectsWith } from "@formsvc/platform/testing/rpc-assertions.ts";

let database: TestDatabase;
let orm: MikroORM;
let client: Client<typeof IdentityService>;
/** Added to the real time by the handlers' clock. */
let skewMs = 0;

const as = asCaller;
let emailCounter = 0;
const uniqueEmail = (local = "person") => `${local}.${Date.now()}.${emailCounter++}@example.com`;

/** A user the operator made (never mailed, so unverified), or with `verified` one whose email is verified. */
async function newUser(init: { email?: string; name?: string; plan?: Plan; verified?: boolean } = {}) {
  const res = await client.createUser({ email: init.email ?? uniqueEmail(), name: init.name ?? "", plan: init.plan });
  assert.ok(res.user && res.workspace);
  if (init.verified) await markVerified(res.user.id);
  return { user: res.user, workspace: res.workspace };
}

/** Marks a user's email verified, as following a mailed link does (that path: "mailed links" below). */
async function markVerified(userId: string): Promise<void> {
  await orm.em.fork().getConnection().execute(`update "identity"."users" set "email_verified_at" = now() where "id" = ?`, [userId], "run");
}

before(async () => {
  database = await createTestDatabase("identity_test");
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "identity", entities, migrations });
  const handlers = createIdentityHandlers({ orm, now: () => new Date(Date.now() + skewMs), publicUrl: "http://forms.test" });
  client = createClient(IdentityService, createRouterTransport((router) => routes(router, handlers)));
});

after(async () => {
  await orm?.close(true);
  await database?.drop();
});

describe("migrations", () => {
  it("apply once: a second replica opening the same database finds nothing to do", async () => {
    await assertMigrationsApplyOnce({ databaseUrl: database.databaseUrl, schema: "identity", entities, migrations }, [
      "Migration20261122000000_initial",
      "Migration20261210000000_passwords",
      "Migration20261223000000_idempotency_keys",
      "Migration20261228000000_mail_and_email_links",
      "Migration20261230000000_workspace_roles",
      "Migration20261231000000_api_key_change_notices",
      "Migration20270120000000_workspace_change_notices",
      "Migration20261127000000_retention_indexes",
      "Migration20261128000000_invitation_ids",
      "Migration20261128000100_administrator",
      "Migration20261128000200_oidc_sign_in",
      "Migration20261128000300_two_factor",
      "Migration20261128000400_audit_events",
      "Migration20261128000500_user_locale",
    ]);
  });
});

describe("users", () => {
  it("CreateUser makes the user and a personal free workspace it owns", async () => {
    const email = uniqueEmail("Ada.Lovelace");
    const { user, workspace } = await newUser({ email: `  ${email.toUpperCase()} ` });
    assert.equal(user.email, email.toLowerCase());
    assert.equal(user.name, email.slice(0, email.indexOf("@")).toLowerCase());
    assert.match(user.id, /^[0-9A-Za-z]{16}$/);
    assert.ok(user.createdAt);
    assert.ok(Math.abs(timestampDate(user.createdAt).getTime() - Date.now()) < 60_000);

    assert.equal(workspace.name, `${user.name}'s workspace`);
    assert.equal(workspace.ownerId, user.id);
    assert.equal(workspace.personal, true);
    assert.equal(workspace.plan, Plan.FREE);
    assert.equal(workspace.entitlements?.removeBranding, false);
    assert.ok(workspace.createdAt);

    const current = await client.getCurrentUser({}, as(user.id));
    assert.equal(current.user?.id, user.id);
    assert.equal(current.user?.email, user.email);

    const list = await client.listWorkspaces({}, as(user.id));
    assert.deepEqual(
      list.workspaces.map((w) => w.id),
      [workspace.id],
    );
    assert.equal(list.hasMore, false);
  });

  it("CreateUser keeps a given name and plan", async () => {
    const { user, workspace } = await newUser({ name: "  Grace Hopper ", plan: Plan.PRO });
    assert.equal(user.name, "Grace Hopper");
    assert.equal(workspace.name, "Grace Hopper's workspace");
    assert.equal(workspace.plan, Plan.PRO);
    assert.equal(workspace.entitlements?.removeBranding, true);
  });

  it("refuses a second user with the same email, whatever its case", async () => {
    const email = uniqueEmail("dup");
    await newUser({ email });
    await rejectsWith(client.createUser({ email: email.toUpperCase() }), Code.AlreadyExists, /already exists/);
    const rows = await orm.em.fork().getConnection().execute(`select count(*)::int as n from "identity"."users" where email = ?`, [
      email,
    ]);
    assert.equal(rows[0].n, 1);
  });

  it("refuses a malformed email or name, naming the field", async () => {
    for (const email of ["", "no-at-sign", "a@b", "two@@example.com", "sp ace@example.com", `${"x".repeat(250)}@example.com`]) {
      await rejectsWith(client.createUser({ email }), Code.InvalidArgument, /^email /);
    }
    await rejectsWith(client.createUser({ email: uniqueEmail(), name: "n".repeat(101) }), Code.InvalidArgument, /^name /);
    await rejectsWith(client.createUser({ email: uniqueEmail(), plan: 9 as Plan }), Code.InvalidArgument, /^plan /);
  });

  it("caller calls need a caller, and one that exists", async () => {
    await rejectsWith(client.getCurrentUser({}), Code.Unauthenticated);
    await rejectsWith(client.listWorkspaces({}), Code.Unauthenticated);
    await rejectsWith(client.getWorkspace({ workspaceId: "x" }), Code.Unauthenticated);
    await rejectsWith(client.getCurrentUser({}, as("nobody-at-all")), Code.Unauthenticated);
  });

  it("SetUserLocale keeps the caller's app language as Intl writes it, clears it when empty, refuses a non-tag", async () => {
    const { user } = await newUser();
    assert.equal(user.locale, "", "none chosen at first");
    assert.equal((await client.setUserLocale({ locale: "de-at" }, as(user.id))).user?.locale, "de-AT");
    assert.equal((await client.getCurrentUser({}, as(user.id))).user?.locale, "de-AT");
    await rejectsWith(client.setUserLocale({ locale: "not a tag" }, as(user.id)), Code.InvalidArgument, /^locale must be a BCP 47 language tag/);
    assert.equal((await client.getCurrentUser({}, as(user.id))).user?.locale, "de-AT", "a refused tag changes nothing");
    assert.equal((await client.setUserLocale({ locale: "" }, as(user.id))).user?.locale, "");
    await rejectsWith(client.setUserLocale({ locale: "de" }), Code.Unauthenticated);
  });
});

describe("workspaces", () => {
  it("CreateWorkspace makes the owner a member; unknown owner is NOT_FOUND", async () => {
    const { user } = await newUser();
    const res = await client.createWorkspace({ ownerEmail: user.email.toUpperCase(), name: " Team ", plan: Plan.PRO });
    const ws = res.workspace!;
    assert.equal(ws.name, "Team");
    assert.equal(ws.ownerId, user.id);
    assert.equal(ws.personal, false);
    assert.equal(ws.plan, Plan.PRO);
    assert.equal(ws.entitlements?.removeBranding, true);
    assert.equal((await client.getWorkspace({ workspaceId: ws.id }, as(user.id))).workspace?.id, ws.id);

    await rejectsWith(client.createWorkspace({ ownerEmail: uniqueEmail("ghost"), name: "X" }), Code.NotFound);
    await rejectsWith(client.createWorkspace({ ownerEmail: user.email, name: "  " }), Code.InvalidArgument, /^name /);
  });

  it("hides a workspace from a non-member behind the same NOT_FOUND as a missing one", async () => {
    const owner = await newUser();
    const stranger = await newUser();
    const notMember = await rejectsWith(
      client.getWorkspace({ workspaceId: owner.workspace.id }, as(stranger.user.id)),
      Code.NotFound,
    );
    const missing = await rejectsWith(
      client.getWorkspace({ workspaceId: "doesNotExist0000" }, as(stranger.user.id)),
      Code.NotFound,
    );
    assert.equal(notMember.rawMessage, "workspace not found");
    assert.equal(missing.rawMessage, notMember.rawMessage);
    const list = await client.listWorkspaces({ limit: 0 }, as(stranger.user.id));
    assert.ok(!list.workspaces.some((w) => w.id === owner.workspace.id));
  });

  it("AddMember lets the member see the workspace; it is idempotent", async () => {
    const owner = await newUser();
    const member = await newUser();
    const wsId = owner.workspace.id;
    await rejectsWith(client.getWorkspace({ workspaceId: wsId }, as(member.user.id)), Code.NotFound);

    const added = await client.addMember({ workspaceId: wsId, email: member.user.email.toUpperCase() });
    assert.equal(added.workspace?.id, wsId);
    assert.equal(added.user?.id, member.user.id);
    const again = await client.addMember({ workspaceId: wsId, email: member.user.email });
    assert.equal(again.workspace?.id, wsId);

    const seen = await client.getWorkspace({ workspaceId: wsId }, as(member.user.id));
    assert.equal(seen.workspace?.ownerId, owner.user.id);
    const list = await client.listWorkspaces({}, as(member.user.id));
    assert.deepEqual(list.workspaces.map((w) => w.id).sort(), [member.workspace.id, wsId].sort());

    const rows = await orm.em.fork().getConnection().execute(
      `select role from "identity"."memberships" where workspace_id = ? order by role`,
      [wsId],
    );
    assert.deepEqual(
      rows.map((r) => r.role),
      ["member", "owner"],
    );

    await rejectsWith(client.addMember({ workspaceId: "doesNotExist0000", email: member.user.email }), Code.NotFound);
    await rejectsWith(client.addMember({ workspaceId: wsId, email: uniqueEmail("ghost") }), Code.NotFound);
  });

  it("SetPlan switches entitlements; remove_branding only on pro", async () => {
    const { user, workspace } = await newUser();
    assert.equal(workspace.entitlements?.removeBranding, false);
    const pro = await client.setPlan({ workspaceId: workspace.id, plan: Plan.PRO });
    assert.equal(pro.workspace?.plan, Plan.PRO);
    assert.equal(pro.workspace?.entitlements?.removeBranding, true);
    const seen = await client.getWorkspace({ workspaceId: workspace.id }, as(user.id));
    assert.equal(seen.workspace?.entitlements?.removeBranding, true);
    const free = await client.setPlan({ workspaceId: workspace.id, plan: Plan.FREE });
    assert.equal(free.workspace?.plan, Plan.FREE);
    assert.equal(free.workspace?.entitlements?.removeBranding, false);

    await rejectsWith(client.setPlan({ workspaceId: workspace.id, plan: Plan.UNSPECIFIED }), Code.InvalidArgument, /^plan /);
    await rejectsWith(client.setPlan({ workspaceId: "doesNotExist0000", plan: Plan.PRO }), Code.NotFound);
  });

  it("GetWorkspaceEntitlements answers without a caller, following the plan; unknown is NOT_FOUND", async () => {
    const { workspace } = await newUser();
    const entitlements = async () => (await client.getWorkspaceEntitlements({ workspaceId: workspace.id })).entitlements;
    assert.equal((await entitlements())?.removeBranding, false);
    await client.setPlan({ workspaceId: workspace.id, plan: Plan.PRO });
    assert.equal((await entitlements())?.removeBranding, true);
    await client.setPlan({ workspaceId: workspace.id, plan: Plan.FREE });
    assert.equal((await entitlements())?.removeBranding, false);

    // a caller, member or not, changes nothing: the call is internal
    const stranger = await newUser();
    const asStranger = await client.getWorkspaceEntitlements({ workspaceId: workspace.id }, as(stranger.user.id));
    assert.equal(asStranger.entitlements?.removeBranding, false);

    const missing = await rejectsWith(client.getWorkspaceEntitlements({ workspaceId: "doesNotExist0000" }), Code.NotFound);
    assert.equal(missing.rawMessage, "workspace not found");
    await rejectsWith(client.getWorkspaceEntitlements({ workspaceId: "" }), Code.NotFound);
  });

  it("ListWorkspaces pages in creation order; limit 0 means all", async () => {
    const { user, workspace: personal } = await newUser();
    const ids = [personal.id];
    for (const name of ["B", "C", "D"]) {
      skewMs += 5;
      ids.push((await client.createWorkspace({ ownerEmail: user.email, name })).workspace!.id);
    }
    const all = await client.listWorkspaces({ limit: 0 }, as(user.id));
    assert.deepEqual(
      all.workspaces.map((w) => w.id),
      ids,
    );
    assert.equal(all.hasMore, false);

    const p1 = await client.listWorkspaces({ page: 1, limit: 3 }, as(user.id));
    assert.deepEqual(
      p1.workspaces.map((w) => w.id),
      ids.slice(0, 3),
    );
    assert.equal(p1.hasMore, true);
    const p2 = await client.listWorkspaces({ page: 2, limit: 3 }, as(user.id));
    assert.deepEqual(
      p2.workspaces.map((w) => w.id),
      ids.slice(3),
    );
    assert.equal(p2.hasMore, false);
    const p3 = await client.listWorkspaces({ page: 2, limit: 0 }, as(user.id));
    assert.equal(p3.workspaces.length, 0);

    await rejectsWith(client.listWorkspaces({ page: -1, limit: 2 }, as(user.id)), Code.InvalidArgument);
    await rejectsWith(client.listWorkspaces({ limit: 501 }, as(user.id)), Code.InvalidArgument);
  });
});

describe("API keys", () => {
  it("creates a key for an email, authenticates it, and refuses it at once after deletion", async () => {
    const { user } = await newUser();
    const created = await client.createApiKey({ email: user.email.toUpperCase(), name: " CI " });
    assert.match(created.key, /^fk-[A-Za-z0-9_-]{43}$/);
    const apiKey = created.apiKey!;
    assert.equal(apiKey.name, "CI");
    assert.equal(apiKey.prefix, created.key.slice(0, 12));
    assert.equal(apiKey.lastUsedAt, undefined);

    // Only the hash and the prefix are stored.
    const rows = await orm.em.fork().getConnection().execute(`select * from "identity"."api_keys" where id = ?`, [apiKey.id]);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].key_hash, hashSecret(created.key));
    assert.ok(!JSON.stringify(rows[0]).includes(created.key.slice(12)));

    const auth = await client.authenticateApiKey({ key: created.key });
    assert.equal(auth.user?.id, user.id);
    assert.equal(auth.user?.email, user.email);
    assert.equal(auth.apiKeyId, apiKey.id);

    await client.deleteApiKey({ id: apiKey.id });
    await rejectsWith(client.authenticateApiKey({ key: created.key }), Code.Unauthenticated, /^invalid API key$/);
    await rejectsWith(client.deleteApiKey({ id: apiKey.id }), Code.NotFound);
    assert.equal((await client.listApiKeys({ email: user.email })).apiKeys.length, 0);
  });

  it("refuses malformed and unknown keys with UNAUTHENTICATED", async () => {
    const { user } = await newUser();
    const { key } = await client.createApiKey({ email: user.email, name: "real" });
    const last = key.at(-1) === "A" ? "B" : "A";
    for (const bad of ["", "Bearer", "fk-", "fk-short", key.slice(0, -1), `${key.slice(0, 20)}*${key.slice(21)}`, ` ${key}`]) {
      await rejectsWith(client.authenticateApiKey({ key: bad }), Code.Unauthenticated, /^invalid API key$/);
    }
    // Same prefix, different secret: found by prefix, refused by the hash.
    await rejectsWith(client.authenticateApiKey({ key: key.slice(0, -1) + last }), Code.Unauthenticated);
    await rejectsWith(client.authenticateApiKey({ key: generateApiKey() }), Code.Unauthenticated);
    assert.equal((await client.authenticateApiKey({ key })).user?.id, user.id);
  });

  it("answers many keys in one call, in order, a refused key without a user; at most 256", async () => {
    const ada = await newUser();
    const bo = await newUser();
    const adaKey = await client.createApiKey({ email: ada.user.email, name: "a" });
    const boKey = await client.createApiKey({ email: bo.user.email, name: "b" });
    const { results } = await client.authenticateApiKeys({ keys: [adaKey.key, "fk-short", generateApiKey(), boKey.key, adaKey.key] });
    assert.deepEqual(
      results.map((r) => [r.user?.id, r.apiKeyId]),
      [[ada.user.id, adaKey.apiKey!.id], [undefined, ""], [undefined, ""], [bo.user.id, boKey.apiKey!.id], [ada.user.id, adaKey.apiKey!.id]],
    );
    await client.deleteApiKey({ id: boKey.apiKey!.id });
    assert.equal((await client.authenticateApiKeys({ keys: [boKey.key] })).results[0].user, undefined, "a deleted key, at once");
    await rejectsWith(client.authenticateApiKeys({ keys: Array(257).fill(adaKey.key) }), Code.InvalidArgument, /at most 256/);
  });

  it("a caller's keys are their own: email ignored, others' keys NOT_FOUND", async () => {
    const alice = await newUser();
    const bob = await newUser();
    const own = await client.createApiKey({ email: bob.user.email, name: "mine" }, as(alice.user.id));
    assert.equal((await client.authenticateApiKey({ key: own.key })).user?.id, alice.user.id);
    skewMs += 5;
    const bobKey = await client.createApiKey({ name: "bob's" }, as(bob.user.id));

    const aliceList = await client.listApiKeys({ email: bob.user.email }, as(alice.user.id));
    assert.deepEqual(
      aliceList.apiKeys.map((k) => k.id),
      [own.apiKey!.id],
    );

    await rejectsWith(client.deleteApiKey({ id: bobKey.apiKey!.id }, as(alice.user.id)), Code.NotFound, /^API key not found$/);
    assert.equal((await client.authenticateApiKey({ key: bobKey.key })).user?.id, bob.user.id);

    await client.deleteApiKey({ id: bobKey.apiKey!.id }, as(bob.user.id));
    await rejectsWith(client.authenticateApiKey({ key: bobKey.key }), Code.Unauthenticated);
  });

  it("lists keys newest first, without secrets", async () => {
    const { user } = await newUser();
    const names = ["first", "second", "third"];
    const ids: string[] = [];
    for (const name of names) {
      skewMs += 5;
      ids.push((await client.createApiKey({ email: user.email, name })).apiKey!.id);
    }
    const list = await client.listApiKeys({ email: user.email });
    assert.deepEqual(
      list.apiKeys.map((k) => k.name),
      [...names].reverse(),
    );
    assert.deepEqual(
      list.apiKeys.map((k) => k.id),
      [...ids].reverse(),
    );
    for (const k of list.apiKeys) {
      assert.match(k.prefix, /^fk-[A-Za-z0-9_-]{9}$/);
      assert.deepEqual(Object.keys(k).filter((f) => f !== "$typeName").sort(), ["createdAt", "id", "name", "prefix"]);
    }
  });

  it("validates the name and the owner", async () => {
    const { user } = await newUser();
    await rejectsWith(client.createApiKey({ email: user.email, name: "" }), Code.InvalidArgument, /^name /);
    await rejectsWith(client.createApiKey({ email: user.email, name: "k".repeat(101) }), Code.InvalidArgument, /^name /);
    assert.equal((await client.createApiKey({ email: user.email, name: "k".repeat(100) })).apiKey?.name.length, 100);
    await rejectsWith(client.createApiKey({ email: "", name: "x" }), Code.InvalidArgument, /^email /);
    await rejectsWith(client.createApiKey({ email: uniqueEmail("ghost"), name: "x" }), Code.NotFound);
    await rejectsWith(client.listApiKeys({ email: uniqueEmail("ghost") }), Code.NotFound);
    await rejectsWith(client.createApiKey({ name: "x" }, as("nobody-at-all")), Code.Unauthenticated);
    await rejectsWith(client.deleteApiKey({ id: "" }), Code.InvalidArgument);
  });

  it("writes last_used_at at most once a minute", async () => {
    const { user } = await newUser();
    const { key, apiKey } = await client.createApiKey({ email: user.email, name: "busy" });
    const lastUsed = async () => {
      const k = (await client.listApiKeys({ email: user.email })).apiKeys.find((x) => x.id === apiKey!.id);
      return k?.lastUsedAt ? timestampDate(k.lastUsedAt).getTime() : undefined;
    };

    await client.authenticateApiKey({ key });
    const first = await lastUsed();
    assert.ok(first !== undefined);

    skewMs += 30_000;
    await client.authenticateApiKey({ key });
    assert.equal(await lastUsed(), first);

    skewMs += 31_000;
    await client.authenticateApiKey({ key });
    const third = await lastUsed();
    assert.ok(third !== undefined && third >= first + 60_000, `${third} should be a minute after ${first}`);
  });
});

describe("sessions", () => {
  it("creates, resolves and deletes a session", async () => {
    const { user } = await newUser();
    const created = await client.createSession({ userId: user.id });
    assert.match(created.token, /^[A-Za-z0-9_-]{43}$/);
    const expiresAt = timestampDate(created.expiresAt!).getTime();
    assert.ok(Math.abs(expiresAt - (Date.now() + skewMs + sessionLifetimeMs)) < 60_000);

    const rows = await orm.em.fork().getConnection().execute(`select token_hash from "identity"."sessions" where user_id = ?`, [
      user.id,
    ]);
    assert.deepEqual(rows, [{ token_hash: hashSecret(created.token) }]);

    const resolved = await client.resolveSession({ token: created.token });
    assert.equal(resolved.user?.id, user.id);
    assert.equal(timestampDate(resolved.expiresAt!).getTime(), expiresAt);

    await client.deleteSession({ token: created.token });
    await rejectsWith(client.resolveSession({ token: created.token }), Code.Unauthenticated);
    await client.deleteSession({ token: created.token }); // signing out twice is fine
  });

  it("DeleteUserSessions ends every session of the caller and only theirs; it needs a caller", async () => {
    const { user } = await newUser();
    const { user: other } = await newUser();
    const tokens = await Promise.all([1, 2, 3].map(() => client.createSession({ userId: user.id }).then((s) => s.token)));
    const otherToken = (await client.createSession({ userId: other.id })).token;
    await rejectsWith(client.deleteUserSessions({}), Code.Unauthenticated);
    assert.equal((await client.deleteUserSessions({}, as(user.id))).deleted, 3);
    for (const token of tokens) await rejectsWith(client.resolveSession({ token }), Code.Unauthenticated);
    assert.equal((await client.resolveSession({ token: otherToken })).user?.id, other.id, "another person's session lives on");
    assert.equal((await client.deleteUserSessions({}, as(user.id))).deleted, 0, "twice is fine");
    const fresh = await client.createSession({ userId: user.id });
    assert.equal((await client.resolveSession({ token: fresh.token })).user?.id, user.id, "signing in again works");
  });

  it("refuses unknown and expired tokens, and sessions of unknown users", async () => {
    const { user } = await newUser();
    await rejectsWith(client.resolveSession({ token: "" }), Code.Unauthenticated);
    await rejectsWith(client.resolveSession({ token: randomBytes(32).toString("base64url") }), Code.Unauthenticated);
    await rejectsWith(client.createSession({ userId: "nobody-at-all" }), Code.NotFound);
    await rejectsWith(client.createSession({ userId: "" }), Code.InvalidArgument);

    const { token } = await client.createSession({ userId: user.id });
    skewMs += sessionLifetimeMs - 60_000;
    assert.equal((await client.resolveSession({ token })).user?.id, user.id);
    skewMs += 120_000;
    await rejectsWith(client.resolveSession({ token }), Code.Unauthenticated);
  });
});

describe("passwords (app sign-up and sign-in)", () => {
  it("SignUp makes a user, a personal free workspace, and a scrypt hash of the password", async () => {
    const email = uniqueEmail("Signer");
    const res = await client.signUp({ email: ` ${email.toUpperCase()} `, name: " Ada ", password: "correct horse battery" });
    assert.equal(res.user?.email, email.toLowerCase());
    assert.equal(res.user?.name, "Ada");
    assert.equal(res.workspace?.personal, true);
    assert.equal(res.workspace?.plan, Plan.FREE);
    assert.equal(res.workspace?.ownerId, res.user?.id);
    const rows = await orm.em.fork().getConnection().execute(`select password_hash from "identity"."users" where id = ?`, [res.user!.id]);
    const stored: string = rows[0].password_hash;
    assert.match(stored, /^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{86}$/, "N=16384 r=8 p=1, 16-byte salt, 64-byte key");
    assert.ok(!stored.includes("correct horse"));

    // The same password gets another salt, so another hash.
    const other = await client.signUp({ email: uniqueEmail(), name: "", password: "correct horse battery" });
    const otherRows = await orm.em.fork().getConnection().execute(`select password_hash from "identity"."users" where id = ?`, [other.user!.id]);
    assert.notEqual(otherRows[0].password_hash, stored);
    assert.equal(other.user?.name.length ? true : false, true, "the name defaults to the email's local part");
  });

  it("SignUp refuses a short or long password, a bad email and a taken email", async () => {
    await rejectsWith(client.signUp({ email: uniqueEmail(), password: "short" }), Code.InvalidArgument, /^password must be at least 8/);
    await rejectsWith(client.signUp({ email: uniqueEmail(), password: "x".repeat(201) }), Code.InvalidArgument, /^password must be at most 200/);
    await rejectsWith(client.signUp({ email: "nope", password: "long enough" }), Code.InvalidArgument, /^email /);
    const email = uniqueEmail();
    await client.signUp({ email, password: "long enough" });
    await rejectsWith(client.signUp({ email, password: "long enough" }), Code.AlreadyExists, /already exists/);
    await newUser().then(async ({ user }) => {
      await rejectsWith(client.signUp({ email: user.email, password: "long enough" }), Code.AlreadyExists);
    });
  });

  it("SignUp and SetPassword refuse a common or easily guessed password with the reason, and store nothing", async () => {
    const email = uniqueEmail("weak");
    const common = await rejectsWith(client.signUp({ email, password: "12345678" }), Code.InvalidArgument);
    assert.equal(common.rawMessage, "password is too easy to guess: This is one of the ten most used passwords. Add another word or two; uncommon words are better.");
    await rejectsWith(client.signUp({ email, password: "qwertyuiop" }), Code.InvalidArgument, /^password is too easy to guess: .*hundred most used/);
    const own = await rejectsWith(client.signUp({ email: uniqueEmail("ada.lovelace"), name: "Ada Lovelace", password: "lovelace-ada" }), Code.InvalidArgument);
    assert.match(own.rawMessage, /should not contain your name or email/);
    const rows = await orm.em.fork().getConnection().execute(`select id from "identity"."users" where email = ?`, [email]);
    assert.equal(rows.length, 0, "no user was made");
    assert.ok((await client.signUp({ email, password: "twelve angry penguins" })).user);

    const { user } = await newUser({ name: "Operator Made" });
    await rejectsWith(client.setPassword({ email: user.email, password: "password1" }), Code.InvalidArgument, /^password is too easy to guess: This is a commonly used password\./);
    await rejectsWith(client.verifyPassword({ email: user.email, password: "password1" }), Code.Unauthenticated);
  });

  it("VerifyPassword answers the user for the right password and one message for every failure", async () => {
    const email = uniqueEmail();
    const { user } = await client.signUp({ email, password: "s3cret-enough" });
    const ok = await client.verifyPassword({ email: email.toUpperCase(), password: "s3cret-enough" });
    assert.equal(ok.user?.id, user!.id);

    const wrong = await rejectsWith(client.verifyPassword({ email, password: "s3cret-enougH" }), Code.Unauthenticated);
    const unknown = await rejectsWith(client.verifyPassword({ email: uniqueEmail("ghost"), password: "s3cret-enough" }), Code.Unauthenticated);
    const { user: cliUser } = await newUser();
    const noPassword = await rejectsWith(client.verifyPassword({ email: cliUser.email, password: "anything at all" }), Code.Unauthenticated);
    const empty = await rejectsWith(client.verifyPassword({ email: "", password: "" }), Code.Unauthenticated);
    for (const err of [wrong, unknown, noPassword, empty]) assert.equal(err.rawMessage, "email or password is wrong");
  });

  it("SetPassword (operator) lets a user made by the CLI sign in; a caller may not use it", async () => {
    const { user } = await newUser();
    await rejectsWith(client.verifyPassword({ email: user.email, password: "operator-set-1" }), Code.Unauthenticated);
    await rejectsWith(client.setPassword({ email: user.email, password: "short" }), Code.InvalidArgument, /^password /);
    await rejectsWith(client.setPassword({ email: uniqueEmail("ghost"), password: "operator-set-1" }), Code.NotFound);
    await rejectsWith(client.setPassword({ email: user.email, password: "operator-set-1" }, as(user.id)), Code.PermissionDenied);
    const set = await client.setPassword({ email: user.email, password: "operator-set-1" });
    assert.equal(set.user?.id, user.id);
    assert.equal((await client.verifyPassword({ email: user.email, password: "operator-set-1" })).user?.id, user.id);
  });

  it("CreateUser with a password (the operator's first user) can sign in at once; a weak one makes no user", async () => {
    const email = uniqueEmail("first");
    await rejectsWith(client.createUser({ email, password: "password1" }), Code.InvalidArgument, /^password is too easy to guess/);
    await rejectsWith(client.verifyPassword({ email, password: "password1" }), Code.Unauthenticated);
    const { user } = await client.createUser({ email, password: "first-user-on-the-cli" });
    assert.equal((await client.verifyPassword({ email, password: "first-user-on-the-cli" })).user?.id, user?.id);
  });
});

/** The mails written to identity's outbox for `to`, oldest first. */
async function outbox(to: string): Promise<{ subject: string; text: string; html: string }[]> {
  return orm.em.getConnection().execute(`select "subject", "text", "html" from "identity"."mail_outbox" where "to_address" = ? order by "id"`, [to]);
}

/** The mail to `to` with `subject` after the `skip` first ones, once it is written (a reset link is written after the answer). */
function mailAfter(to: string, subject: string, skip = 0) {
  return eventually(async () => (await outbox(to)).filter((m) => m.subject === subject)[skip], 10_000, `mail "${subject}" #${skip + 1} to ${to}`);
}

/** The token of the one link in a mail's text. */
function tokenIn(text: string, path: string): string {
  const match = new RegExp(`http://forms\\.test${path}\\?token=([\\w-]+)`).exec(text);
  assert.ok(match, `a ${path} link in:\n${text}`);
  return decodeURIComponent(match[1]);
}

describe("mailed links: email verification and password reset", () => {
  it("SignUp mails a verification link (text and HTML) that VerifyEmail takes once; the operator's users get none", async () => {
    const email = uniqueEmail("verify");
    const { user } = await client.signUp({ email, name: "Vera", password: "verification by mail works" });
    assert.equal(user?.emailVerified, false);
    const [mail, ...more] = await outbox(email);
    assert.equal(more.length, 0);
    assert.equal(mail.subject, "Confirm your email address");
    const token = tokenIn(mail.text, "/app/verify-email");
    assert.ok(mail.html.includes(`href="http://forms.test/app/verify-email?token=${encodeURIComponent(token)}"`));
    await rejectsWith(client.verifyEmail({ token: token + "x" }), Code.InvalidArgument, /^this link is not valid/);
    const verified = await client.verifyEmail({ token });
    assert.equal(verified.user?.id, user?.id);
    assert.equal(verified.user?.emailVerified, true);
    await rejectsWith(client.verifyEmail({ token }), Code.InvalidArgument, /^this link is not valid/);
    const operators = await newUser();
    assert.deepEqual(await outbox(operators.user.email), []);
  });

  it("RequestPasswordReset answers the same for any email and mails only an existing user a link that works once, within an hour", async () => {
    const ghost = uniqueEmail("ghost");
    assert.deepEqual(await client.requestPasswordReset({ email: ghost }), await client.requestPasswordReset({ email: "not an email" }));
    assert.deepEqual(await outbox(ghost), []);

    const email = uniqueEmail("forgetful");
    const { user } = await client.signUp({ email, name: "Fred", password: "the first of my passwords" });
    const { token: session } = await client.createSession({ userId: user!.id });
    await client.requestPasswordReset({ email: email.toUpperCase() });
    const reset = await mailAfter(email, "Set a new password");
    const token = tokenIn(reset.text, "/app/reset-password");
    // A weak password is refused and leaves the link usable.
    await rejectsWith(client.resetPassword({ token, password: "password1" }), Code.InvalidArgument, /^password is too easy to guess/);
    const done = await client.resetPassword({ token, password: "the second of my passwords" });
    assert.equal(done.user?.id, user?.id);
    assert.equal(done.user?.emailVerified, true, "the mailed link proves the address");
    assert.equal((await client.verifyPassword({ email, password: "the second of my passwords" })).user?.id, user?.id);
    await rejectsWith(client.verifyPassword({ email, password: "the first of my passwords" }), Code.Unauthenticated);
    await rejectsWith(client.resolveSession({ token: session }), Code.Unauthenticated, /session/);
    // Used once: the link is spent.
    await rejectsWith(client.resetPassword({ token, password: "the third of my passwords" }), Code.InvalidArgument, /^this link is not valid/);

    // A link older than an hour is refused.
    await client.requestPasswordReset({ email });
    const late = tokenIn((await mailAfter(email, "Set a new password", 1)).text, "/app/reset-password");
    const skewBefore = skewMs;
    skewMs += 60 * 60 * 1000 + 1000;
    try {
      await rejectsWith(client.resetPassword({ token: late, password: "the third of my passwords" }), Code.InvalidArgument, /^this link is not valid/);
    } finally {
      skewMs = skewBefore;
    }
  });

  it("a reset spends every older reset link of the person: one left in someone's inbox cannot set the password again", async () => {
    const email = uniqueEmail("twice");
    await client.signUp({ email, name: "Tess", password: "the first of my passwords" });
    await client.requestPasswordReset({ email });
    const older = tokenIn((await mailAfter(email, "Set a new password")).text, "/app/reset-password");
    await client.requestPasswordReset({ email });
    const newer = tokenIn((await mailAfter(email, "Set a new password", 1)).text, "/app/reset-password");
    await client.resetPassword({ token: newer, password: "the second of my passwords" });
    await rejectsWith(client.resetPassword({ token: older, password: "an intruder's own password" }), Code.InvalidArgument, /^this link is not valid/);
    assert.ok((await client.verifyPassword({ email, password: "the second of my passwords" })).user);
  });

  it("ResetPassword of a verified person deletes their API keys unless asked to keep them; nobody else's", async () => {
    const email = uniqueEmail("keeper");
    const { user } = await client.signUp({ email, name: "Kim Keeper", password: "the first of my passwords" });
    await client.verifyEmail({ token: tokenIn((await outbox(email))[0].text, "/app/verify-email") });
    const mine = await client.createApiKey({ name: "ci" }, as(user!.id));
    const theirs = await newKey();
    let resets = 0;
    const resetTo = async (password: string, keepApiKeys?: boolean) => {
      await client.requestPasswordReset({ email });
      const token = tokenIn((await mailAfter(email, "Set a new password", resets++)).text, "/app/reset-password");
      return client.resetPassword({ token, password, keepApiKeys });
    };
    const kept = await resetTo("the second of my passwords", true);
    assert.equal(kept.user?.emailVerified, true);
    assert.equal((await client.authenticateApiKey({ key: mine.key })).user?.id, user!.id, "kept, as asked");
    await resetTo("the third of my passwords");
    await rejectsWith(client.authenticateApiKey({ key: mine.key }), Code.Unauthenticated, /^invalid API key$/);
    assert.deepEqual((await client.listApiKeys({}, as(user!.id))).apiKeys, []);
    assert.equal((await client.authenticateApiKey({ key: theirs.key })).user?.id, theirs.user.id);
  });
});

/** Someone else, with an API key. */
async function newKey() {
  const { user } = await newUser();
  const { key } = await client.createApiKey({ name: "someone else's" }, as(user.id));
  return { user, key };
}

describe("workspaces as the caller (the app)", () => {
  it("CreateWorkspace with a caller makes a free workspace the caller owns; other plans are refused", async () => {
    const { user } = await newUser();
    const other = await newUser();
    const res = await client.createWorkspace({ name: " Side project ", ownerEmail: other.user.email }, as(user.id));
    assert.equal(res.workspace?.name, "Side project");
    assert.equal(res.workspace?.ownerId, user.id, "the caller owns it, whatever owner_email says");
    assert.equal(res.workspace?.plan, Plan.FREE);
    assert.equal(res.workspace?.personal, false);
    const mine = await client.listWorkspaces({}, as(user.id));
    assert.ok(mine.workspaces.some((w) => w.id === res.workspace!.id));
    const theirs = await client.listWorkspaces({}, as(other.user.id));
    assert.ok(!theirs.workspaces.some((w) => w.id === res.workspace!.id));
    await rejectsWith(client.createWorkspace({ name: "Pro please", plan: Plan.PRO }, as(user.id)), Code.PermissionDenied);
    await rejectsWith(client.createWorkspace({ name: " " }, as(user.id)), Code.InvalidArgument, /^name /);
    await rejectsWith(client.createWorkspace({ name: "X" }, as("nobody-at-all")), Code.Unauthenticated);
  });

  it("AddMember is the operator's: a caller, the owner too, invites instead; ListMembers shows the owner first", async () => {
    const owner = await newUser({ name: "Owner" });
    const invitee = await newUser({ name: "Invitee", verified: true });
    const stranger = await newUser({ name: "Stranger", verified: true });
    const ws = owner.workspace;

    await rejectsWith(client.listMembers({ workspaceId: ws.id }, as(stranger.user.id)), Code.NotFound, /^workspace not found$/);
    // The operator (and submissions, to mail a form's notifications) lists any workspace's members.
    assert.deepEqual((await client.listMembers({ workspaceId: ws.id })).members.map((m) => m.user?.email), [owner.user.email]);
    await rejectsWith(client.listMembers({ workspaceId: "no-such-workspace" }), Code.NotFound, /^workspace not found$/);

    // Nobody is added without consent: the owner's AddMember is refused, whoever it names.
    for (const email of [invitee.user.email, uniqueEmail("ghost")]) {
      const refused = await rejectsWith(client.addMember({ workspaceId: ws.id, email }, as(owner.user.id)), Code.PermissionDenied);
      assert.equal(refused.rawMessage, "members join by accepting an invitation: invite them");
    }
    await rejectsWith(client.getWorkspace({ workspaceId: ws.id }, as(invitee.user.id)), Code.NotFound);
    // The operator adds any account (the users it makes are never mailed to verify).
    const unverified = await client.signUp({ email: uniqueEmail("unproven"), name: "Uma", password: "nobody has confirmed this one" });
    assert.equal((await client.addMember({ workspaceId: ws.id, email: unverified.user!.email })).user?.id, unverified.user!.id);
    await client.removeMember({ workspaceId: ws.id, userId: unverified.user!.id });
    await client.addMember({ workspaceId: ws.id, email: invitee.user.email });
    await client.addMember({ workspaceId: ws.id, email: stranger.user.email });
    assert.equal((await client.getWorkspace({ workspaceId: ws.id }, as(stranger.user.id))).workspace?.id, ws.id);

    const { members } = await client.listMembers({ workspaceId: ws.id }, as(invitee.user.id));
    assert.deepEqual(
      members.map((m) => [m.user?.name, m.role]),
      [
        ["Owner", Role.OWNER],
        ["Invitee", Role.MEMBER],
        ["Stranger", Role.MEMBER],
      ],
    );
    assert.ok(members.every((m) => m.joinedAt));
  });

  it("SetPlan is the operator's alone: the owner, an admin or a member is refused", async () => {
    const { user, workspace } = await newUser();
    const admin = await newUser();
    const member = await newUser();
    await client.addMember({ workspaceId: workspace.id, email: admin.user.email, role: Role.ADMIN });
    await client.addMember({ workspaceId: workspace.id, email: member.user.email });
    for (const refused of [{ user }, admin, member]) {
      const err = await rejectsWith(client.setPlan({ workspaceId: workspace.id, plan: Plan.PRO }, as(refused.user.id)), Code.PermissionDenied);
      assert.equal(err.rawMessage, "plans are set by whoever runs this installation");
    }
    await rejectsWith(client.setPlan({ workspaceId: workspace.id, plan: Plan.PRO }, as(uniqueEmail())), Code.PermissionDenied);
    assert.equal((await client.getWorkspace({ workspaceId: workspace.id }, as(user.id))).workspace?.plan, Plan.FREE);
    assert.equal((await client.setPlan({ workspaceId: workspace.id, plan: Plan.PRO })).workspace?.plan, Plan.PRO);
    assert.equal((await client.setPlan({ workspaceId: workspace.id, plan: Plan.FREE })).workspace?.plan, Plan.FREE);
  });
});

/** A workspace of an owner with an admin and a member (added by the operator). */
async function team() {
  const owner = await newUser({ name: "Olga Owner" });
  const admin = await newUser({ name: "Adam Admin", verified: true });
  const member = await newUser({ name: "Mia Member", verified: true });
  const ws = owner.workspace;
  await client.addMember({ workspaceId: ws.id, email: admin.user.email, role: Role.ADMIN });
  await client.addMember({ workspaceId: ws.id, email: member.user.email });
  return { owner, admin, member, ws };
}

describe("roles and invitations", () => {

  it("GetWorkspace and ListWorkspaces tell the caller's role; the operator's answers carry none", async () => {
    const { owner, admin, member, ws } = await team();
    for (const [person, role] of [[owner, Role.OWNER], [admin, Role.ADMIN], [member, Role.MEMBER]] as const) {
      assert.equal((await client.getWorkspace({ workspaceId: ws.id }, as(person.user.id))).workspace?.role, role);
      assert.equal((await client.listWorkspaces({}, as(person.user.id))).workspaces.find((w) => w.id === ws.id)?.role, role);
    }
    assert.equal((await client.setPlan({ workspaceId: ws.id, plan: Plan.FREE })).workspace?.role, Role.UNSPECIFIED);
  });

  it("SetMemberRole: the owner or an admin makes a member an admin and back; never the owner's role, never a second owner", async () => {
    const { owner, admin, member, ws } = await team();
    await rejectsWith(client.setMemberRole({ workspaceId: ws.id, userId: admin.user.id, role: Role.MEMBER }, as(member.user.id)), Code.PermissionDenied);
    const promoted = await client.setMemberRole({ workspaceId: ws.id, userId: member.user.id, role: Role.ADMIN }, as(admin.user.id));
    assert.equal(promoted.member?.role, Role.ADMIN);
    assert.equal(promoted.member?.user?.id, member.user.id);
    assert.equal((await client.setMemberRole({ workspaceId: ws.id, userId: member.user.id, role: Role.MEMBER }, as(owner.user.id))).member?.role, Role.MEMBER);
    await rejectsWith(client.setMemberRole({ workspaceId: ws.id, userId: owner.user.id, role: Role.MEMBER }, as(admin.user.id)), Code.FailedPrecondition, /^the owner's role does not change$/);
    await rejectsWith(client.setMemberRole({ workspaceId: ws.id, userId: member.user.id, role: Role.OWNER }, as(owner.user.id)), Code.InvalidArgument, /^role must be admin or member/);
    await rejectsWith(client.setMemberRole({ workspaceId: ws.id, userId: "nobody", role: Role.ADMIN }, as(owner.user.id)), Code.NotFound, /^member not found$/);
    const roles = (await client.listMembers({ workspaceId: ws.id }, as(member.user.id))).members.map((m) => [m.user?.name, m.role]);
    assert.deepEqual(roles, [["Olga Owner", Role.OWNER], ["Adam Admin", Role.ADMIN], ["Mia Member", Role.MEMBER]]);
  });

  it("RemoveMember: a member may not remove others but may leave; the owner cannot be removed; the removed person's key and session no longer reach the workspace", async () => {
    const { owner, admin, member, ws } = await team();
    const { key } = await client.createApiKey({ name: "member's" }, as(member.user.id));
    const { token } = await client.createSession({ userId: member.user.id });
    await rejectsWith(client.removeMember({ workspaceId: ws.id, userId: admin.user.id }, as(member.user.id)), Code.PermissionDenied);
    await rejectsWith(client.removeMember({ workspaceId: ws.id, userId: owner.user.id }, as(admin.user.id)), Code.FailedPrecondition, /^the owner cannot be removed/);
    await rejectsWith(client.removeMember({ workspaceId: ws.id, userId: owner.user.id }, as(owner.user.id)), Code.FailedPrecondition);

    await client.removeMember({ workspaceId: ws.id, userId: member.user.id }, as(admin.user.id));
    // The key and the session still name their person (their own workspace stays theirs) but this
    // workspace is gone for them at once.
    const byKey = (await client.authenticateApiKey({ key })).user!;
    const bySession = (await client.resolveSession({ token })).user!;
    for (const user of [byKey, bySession]) {
      await rejectsWith(client.getWorkspace({ workspaceId: ws.id }, as(user.id)), Code.NotFound, /^workspace not found$/);
      assert.ok(!(await client.listWorkspaces({}, as(user.id))).workspaces.some((w) => w.id === ws.id));
      assert.equal((await client.getWorkspace({ workspaceId: member.workspace.id }, as(user.id))).workspace?.id, member.workspace.id);
    }
    await rejectsWith(client.removeMember({ workspaceId: ws.id, userId: member.user.id }, as(admin.user.id)), Code.NotFound, /^member not found$/);

    await client.removeMember({ workspaceId: ws.id, userId: admin.user.id }, as(admin.user.id));
    assert.deepEqual((await client.listMembers({ workspaceId: ws.id }, as(owner.user.id))).members.map((m) => m.user?.id), [owner.user.id]);
  });

  it("a member may delete only their own API keys", async () => {
    const { admin, member } = await team();
    const adminKey = await client.createApiKey({ name: "admin's" }, as(admin.user.id));
    await rejectsWith(client.deleteApiKey({ id: adminKey.apiKey!.id }, as(member.user.id)), Code.NotFound, /^API key not found$/);
    assert.equal((await client.authenticateApiKey({ key: adminKey.key })).user?.id, admin.user.id);
    assert.ok(!(await client.listApiKeys({}, as(member.user.id))).apiKeys.some((k) => k.id === adminKey.apiKey!.id));
  });

  it("InviteMember mails everyone a link, account or not, and nobody joins before accepting; a newcomer signs up into the workspace, once", async () => {
    const { owner, admin, member, ws } = await team();
    const existing = await newUser({ name: "Erik Existing", verified: true });
    const invited = await client.inviteMember({ workspaceId: ws.id, email: existing.user.email.toUpperCase(), role: Role.ADMIN }, as(admin.user.id));
    assert.equal(invited.invited, true);
    assert.deepEqual(
      [invited.invitation?.email, invited.invitation?.workspaceId, invited.invitation?.role, invited.invitation?.inviterName],
      [existing.user.email, ws.id, Role.ADMIN, "Adam Admin"],
    );
    const { createdAt, expiresAt } = invited.invitation!;
    assert.equal(timestampDate(expiresAt!).getTime() - timestampDate(createdAt!).getTime(), 7 * 24 * 3600 * 1000);
    await rejectsWith(client.getWorkspace({ workspaceId: ws.id }, as(existing.user.id)), Code.NotFound, /^workspace not found$/);
    assert.equal((await outbox(existing.user.email)).length, 1);
    // Someone who is a member already is told so (the members list says it anyway).
    await rejectsWith(client.inviteMember({ workspaceId: ws.id, email: member.user.email }, as(owner.user.id)), Code.FailedPrecondition, /^this person is a member/);

    await rejectsWith(client.inviteMember({ workspaceId: ws.id, email: uniqueEmail() }, as(member.user.id)), Code.PermissionDenied);
    await rejectsWith(client.inviteMember({ workspaceId: ws.id, email: "not an email" }, as(owner.user.id)), Code.InvalidArgument, /^email /);
    await rejectsWith(client.inviteMember({ workspaceId: ws.id, email: uniqueEmail(), role: Role.OWNER }, as(owner.user.id)), Code.InvalidArgument, /^role /);

    const email = uniqueEmail("newcomer");
    assert.deepEqual((await client.inviteMember({ workspaceId: ws.id, email }, as(admin.user.id))).invited, true);
    const [mail, ...more] = await outbox(email);
    assert.equal(more.length, 0);
    assert.equal(mail.subject, `Adam Admin invited you to ${ws.name}`);
    const token = tokenIn(mail.text, "/app/accept-invite");
    assert.ok(mail.html.includes(`href="http://forms.test/app/accept-invite?token=${encodeURIComponent(token)}"`));

    const invitation = await client.getInvitation({ token });
    assert.deepEqual(
      [invitation.email, invitation.workspaceName, invitation.inviterName, invitation.role, invitation.accountExists],
      [email, ws.name, "Adam Admin", Role.MEMBER, false],
    );
    await rejectsWith(client.getInvitation({ token: token + "x" }), Code.InvalidArgument, /^this link is not valid/);
    // A weak password is refused and leaves the link usable.
    await rejectsWith(client.acceptInvitation({ token, name: "Nora", password: "password1" }), Code.InvalidArgument, /^password is too easy to guess/);
    const accepted = await client.acceptInvitation({ token, name: "Nora Newcomer", password: "invited and glad to be here" });
    assert.equal(accepted.user?.email, email);
    assert.equal(accepted.user?.emailVerified, true, "the mailed link proves the address");
    assert.equal(accepted.workspace?.id, ws.id);
    assert.equal(accepted.workspace?.role, Role.MEMBER);
    assert.equal((await client.verifyPassword({ email, password: "invited and glad to be here" })).user?.id, accepted.user?.id);
    const theirs = (await client.listWorkspaces({}, as(accepted.user!.id))).workspaces;
    // Their own personal workspace, as everyone has, and the one they were invited to.
    assert.deepEqual(theirs.map((w) => [w.id === ws.id, w.role]).sort(), [[false, Role.OWNER], [true, Role.MEMBER]]);
    await rejectsWith(client.acceptInvitation({ token, password: "invited and glad to be here" }), Code.InvalidArgument, /^this link is not valid/);
  });

  it("an invitation whose email has an account by now is taken by that account signed in, not by a second sign-up", async () => {
    const { owner, ws } = await team();
    const email = uniqueEmail("late");
    await client.inviteMember({ workspaceId: ws.id, email, role: Role.ADMIN }, as(owner.user.id));
    const token = tokenIn((await outbox(email))[0].text, "/app/accept-invite");
    const { user } = await client.signUp({ email, name: "Lena Late", password: "signed up before accepting" });
    assert.equal((await client.getInvitation({ token })).accountExists, true);
    await rejectsWith(client.acceptInvitation({ token, password: "another password entirely" }), Code.AlreadyExists, /^an account has this email/);
    const other = await newUser();
    await rejectsWith(client.acceptInvitation({ token }, as(other.user.id)), Code.PermissionDenied, /another email address/);
    const accepted = await client.acceptInvitation({ token }, as(user!.id));
    assert.equal(accepted.workspace?.role, Role.ADMIN);
    assert.equal(accepted.user?.emailVerified, true, "the link came to the address: it is verified");
    assert.equal((await client.getCurrentUser({}, as(user!.id))).user?.emailVerified, true);
    assert.equal((await client.getWorkspace({ workspaceId: ws.id }, as(user!.id))).workspace?.role, Role.ADMIN);
    await rejectsWith(client.inviteMember({ workspaceId: ws.id, email }), Code.FailedPrecondition, /^this person is a member/);
  });

  it("an account whose email was never verified is not added by an invitation: its address is mailed the link, as one without an account", async () => {
    const { owner, ws } = await team();
    const email = uniqueEmail("unproven");
    const { user } = await client.signUp({ email, name: "Una Unproven", password: "not confirmed by mail yet" });
    const answer = await client.inviteMember({ workspaceId: ws.id, email, role: Role.ADMIN }, as(owner.user.id));
    const forNobody = await client.inviteMember({ workspaceId: ws.id, email: uniqueEmail("nobody"), role: Role.ADMIN }, as(owner.user.id));
    /** An answer without what differs by email and time. */
    const shape = (r: typeof answer) => ({ ...r, invitation: { ...r.invitation, id: "", email: "", createdAt: undefined, expiresAt: undefined } });
    assert.deepEqual(shape(answer), shape(forNobody), "the same answer as for an address without an account");
    assert.equal(answer.invited, true);
    await rejectsWith(client.getWorkspace({ workspaceId: ws.id }, as(user!.id)), Code.NotFound, /^workspace not found$/);
    // The operator's invitation (the CLI's user:invite) is the same.
    const byOperator = await client.inviteMember({ workspaceId: ws.id, email });
    assert.equal(byOperator.invitation?.inviterName, "The formsvc administrator");
    await rejectsWith(client.getWorkspace({ workspaceId: ws.id }, as(user!.id)), Code.NotFound, /^workspace not found$/);
    const invitations = (await outbox(email)).filter((m) => m.subject.endsWith(`invited you to ${ws.name}`));
    assert.deepEqual(invitations.map((m) => m.subject), [`Olga Owner invited you to ${ws.name}`, `The formsvc administrator invited you to ${ws.name}`]);
  });
});

describe("pending invitations (issue 34)", () => {
  /** The link of the `nth` invitation mailed to `email`. */
  const linkOf = async (email: string, nth = 0) => tokenIn((await outbox(email)).filter((m) => m.subject.includes(" invited you to "))[nth]!.text, "/app/accept-invite");

  it("are listed newest first to the owner and admins, and revoked: the link stops working; members may not", async () => {
    const { owner, admin, member, ws } = await team();
    const [first, second] = [uniqueEmail("first"), uniqueEmail("second")];
    const a = (await client.inviteMember({ workspaceId: ws.id, email: first }, as(owner.user.id))).invitation!;
    const b = (await client.inviteMember({ workspaceId: ws.id, email: second, role: Role.ADMIN }, as(admin.user.id))).invitation!;
    const listed = (await client.listInvitations({ workspaceId: ws.id }, as(admin.user.id))).invitations;
    assert.deepEqual(
      listed.map((i) => [i.id, i.email, i.role, i.inviterName]),
      [
        [b.id, second, Role.ADMIN, "Adam Admin"],
        [a.id, first, Role.MEMBER, "Olga Owner"],
      ],
    );
    await rejectsWith(client.listInvitations({ workspaceId: ws.id }, as(member.user.id)), Code.PermissionDenied);
    await rejectsWith(client.revokeInvitation({ workspaceId: ws.id, invitationId: a.id }, as(member.user.id)), Code.PermissionDenied);
    const stranger = await newUser();
    await rejectsWith(client.listInvitations({ workspaceId: ws.id }, as(stranger.user.id)), Code.NotFound, /^workspace not found$/);
    // Another workspace's manager cannot revoke it through their own workspace.
    await rejectsWith(client.revokeInvitation({ workspaceId: stranger.workspace.id, invitationId: a.id }, as(stranger.user.id)), Code.NotFound, /^invitation not found$/);

    const token = await linkOf(first);
    await client.revokeInvitation({ workspaceId: ws.id, invitationId: a.id }, as(admin.user.id));
    await rejectsWith(client.getInvitation({ token }), Code.InvalidArgument, /^this link is not valid/);
    await rejectsWith(client.acceptInvitation({ token, password: "revoked before I got to it" }), Code.InvalidArgument, /^this link is not valid/);
    await rejectsWith(client.revokeInvitation({ workspaceId: ws.id, invitationId: a.id }, as(owner.user.id)), Code.NotFound, /^invitation not found$/);
    assert.deepEqual((await client.listInvitations({ workspaceId: ws.id }, as(owner.user.id))).invitations.map((i) => i.id), [b.id]);
  });

  it("a newer invitation of an email replaces the older one; accepted, it leaves the list", async () => {
    const { owner, ws } = await team();
    const email = uniqueEmail("twice");
    await client.inviteMember({ workspaceId: ws.id, email }, as(owner.user.id));
    const newer = (await client.inviteMember({ workspaceId: ws.id, email, role: Role.ADMIN }, as(owner.user.id))).invitation!;
    const [older, latest] = [await linkOf(email, 0), await linkOf(email, 1)];
    await rejectsWith(client.getInvitation({ token: older }), Code.InvalidArgument, /^this link is not valid/);
    assert.deepEqual((await client.listInvitations({ workspaceId: ws.id }, as(owner.user.id))).invitations.map((i) => i.id), [newer.id]);
    const accepted = await client.acceptInvitation({ token: latest, name: "Tess", password: "the second mail was the one" });
    assert.equal(accepted.workspace?.role, Role.ADMIN);
    assert.deepEqual((await client.listInvitations({ workspaceId: ws.id }, as(owner.user.id))).invitations, []);
  });

  it("die with their inviter's rights: an admin removed or made a member, their invitations stop working; the owner's stay", async () => {
    const { owner, admin, member, ws } = await team();
    const [byAdmin, byOwner] = [uniqueEmail("by-admin"), uniqueEmail("by-owner")];
    await client.inviteMember({ workspaceId: ws.id, email: byAdmin }, as(admin.user.id));
    await client.inviteMember({ workspaceId: ws.id, email: byOwner }, as(owner.user.id));
    const token = await linkOf(byAdmin);
    assert.equal((await client.getInvitation({ token })).inviterName, "Adam Admin");

    await client.setMemberRole({ workspaceId: ws.id, userId: admin.user.id, role: Role.MEMBER }, as(owner.user.id));
    await rejectsWith(client.getInvitation({ token }), Code.InvalidArgument, /^this link is not valid/);
    assert.deepEqual((await client.listInvitations({ workspaceId: ws.id }, as(owner.user.id))).invitations.map((i) => i.email), [byOwner]);

    // Promoted again by the owner, the admin's invitation works again; removed, it dies for good.
    await client.setMemberRole({ workspaceId: ws.id, userId: admin.user.id, role: Role.ADMIN }, as(owner.user.id));
    assert.equal((await client.getInvitation({ token })).email, byAdmin);
    await client.removeMember({ workspaceId: ws.id, userId: admin.user.id }, as(owner.user.id));
    await rejectsWith(client.acceptInvitation({ token, password: "the admin who asked me is gone" }), Code.InvalidArgument, /^this link is not valid/);
    const ownersToken = await linkOf(byOwner);
    assert.equal((await client.acceptInvitation({ token: ownersToken, password: "the owner's invitation stands" })).workspace?.id, ws.id);
  });

  it("are limited: 3 an hour to one email from a workspace, 10 to one email from all, 100 from a workspace; an hour later they go again", async () => {
    const { owner, ws } = await team();
    const email = uniqueEmail("flooded");
    for (let i = 0; i < 3; i++) await client.inviteMember({ workspaceId: ws.id, email }, as(owner.user.id));
    const pair = await rejectsWith(client.inviteMember({ workspaceId: ws.id, email }, as(owner.user.id)), Code.ResourceExhausted);
    assert.equal(pair.rawMessage, "too many invitations: at most 3 an hour to one email from this workspace; try again later");
    // From other workspaces (someone could make them to send from): 10 in all reach one email.
    const others = await Promise.all([1, 2, 3].map(() => newUser({ verified: true })));
    let sent = 3;
    for (const other of others) {
      for (let i = 0; i < 3 && sent < 10; i++, sent++) await client.inviteMember({ workspaceId: other.workspace.id, email }, as(other.user.id));
    }
    const last = others[2]!;
    const toEmail = await rejectsWith(client.inviteMember({ workspaceId: last.workspace.id, email }, as(last.user.id)), Code.ResourceExhausted);
    assert.equal(toEmail.rawMessage, "too many invitations: at most 10 an hour to one email; try again later");
    assert.equal((await outbox(email)).length, 10, "no mail for a refused invitation");

    const busy = await newUser({ verified: true });
    for (let i = 0; i < 100; i++) await client.inviteMember({ workspaceId: busy.workspace.id, email: uniqueEmail(`team${i}`) }, as(busy.user.id));
    const fromWorkspace = await rejectsWith(client.inviteMember({ workspaceId: busy.workspace.id, email: uniqueEmail() }, as(busy.user.id)), Code.ResourceExhausted);
    assert.equal(fromWorkspace.rawMessage, "too many invitations: at most 100 an hour from one workspace; try again later");

    skewMs += 61 * 60 * 1000;
    try {
      assert.equal((await client.inviteMember({ workspaceId: ws.id, email }, as(owner.user.id))).invited, true);
      assert.equal((await client.inviteMember({ workspaceId: busy.workspace.id, email: uniqueEmail() }, as(busy.user.id))).invited, true);
    } finally {
      skewMs -= 61 * 60 * 1000;
    }
  });

  it("are shown to the invited person once their address is verified, who accepts one there without the mail", async () => {
    const { owner, ws } = await team();
    const email = uniqueEmail("invitee");
    const { user } = await client.signUp({ email, name: "Ivo Invitee", password: "my address is not proven yet" });
    const { invitation } = await client.inviteMember({ workspaceId: ws.id, email, role: Role.ADMIN }, as(owner.user.id));
    // Unproven, the address might be a stranger's sign-up: nothing is shown, and the id alone takes nothing.
    assert.deepEqual((await client.listMyInvitations({}, as(user!.id))).invitations, []);
    await rejectsWith(client.acceptInvitation({ invitationId: invitation!.id }, as(user!.id)), Code.InvalidArgument, /^this link is not valid/);
    await rejectsWith(client.acceptInvitation({ invitationId: invitation!.id, password: "no caller, no id" }), Code.InvalidArgument, /^this link is not valid/);

    await markVerified(user!.id);
    const mine = (await client.listMyInvitations({}, as(user!.id))).invitations;
    assert.deepEqual(
      mine.map((i) => [i.id, i.workspaceId, i.workspaceName, i.role, i.inviterName]),
      [[invitation!.id, ws.id, ws.name, Role.ADMIN, "Olga Owner"]],
    );
    const someoneElse = await newUser({ verified: true });
    assert.deepEqual((await client.listMyInvitations({}, as(someoneElse.user.id))).invitations, []);
    await rejectsWith(client.acceptInvitation({ invitationId: invitation!.id }, as(someoneElse.user.id)), Code.PermissionDenied, /another email address/);

    const accepted = await client.acceptInvitation({ invitationId: invitation!.id }, as(user!.id));
    assert.deepEqual([accepted.workspace?.id, accepted.workspace?.role], [ws.id, Role.ADMIN]);
    assert.deepEqual((await client.listMyInvitations({}, as(user!.id))).invitations, []);
    // The mailed link of the same invitation is spent too.
    await rejectsWith(client.getInvitation({ token: await linkOf(email) }), Code.InvalidArgument, /^this link is not valid/);
  });
});

describe("the installation's administrator", () => {
  const administrators = async () =>
    (await orm.em.fork().getConnection().execute<{ id: string }[]>(`select "id" from "identity"."users" where "administrator" order by "id"`)).map((r) => r.id);

  it("is the first account made, and only one even when the first sign-ups race", async () => {
    const [oldest] = await orm.em.fork().getConnection().execute<{ id: string }[]>(`select "id" from "identity"."users" order by "created_at", "id" limit 1`);
    assert.deepEqual(await administrators(), [oldest!.id]);
    // As on a new installation: nobody administers yet, and five people sign up at once.
    await orm.em.fork().getConnection().execute(`update "identity"."users" set "administrator" = false`, [], "run");
    const signedUp = await Promise.all(
      [1, 2, 3, 4, 5].map((n) => client.signUp({ email: uniqueEmail(`racer${n}`), name: `Racer ${n}`, password: "first come, first administers" })),
    );
    const winners = signedUp.filter((r) => r.user?.administrator).map((r) => r.user!.id);
    assert.equal(winners.length, 1);
    assert.deepEqual(await administrators(), winners);
    assert.equal((await client.getCurrentUser({}, as(winners[0]!))).user?.administrator, true);
    const later = await newUser();
    assert.equal(later.user.administrator, false);
  });

  it("lists every user and workspace with their counts, pages them, and sets any workspace's plan; nobody else may", async () => {
    const [administrator] = await administrators();
    const { owner, admin, ws } = await team();
    const firstPage = await client.listAllUsers({ limit: 2 }, as(administrator!));
    assert.equal(firstPage.users.length, 2);
    assert.ok(firstPage.hasMore && firstPage.nextCursor);
    const everyone = [];
    for (let cursor = ""; ; ) {
      const page = await client.listAllUsers({ limit: 100, cursor }, as(administrator!));
      everyone.push(...page.users);
      if (!page.hasMore) break;
      cursor = page.nextCursor;
    }
    assert.equal(new Set(everyone.map((u) => u.user?.id)).size, everyone.length, "no user twice across pages");
    assert.equal(everyone.find((u) => u.user?.id === admin.user.id)?.workspaceCount, 2, "their own and the team's");
    const workspaces = [];
    for (let cursor = ""; ; ) {
      const page = await client.listAllWorkspaces({ cursor }, as(administrator!));
      workspaces.push(...page.workspaces);
      if (!page.hasMore) break;
      cursor = page.nextCursor;
    }
    const teamRow = workspaces.find((w) => w.workspace?.id === ws.id)!;
    assert.deepEqual([teamRow.ownerEmail, teamRow.memberCount], [owner.user.email, 3]);

    for (const someone of [owner.user.id, admin.user.id]) {
      await rejectsWith(client.listAllUsers({}, as(someone)), Code.PermissionDenied, /^only the installation's administrator may do this$/);
      await rejectsWith(client.listAllWorkspaces({}, as(someone)), Code.PermissionDenied);
      await rejectsWith(client.setPlan({ workspaceId: ws.id, plan: Plan.PRO }, as(someone)), Code.PermissionDenied, /^plans are set by whoever runs this installation$/);
    }
    await rejectsWith(client.listAllUsers({ limit: 101 }, as(administrator!)), Code.InvalidArgument, /^limit must be between 1 and 100$/);
    const pro = await client.setPlan({ workspaceId: ws.id, plan: Plan.PRO }, as(administrator!));
    assert.equal(pro.workspace?.entitlements?.removeBranding, true);
    await rejectsWith(client.setPlan({ workspaceId: "no-such-workspace", plan: Plan.PRO }, as(administrator!)), Code.NotFound);
    // The operator (the CLI) lists too.
    assert.ok((await client.listAllWorkspaces({ limit: 1 })).workspaces.length === 1);
  });
});

describe("sign-up control (SIGNUP)", () => {
  /** A client of handlers under `signUp`, over the same database. */
  const clientUnder = (signUp: Parameters<typeof createIdentityHandlers>[0]["signUp"]) => {
    const handlers = createIdentityHandlers({ orm, publicUrl: "http://forms.test", signUp });
    return createClient(IdentityService, createRouterTransport((router) => routes(router, handlers)));
  };

  it("invite-only: nobody signs up, an invitation signs its person up; the operator makes anyone", async () => {
    const strict = clientUnder({ mode: "invite-only" });
    const refused = await rejectsWith(strict.signUp({ email: uniqueEmail("walk-in"), name: "Wal", password: "nobody invited me here" }), Code.PermissionDenied);
    assert.equal(refused.rawMessage, "sign-up is by invitation only: ask someone in a workspace here to invite you");
    const { owner, ws } = await team();
    const email = uniqueEmail("invited");
    await strict.inviteMember({ workspaceId: ws.id, email }, as(owner.user.id));
    const token = tokenIn((await outbox(email))[0]!.text, "/app/accept-invite");
    const joined = await strict.acceptInvitation({ token, name: "Ina", password: "an invitation lets me in" });
    assert.equal(joined.workspace?.id, ws.id);
    assert.ok((await strict.createUser({ email: uniqueEmail("by-operator"), name: "Op" })).user);
  });

  it("domains: only their addresses sign up or are invited, the same answer whether or not an account exists", async () => {
    const company = clientUnder({ mode: "domains", domains: ["example.com"] });
    const outsider = `someone.${Date.now()}@elsewhere.test`;
    const refused = await rejectsWith(company.signUp({ email: outsider, name: "Out", password: "not one of the company's" }), Code.PermissionDenied);
    assert.equal(refused.rawMessage, "sign-up is open to addresses at example.com only");
    assert.equal((await company.signUp({ email: uniqueEmail("staff"), name: "Sta", password: "one of the company's own" })).user?.emailVerified, false);

    const { owner, ws } = await team();
    // The operator made an account at the outside address: inviting it is refused as for one without.
    await client.createUser({ email: outsider, name: "Outsider" });
    const nobody = `nobody.${Date.now()}@elsewhere.test`;
    for (const email of [outsider, nobody]) {
      const err = await rejectsWith(company.inviteMember({ workspaceId: ws.id, email }, as(owner.user.id)), Code.PermissionDenied);
      assert.equal(err.rawMessage, "invitations go to addresses at example.com only");
    }
    // An invitation sent before SIGNUP changed does not sign an outsider up.
    const late = `late.${Date.now()}@elsewhere.test`;
    await client.inviteMember({ workspaceId: ws.id, email: late }, as(owner.user.id));
    const token = tokenIn((await outbox(late))[0]!.text, "/app/accept-invite");
    await rejectsWith(company.acceptInvitation({ token, password: "invited before the rule" }), Code.PermissionDenied, /^invitations go to addresses at example.com only$/);
  });
});

describe("the attack of issue 34: a stranger's sign-up with someone else's address", () => {
  it("is invited but does not join; the address's owner resets the password by mail and the stranger's key is refused", async () => {
    const owner = await newUser({ name: "Olga Owner", verified: true });
    const ws = (await client.createWorkspace({ name: "Payroll" }, as(owner.user.id))).workspace!;
    const ownersKey = await client.createApiKey({ name: "owner's" }, as(owner.user.id));
    const victim = uniqueEmail("victim");
    // The stranger signs up with the victim's address (never verified), makes a key and keeps a session.
    const stranger = (await client.signUp({ email: victim, name: "Victor", password: "someone else's address, mine now" })).user!;
    const { key } = await client.createApiKey({ name: "exfiltration" }, as(stranger.id));
    const { token: session } = await client.createSession({ userId: stranger.id });

    // The owner invites the address as admin: a mail to the address, not a membership.
    const invited = await client.inviteMember({ workspaceId: ws.id, email: victim, role: Role.ADMIN }, as(owner.user.id));
    assert.equal(invited.invited, true);
    const byKey = (await client.authenticateApiKey({ key })).user!;
    assert.equal(byKey.id, stranger.id);
    await rejectsWith(client.getWorkspace({ workspaceId: ws.id }, as(byKey.id)), Code.NotFound, /^workspace not found$/);
    assert.ok(!(await client.listWorkspaces({}, as(byKey.id))).workspaces.some((w) => w.id === ws.id));
    assert.deepEqual((await client.listMembers({ workspaceId: ws.id }, as(owner.user.id))).members.map((m) => m.user?.email), [owner.user.email]);
    const invitation = tokenIn((await outbox(victim)).find((m) => m.subject === `Olga Owner invited you to Payroll`)!.text, "/app/accept-invite");
    assert.equal((await client.getInvitation({ token: invitation })).accountExists, true);

    // The address's owner sets a password by the mailed link: the sessions end, and the keys made
    // before the address was proven go, even when asked to keep them.
    await client.requestPasswordReset({ email: victim });
    const resetToken = tokenIn((await mailAfter(victim, "Set a new password")).text, "/app/reset-password");
    const reset = await client.resetPassword({ token: resetToken, password: "my own address and my own password", keepApiKeys: true });
    assert.deepEqual([reset.user?.id, reset.user?.emailVerified], [stranger.id, true]);
    await rejectsWith(client.authenticateApiKey({ key }), Code.Unauthenticated, /^invalid API key$/);
    await rejectsWith(client.resolveSession({ token: session }), Code.Unauthenticated);
    assert.deepEqual((await client.listApiKeys({}, as(stranger.id))).apiKeys, []);
    assert.equal((await client.authenticateApiKey({ key: ownersKey.key })).user?.id, owner.user.id, "nobody else's keys");

    // Signed in with the new password, the address's owner follows the invitation and joins.
    const joined = await client.acceptInvitation({ token: invitation }, as(reset.user!.id));
    assert.equal(joined.workspace?.role, Role.ADMIN);
    assert.equal((await client.getWorkspace({ workspaceId: ws.id }, as(reset.user!.id))).workspace?.role, Role.ADMIN);
  });
});

describe("idempotency keys", () => {
  let keyCounter = 0;
  const claim = (requestHash = "hash-a") => ({ scope: "key:K1", key: `idem-${Date.now()}-${keyCounter++}`, requestHash });
  const answer = new TextEncoder().encode('{"id":"F1"}');

  it("the first Begin proceeds; after Complete a repeat replays the answer and another hash is a mismatch", async () => {
    const first = claim();
    assert.equal((await client.beginIdempotency(first)).outcome, Outcome.PROCEED);
    await client.completeIdempotency({ ...first, status: 201, body: answer });
    const repeat = await client.beginIdempotency(first);
    assert.equal(repeat.outcome, Outcome.REPLAY);
    assert.equal(repeat.status, 201);
    assert.deepEqual(new Uint8Array(repeat.body), answer);
    assert.equal((await client.beginIdempotency({ ...first, requestHash: "hash-b" })).outcome, Outcome.MISMATCH);
  });

  it("keys are scoped: the same key in another scope is another claim", async () => {
    const first = claim();
    assert.equal((await client.beginIdempotency(first)).outcome, Outcome.PROCEED);
    assert.equal((await client.beginIdempotency({ ...first, scope: "key:K2", requestHash: "hash-b" })).outcome, Outcome.PROCEED);
  });

  it("concurrent Begins of one key: exactly one proceeds, the others are told it is in progress", async () => {
    const first = claim();
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => client.beginIdempotency(first)));
    assert.equal(outcomes.filter((o) => o.outcome === Outcome.PROCEED).length, 1);
    assert.equal(outcomes.filter((o) => o.outcome === Outcome.IN_PROGRESS).length, 7);
  });

  it("a released claim frees the key; a claim without an answer is let go after the lease, for the same request only", async () => {
    const released = claim();
    await client.beginIdempotency(released);
    await client.completeIdempotency({ ...released, release: true });
    assert.equal((await client.beginIdempotency(released)).outcome, Outcome.PROCEED);

    const lapsed = claim();
    await client.beginIdempotency(lapsed);
    const skewBefore = skewMs;
    skewMs += idempotencyLeaseMs + 1000;
    try {
      assert.equal((await client.beginIdempotency({ ...lapsed, requestHash: "hash-b" })).outcome, Outcome.MISMATCH);
      assert.equal((await client.beginIdempotency(lapsed)).outcome, Outcome.PROCEED);
    } finally {
      skewMs = skewBefore;
    }
  });

  // Retention removes expired keys: retention.test.ts.
  it("after 24 hours the key is free again", async () => {
    const old = claim();
    await client.beginIdempotency(old);
    await client.completeIdempotency({ ...old, status: 201, body: answer });
    const skewBefore = skewMs;
    skewMs += idempotencyTtlMs + 1000;
    try {
      assert.equal((await client.beginIdempotency({ ...old, requestHash: "hash-b" })).outcome, Outcome.PROCEED);
    } finally {
      skewMs = skewBefore;
    }
  });

  it("a call without scope, key or hash is INVALID_ARGUMENT", async () => {
    await rejectsWith(client.beginIdempotency({ scope: "key:K1", key: "", requestHash: "h" }), Code.InvalidArgument);
  });
});

describe("change notices for the workspaces forms holds", () => {
  it("notifies the workspace's id when it changes, when a member's role changes or a member goes; not when one joins", async () => {
    const owner = await newUser({ name: "Nora Notified" });
    const member = await newUser({ name: "Max Member", verified: true });
    const ws = owner.workspace;
    const notices = await recordChannel(database.databaseUrl, workspaceChangesChannel);
    try {
      await client.addMember({ workspaceId: ws.id, email: member.user.email });
      assert.deepEqual(await notices.settled(0), [], "a new member was nobody's to forget");
      await client.setMemberRole({ workspaceId: ws.id, userId: member.user.id, role: Role.ADMIN }, as(owner.user.id));
      assert.deepEqual(await notices.settled(1), [ws.id], "a role changed");
      await client.setPlan({ workspaceId: ws.id, plan: Plan.PRO });
      assert.deepEqual(await notices.settled(1), [ws.id], "the plan changed");
      await client.removeMember({ workspaceId: ws.id, userId: member.user.id }, as(owner.user.id));
      assert.deepEqual(await notices.settled(1), [ws.id], "a member removed");
    } finally {
      await notices.stop();
    }
  });
});
