import assert from "node:assert/strict";
import { eventually } from "@formsvc/platform/testing/eventually.ts";
import { after, before, describe, it } from "node:test";
import { Code, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import pg from "pg";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { createLogger } from "@formsvc/platform/logger.ts";
import { listenForNotices, noticeConnectionName, type NoticeListener } from "@formsvc/platform/pg-notices.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { rejectsWith } from "@formsvc/platform/testing/rpc-assertions.ts";
import { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { ApiKeyCache, apiKeyChangesChannel } from "../api-key-cache.ts";
import { entities } from "../entities/index.ts";
import { migrations } from "../migrations/index.ts";
import { createIdentityHandlers, lastUsedResolutionMs, routes } from "./identity-handlers.ts";

// Two replicas of identity's handlers over one database, each holding keys in its own cache and
// listening for the notices that revoke them, as server.ts wires them.

interface Replica {
  client: Client<typeof IdentityService>;
  cache: ApiKeyCache;
  /** How many times its notice connection has started listening. */
  listens(): number;
  notices: NoticeListener;
}

let database: TestDatabase;
let orm: MikroORM;
let replicas: Replica[] = [];
let skewMs = 0;
let counter = 0;
const logger = createLogger("identity-test", "silent");

async function startReplica(): Promise<Replica> {
  const cache = new ApiKeyCache();
  let listens = 0;
  const notices = listenForNotices({
    databaseUrl: database.databaseUrl,
    channel: apiKeyChangesChannel,
    logger,
    retryMs: 50,
    onNotice: (notice) => cache.revoke(notice),
    onListening: () => {
      cache.listening();
      listens++;
    },
    onLost: () => cache.lost(),
  });
  const handlers = createIdentityHandlers({ orm, now: () => new Date(Date.now() + skewMs), publicUrl: "http://forms.test", apiKeyCache: cache });
  const replica = { client: createClient(IdentityService, createRouterTransport((router) => routes(router, handlers))), cache, listens: () => listens, notices };
  await eventually(() => listens === 1, 5_000, "the replica listens");
  return replica;
}

/** Runs `sql` on a connection of its own with triggers off: a change whose notice is never sent. */
async function withoutNotices(sql: string, params: unknown[]): Promise<void> {
  const db = new pg.Client({ connectionString: database.databaseUrl });
  await db.connect();
  try {
    await db.query("set session_replication_role = replica");
    await db.query(sql, params);
  } finally {
    await db.end();
  }
}

async function sql(text: string, params: unknown[]): Promise<void> {
  await orm.em.fork().getConnection().execute(text, params, "run");
}

async function newKey(client: Client<typeof IdentityService>) {
  const { user } = await client.createUser({ email: `holder.${Date.now()}.${counter++}@example.com`, name: "Holder" });
  const { key, apiKey } = await client.createApiKey({ email: user!.email, name: "held" });
  return { user: user!, key, id: apiKey!.id };
}

before(async () => {
  database = await createTestDatabase("identity_revocation_test");
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "identity", entities, migrations });
  replicas = [await startReplica(), await startReplica()];
});

after(async () => {
  for (const replica of replicas) await replica.notices.stop();
  await orm?.close(true);
  await database?.drop();
});

