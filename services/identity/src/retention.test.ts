import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { pruneBatchRows, type PruneTarget } from "@formsvc/platform/retention.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { entities } from "./entities/index.ts";
import { idempotencyTtlMs } from "./idempotency.ts";
import { migrations } from "./migrations/index.ts";
import { identityRetention } from "./retention.ts";

const minute = 60_000;
const hour = 60 * minute;
const safetySeconds = 3600;

let database: TestDatabase;
let orm: MikroORM;
let targets: Map<string, PruneTarget>;

before(async () => {
  database = await createTestDatabase("identity_retention_test");
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "identity", entities, migrations });
  targets = new Map(identityRetention(orm, { safetySeconds }).map((target) => [target.what, target]));
});

after(async () => {
  await orm?.close(true);
  await database?.drop();
});

const sql = (query: string, params: unknown[] = []) => orm.em.getConnection().execute(query, params);
/** A time `ms` from now (before it when negative). */
const fromNow = (ms: number) => new Date(Date.now() + ms);

/** The values of `column` left in `table`, sorted. */
async function left(table: string, column: string): Promise<string[]> {
  const rows = await sql(`select "${column}" as "value" from "identity"."${table}" order by 1`);
  return rows.map((row) => String(row.value));
}

/** Counts, then removes, what `what` allows older than `olderThan`; asserts both are `expected`. */
async function prunes(what: string, olderThan: Date, expected: number): Promise<void> {
  const target = targets.get(what)!;
  assert.equal(await target.count(olderThan), expected, `${what}: count`);
  assert.equal(await target.remove(olderThan), expected, `${what}: removed`);
  assert.equal(await target.count(olderThan), 0, `${what}: nothing left to remove`);
}

beforeEach(async () => {
  for (const table of ["sessions", "email_links", "idempotency_keys", "mail_outbox", "users"]) await sql(`delete from "identity"."${table}"`);
  await sql(`insert into "identity"."users" ("id", "email", "name", "created_at") values ('u1', 'ada@example.com', 'Ada', now())`);
});

