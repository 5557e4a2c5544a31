import type { MikroORM } from "@mikro-orm/postgresql";

/** How long a key answers repeats: a day, as the spec's integrators expect (and Stripe does); retention.ts then removes it. */
export const idempotencyTtlMs = 24 * 60 * 60 * 1000;
/**
 * How long a claim without an answer holds its key: longer than any request runs (the gateway's RPC
 * calls end well within it), so only a claim whose gateway died is let go, and the repeat then runs.
 */
export const idempotencyLeaseMs = 60 * 1000;

export type IdempotencyOutcome =
  | { outcome: "proceed" }
  | { outcome: "replay"; status: number; body: Uint8Array }
  | { outcome: "mismatch" }
  | { outcome: "in-progress" };

export interface IdempotencyClaim {
  scope: string;
  key: string;
  requestHash: string;
}

function table(orm: MikroORM): string {
  return `"${orm.config.get("schema") ?? "public"}"."idempotency_keys"`;
}

/**
 * Claims the key (a new row, or taking over an expired one or a lapsed claim) or tells what holds it.
 * The claim is one statement, so two replicas racing for a key cannot both proceed.
 */
export async function beginIdempotency(orm: MikroORM, claim: IdempotencyClaim, now: Date): Promise<IdempotencyOutcome> {
  const connection = orm.em.getConnection();
  const expired = new Date(now.getTime() - idempotencyTtlMs);
  const lapsed = new Date(now.getTime() - idempotencyLeaseMs);
  const claimed = await connection.execute(
    `insert into ${table(orm)} ("scope", "key", "request_hash", "status", "body", "created_at") values (?, ?, ?, null, null, ?)
      on conflict ("scope", "key") do update set "request_hash" = excluded."request_hash", "status" = null, "body" = null, "created_at" = excluded."created_at"
      where ${table(orm)}."created_at" < ? or (${table(orm)}."status" is null and ${table(orm)}."created_at" < ? and ${table(orm)}."request_hash" = excluded."request_hash")
      returning 1`,
    [claim.scope, claim.key, claim.requestHash, now, expired, lapsed],
  );
  if (claimed.length > 0) return { outcome: "proceed" };
  const [row] = await connection.execute<{ request_hash: string; status: number | null; body: Buffer | null }[]>(
    `select "request_hash", "status", "body" from ${table(orm)} where "scope" = ? and "key" = ?`,
    [claim.scope, claim.key],
  );
  // Swept between the two statements: a rare race, answered as busy so the client retries.
  if (!row) return { outcome: "in-progress" };
  if (row.request_hash !== claim.requestHash) return { outcome: "mismatch" };
  if (row.status === null) return { outcome: "in-progress" };
  return { outcome: "replay", status: row.status, body: new Uint8Array(row.body ?? Buffer.alloc(0)) };
}

/** Records the answer of a claim that is still open, or (`release`) drops the claim so the key is free again. */
export async function completeIdempotency(
  orm: MikroORM,
  claim: IdempotencyClaim,
  answer: { release: true } | { release: false; status: number; body: Uint8Array },
): Promise<void> {
  const connection = orm.em.getConnection();
  const open = `"scope" = ? and "key" = ? and "request_hash" = ? and "status" is null`;
  const where = [claim.scope, claim.key, claim.requestHash];
  if (answer.release) await connection.execute(`delete from ${table(orm)} where ${open}`, where, "run");
  else await connection.execute(`update ${table(orm)} set "status" = ?, "body" = ? where ${open}`, [answer.status, Buffer.from(answer.body), ...where], "run");
}