describe("API keys held in memory, revoked by notices", () => {
  it("a held key is answered without reading the database", async () => {
    const [a] = replicas;
    const { key, id, user } = await newKey(a.client);
    assert.equal((await a.client.authenticateApiKey({ key })).user?.id, user.id);
    await withoutNotices(`delete from "identity"."api_keys" where id = $1`, [id]);
    // Only a missed notice could do this; the next test shows the connection's loss forgets it.
    assert.equal((await a.client.authenticateApiKey({ key })).apiKeyId, id);
  });

  it("a key deleted through one replica is refused there at once, and by the other when the notice arrives", async () => {
    const [a, b] = replicas;
    const { key, id } = await newKey(a.client);
    for (const replica of replicas) assert.equal((await replica.client.authenticateApiKey({ key })).apiKeyId, id);
    await b.client.deleteApiKey({ id });
    await rejectsWith(b.client.authenticateApiKey({ key }), Code.Unauthenticated, /^invalid API key$/);
    await eventually(async () => (await a.client.authenticateApiKey({ key }).catch(() => undefined)) === undefined, 5_000, "replica A refuses the deleted key");
  });

  it("a user's deletion or change drops their keys on every replica", async () => {
    const [a, b] = replicas;
    const renamed = await newKey(a.client);
    const removed = await newKey(a.client);
    for (const replica of replicas) {
      for (const { key } of [renamed, removed]) await replica.client.authenticateApiKey({ key });
    }
    await sql(`update "identity"."users" set "name" = 'Renamed' where id = ?`, [renamed.user.id]);
    await sql(`delete from "identity"."users" where id = ?`, [removed.user.id]);
    for (const replica of [a, b]) {
      await eventually(async () => (await replica.client.authenticateApiKey({ key: renamed.key })).user?.name === "Renamed", 5_000, "the new name is answered");
      await eventually(
        async () => (await replica.client.authenticateApiKey({ key: removed.key }).catch(() => undefined)) === undefined,
        5_000,
        "the deleted user's key is refused",
      );
    }
  });

  it("a password reset through one replica refuses the person's keys there at once, and on the other by the notices", async () => {
    const [a, b] = replicas;
    const email = `resetter.${Date.now()}.${counter++}@example.com`;
    // Signed up, never verified: the reset deletes the keys whatever it is asked.
    const { user } = await a.client.signUp({ email, name: "Rita", password: "a passphrase of my own" });
    const keys = await Promise.all(["one", "two"].map((name) => a.client.createApiKey({ email, name })));
    for (const replica of replicas) for (const { key } of keys) assert.equal((await replica.client.authenticateApiKey({ key })).user?.id, user!.id);
    await a.client.requestPasswordReset({ email });
    // Written after the answer (the time taken must not tell whether the address has an account).
    const mail = await eventually(
      async () =>
        (
          await orm.em.fork().getConnection().execute<{ text: string }[]>(
            `select "text" from "identity"."mail_outbox" where "to_address" = ? and "subject" = 'Set a new password'`,
            [email],
          )
        )[0],
      5_000,
      "the reset mail",
    );
    const token = decodeURIComponent(/reset-password\?token=([\w-]+)/.exec(mail.text)![1]);
    await b.client.resetPassword({ token, password: "another passphrase of mine", keepApiKeys: true });
    for (const { key } of keys) await rejectsWith(b.client.authenticateApiKey({ key }), Code.Unauthenticated, /^invalid API key$/);
    for (const { key } of keys) {
      await eventually(async () => (await a.client.authenticateApiKey({ key }).catch(() => undefined)) === undefined, 5_000, "replica A refuses the key");
    }
  });

  it("the notice connection's loss drops every held key; the replica reads through until it listens again", async () => {
    const [a] = replicas;
    const { key, id } = await newKey(a.client);
    await a.client.authenticateApiKey({ key });
    assert.ok(a.cache.size > 0);
    // Deleted while the notice is lost, as if it had been sent while the connection was down.
    await withoutNotices(`delete from "identity"."api_keys" where id = $1`, [id]);
    const listensBefore = a.listens();
    await sql(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and application_name = ?`, [
      noticeConnectionName(apiKeyChangesChannel),
    ]);
    await eventually(() => a.cache.size === 0, 5_000, "the cache is emptied");
    await rejectsWith(a.client.authenticateApiKey({ key }), Code.Unauthenticated, /^invalid API key$/);
    await eventually(() => a.listens() > listensBefore, 5_000, "the replica listens again");
    const fresh = await newKey(a.client);
    await a.client.authenticateApiKey({ key: fresh.key });
    assert.equal(a.cache.size, 1, "keys are held again once it listens");
  });

  it("a held key still records its last use, at most once a minute", async () => {
    const [a] = replicas;
    const { key, user } = await newKey(a.client);
    const lastUsed = async () => (await a.client.listApiKeys({ email: user.email })).apiKeys[0].lastUsedAt?.seconds;
    await a.client.authenticateApiKey({ key });
    const first = await lastUsed();
    assert.ok(first);
    skewMs += 5_000;
    await a.client.authenticateApiKey({ key });
    assert.equal(await lastUsed(), first);
    skewMs += lastUsedResolutionMs;
    await a.client.authenticateApiKey({ key });
    assert.ok(Number((await lastUsed())!) > Number(first));
  });
});