describe("identity's retention", () => {
  it("names its targets by table, the operator's keys of prune", () => {
    assert.deepEqual([...targets.keys()], ["identity.sessions", "identity.email_links", "identity.idempotency_keys", "identity.mail_outbox", "identity.audit_events"]);
  });

  it("sessions: the expired ones go, each pass all of them, the operator's prune those expired before its bound; live ones stay", async () => {
    const session = (id: string, expiresAt: Date) =>
      sql(`insert into "identity"."sessions" ("id", "user_id", "token_hash", "created_at", "expires_at") values (?, 'u1', ?, ?, ?)`, [
        id,
        `hash-${id}`,
        fromNow(-30 * 24 * hour),
        expiresAt,
      ]);
    await session("expired-long-ago", fromNow(-48 * hour));
    await session("expired-just-now", fromNow(-minute));
    await session("live", fromNow(hour));
    const now = new Date();
    assert.equal(targets.get("identity.sessions")!.olderThanAt(now), now, "expiry alone is the condition");

    await prunes("identity.sessions", fromNow(-24 * hour), 1);
    assert.deepEqual(await left("sessions", "id"), ["expired-just-now", "live"]);
    // A bound to come is taken as now: the live session stays.
    await prunes("identity.sessions", fromNow(365 * 24 * hour), 1);
    assert.deepEqual(await left("sessions", "id"), ["live"]);
  });

  it("email links: used and expired ones go, by when they were used or expired; unused ones still good stay", async () => {
    const link = (token: string, expiresAt: Date, usedAt: Date | null) =>
      sql(`insert into "identity"."email_links" ("token_hash", "purpose", "email", "created_at", "expires_at", "used_at") values (?, 'password-reset', 'ada@example.com', ?, ?, ?)`, [
        token,
        fromNow(-72 * hour),
        expiresAt,
        usedAt,
      ]);
    await link("used-long-ago", fromNow(hour), fromNow(-48 * hour));
    await link("expired-long-ago", fromNow(-48 * hour), null);
    await link("used-just-now", fromNow(hour), fromNow(-minute));
    await link("expired-just-now", fromNow(-minute), null);
    await link("good", fromNow(hour), null);

    await prunes("identity.email_links", fromNow(-24 * hour), 2);
    assert.deepEqual(await left("email_links", "token_hash"), ["expired-just-now", "good", "used-just-now"]);
    const now = new Date();
    await prunes("identity.email_links", targets.get("identity.email_links")!.olderThanAt(now)!, 2);
    await prunes("identity.email_links", fromNow(365 * 24 * hour), 0);
    assert.deepEqual(await left("email_links", "token_hash"), ["good"]);
  });

  it("Idempotency-Keys: those claimed over a day ago go; younger ones, answered or not, stay", async () => {
    const key = (name: string, createdAt: Date, status: number | null) =>
      sql(`insert into "identity"."idempotency_keys" ("scope", "key", "request_hash", "status", "created_at") values ('key:K1', ?, 'h', ?, ?)`, [name, status, createdAt]);
    await key("expired-long-ago", fromNow(-idempotencyTtlMs - 48 * hour), 201);
    await key("expired-just-now", fromNow(-idempotencyTtlMs - minute), null);
    await key("answered", fromNow(-idempotencyTtlMs + hour), 201);
    await key("claimed", fromNow(-minute), null);

    await prunes("identity.idempotency_keys", fromNow(-48 * hour), 1);
    await prunes("identity.idempotency_keys", targets.get("identity.idempotency_keys")!.olderThanAt(new Date())!, 1);
    await prunes("identity.idempotency_keys", fromNow(365 * 24 * hour), 0);
    assert.deepEqual(await left("idempotency_keys", "key"), ["answered", "claimed"]);
  });

  it("mail: sent and given-up mail goes RETENTION_SAFETY_SECONDS after, or before the operator's bound; mail to send never", async () => {
    const mail = (to: string, at: { created: Date; sent?: Date; failed?: Date }) =>
      sql(`insert into "identity"."mail_outbox" ("to_address", "subject", "text", "html", "attempts", "created_at", "sent_at", "failed_at") values (?, 's', 't', 'h', 1, ?, ?, ?)`, [
        to,
        at.created,
        at.sent ?? null,
        at.failed ?? null,
      ]);
    await mail("sent-long-ago", { created: fromNow(-3 * hour), sent: fromNow(-2 * hour) });
    await mail("given-up-long-ago", { created: fromNow(-3 * hour), failed: fromNow(-2 * hour) });
    await mail("sent-just-now", { created: fromNow(-minute), sent: fromNow(-minute) });
    await mail("retrying-for-days", { created: fromNow(-72 * hour) });
    await mail("new", { created: fromNow(0) });
    const mailTarget = targets.get("identity.mail_outbox")!;
    const now = new Date();
    assert.equal(mailTarget.olderThanAt(now)!.getTime(), now.getTime() - safetySeconds * 1000);

    await prunes("identity.mail_outbox", mailTarget.olderThanAt(now)!, 2);
    assert.deepEqual(await left("mail_outbox", "to_address"), ["new", "retrying-for-days", "sent-just-now"]);
    await prunes("identity.mail_outbox", fromNow(365 * 24 * hour), 1);
    assert.deepEqual(await left("mail_outbox", "to_address"), ["new", "retrying-for-days"]);
  });

  it("removes in batches until none is left, more rows than one statement takes", async () => {
    const rows = 2 * pruneBatchRows + 7;
    await sql(
      `insert into "identity"."sessions" ("id", "user_id", "token_hash", "created_at", "expires_at")
       select 's' || i, 'u1', 'hash-' || i, now() - interval '2 days', now() - interval '1 day' from generate_series(1, ?) i`,
      [rows],
    );
    await sql(`insert into "identity"."sessions" ("id", "user_id", "token_hash", "created_at", "expires_at") values ('live', 'u1', 'hash-live', now(), now() + interval '1 hour')`);
    await prunes("identity.sessions", new Date(), rows);
    assert.deepEqual(await left("sessions", "id"), ["live"]);
  });

  it("each target's rows are picked by its own index, not by reading the whole table", async () => {
    const indexes: Record<string, string> = {
      "identity.sessions": "sessions_expires_at_index",
      "identity.email_links": "email_links_ended_at_index",
      "identity.idempotency_keys": "idempotency_keys_created_at_index",
      "identity.mail_outbox": "mail_outbox_finished_at_index",
      "identity.audit_events": "audit_events_occurred_at",
    };
    // The statement each target counts with (its deletes pick rows with the same condition), recorded as it
    // goes, then planned with sequential scans priced out of reach.
    const connection = orm.em.getConnection();
    const execute = connection.execute;
    const statements = new Map<string, Parameters<typeof execute>>();
    for (const target of targets.values()) {
      connection.execute = function (this: typeof connection, ...args: Parameters<typeof execute>) {
        statements.set(target.what, args);
        return execute.apply(this, args);
      } as typeof execute;
      try {
        await target.count(new Date());
      } finally {
        connection.execute = execute;
      }
    }
    assert.deepEqual([...statements.keys()], Object.keys(indexes));
    await orm.em.transactional(async (em) => {
      await em.execute(`set local enable_seqscan = off`);
      for (const [what, [query, params]] of statements) {
        const plan = (await em.execute(`explain ${String(query)}`, params)).map((row) => row["QUERY PLAN"]).join("\n");
        assert.match(plan, new RegExp(`Index (Only )?Scan (using|on) ${indexes[what]} `), `${what}:\n${plan}`);
        assert.doesNotMatch(plan, /Seq Scan/, `${what}:\n${plan}`);
      }
    });
  });
});
