import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { userSchema, workspaceSchema } from "@formsvc/api-records/schemas";
import { apiClient, createUserWithKey, startTestSystem, type TestSystem } from "./support/system.ts";

let sys: TestSystem;
before(async () => {
  sys = await startTestSystem("identity");
});
after(() => sys?.stop());

describe("users, workspaces and keys over /api/v1", () => {
  it("answers /users/me with the key's owner", async () => {
    const ada = await createUserWithKey(sys, "ada@example.com");
    const me = await ada.api("GET", "/users/me");
    assert.equal(me.status, 200);
    userSchema.parse(me.body);
    assert.equal(me.body.email, "ada@example.com");
    assert.equal(me.body.id, ada.user.id);
  });

  it("lists and reads the caller's workspaces, masking everyone else's", async () => {
    const bob = await createUserWithKey(sys, "bob@example.com", "pro");
    const eve = await createUserWithKey(sys, "eve@example.com");
    const shared = await sys.cli("workspace:create", "--owner", "bob@example.com", "--name", "Team");
    await sys.cli("workspace:add-member", "--workspace", shared.workspace.id, "--email", "eve@example.com");

    const list = await bob.api("GET", "/workspaces");
    assert.equal(list.status, 200);
    assert.deepEqual(Object.keys(list.body).sort(), ["hasMore", "items", "limit", "nextCursor", "page"]);
    assert.deepEqual(list.body.items.map((w: { id: string }) => w.id).sort(), [bob.workspace.id, shared.workspace.id].sort());
    for (const w of list.body.items) workspaceSchema.parse(w);
    assert.equal(list.body.items.find((w: { id: string }) => w.id === bob.workspace.id).entitlements.removeBranding, true);

    const paged = await bob.api("GET", "/workspaces?page=1&limit=1");
    assert.deepEqual([paged.body.items.length, paged.body.hasMore, paged.body.limit], [1, true, 1]);
    const page2 = await bob.api("GET", "/workspaces?page=2&limit=1");
    assert.deepEqual([page2.body.items.length, page2.body.hasMore], [1, false]);

    assert.equal((await eve.api("GET", `/workspaces/${shared.workspace.id}`)).status, 200);
    const foreign = await eve.api("GET", `/workspaces/${bob.workspace.id}`);
    const missing = await eve.api("GET", "/workspaces/doesnotexist0000");
    assert.equal(foreign.status, 404);
    assert.deepEqual(foreign.body, missing.body);
  });

  it("refuses missing, malformed and deleted keys with 401, a deletion on the very next request", async () => {
    const carol = await createUserWithKey(sys, "carol@example.com");
    assert.equal((await apiClient(sys.url)("GET", "/users/me")).status, 401);
    assert.equal((await apiClient(sys.url, "not-a-key")("GET", "/users/me")).status, 401);
    const raw = await fetch(`${sys.url}/api/v1/users/me`, { headers: { authorization: `Token ${carol.key}` } });
    assert.equal(raw.status, 401);
    assert.match((await raw.json()).error, /Bearer/);

    assert.equal((await carol.api("GET", "/users/me")).status, 200);
    const deleted = await sys.cli("key:delete", "--id", carol.keyId);
    assert.equal(deleted.deleted, true);
    const after = await carol.api("GET", "/users/me");
    assert.equal(after.status, 401);
    assert.match(after.headers.get("content-type") ?? "", /json/);
    assert.equal(typeof after.body.error, "string");
  });

  it("stores only a hash and a display prefix of each key", async () => {
    const dan = await createUserWithKey(sys, "dan@example.com");
    assert.match(dan.key, /^fk-[A-Za-z0-9_-]{43,}$/);
    const listed = await sys.cli("key:list", "--email", "dan@example.com");
    assert.equal(listed.keys.length, 1);
    assert.ok(!JSON.stringify(listed).includes(dan.key), "the key is shown once, never listed");
    assert.ok(dan.key.startsWith(listed.keys[0].prefix));
    const db = new pg.Client({ connectionString: sys.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query("select * from identity.api_keys");
      assert.ok(rows.length >= 1);
      assert.ok(!JSON.stringify(rows).includes(dan.key), "no key is stored in the clear");
    } finally {
      await db.end();
    }
  });
});
