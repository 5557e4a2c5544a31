// Taking due deliveries to attempt. Several workers (processes or replicas) share one table:
// `FOR UPDATE SKIP LOCKED` lets concurrent claims pass each other without waiting or taking the same
// row, and the lease written with the claim (`locked_until`, `lease_id`) keeps the row away from
// every other claim while it is attempted. A worker that dies leaves its lease to run out, and the
// row is due again: nothing is lost, at worst sent twice (delivery is at least once). A claim ends with
// an attempt (attempt/), or without one: given back, put off, or failed; each write checks the lease.
import { newId } from "@formsvc/platform/ids.ts";
import type { MikroORM } from "@formsvc/platform/database.ts";
import type { Delivery } from "../entities/index.ts";
import { deliveryFromRow, tablesOf, type DeliveryRow } from "../entities/rows.ts";

/** How long a claim keeps a delivery: far longer than one attempt (10 s plus a lookup and a write). */
export const defaultLeaseMs = 30_000;

/** A claimed delivery: `leaseId` proves the claim in every later write. */
export type ClaimedDelivery = Delivery & { leaseId: string };

export interface ClaimOptions {
  limit: number;
  leaseMs?: number;
  /** Receiver origins to leave alone (this worker already sends all it may to them). */
  excludeOrigins?: readonly string[];
}

/** Claims up to `limit` due deliveries, those due longest first. */
export async function claimDue(orm: MikroORM, options: ClaimOptions): Promise<ClaimedDelivery[]> {
  if (options.limit <= 0) return [];
  const { deliveries } = tablesOf(orm);
  const leaseId = newId();
  const exclude = options.excludeOrigins?.length ? `and "origin" not in (?)` : "";
  const params: unknown[] = [(options.leaseMs ?? defaultLeaseMs) / 1000, leaseId];
  if (exclude) params.push([...options.excludeOrigins!]);
  params.push(options.limit);
  const rows: DeliveryRow[] = await orm.em.getConnection().execute(
    `update ${deliveries} set "locked_until" = now() + make_interval(secs => ?), "lease_id" = ?
     where "id" in (
       select "id" from ${deliveries}
       where "status" in ('pending', 'retrying') and "next_attempt_at" <= now()
         and ("locked_until" is null or "locked_until" <= now()) ${exclude}
       order by "next_attempt_at"
       limit ?
       for update skip locked)
     returning *`,
    params,
    "all",
  );
  return rows.map((row) => deliveryFromRow(row) as ClaimedDelivery).sort((a, b) => +a.nextAttemptAt! - +b.nextAttemptAt!);
}

/** Gives a claimed delivery back untouched, due as before. */
export async function releaseClaim(orm: MikroORM, delivery: ClaimedDelivery): Promise<void> {
  const { deliveries } = tablesOf(orm);
  await orm.em.getConnection().execute(
    `update ${deliveries} set "locked_until" = null, "lease_id" = null where "id" = ? and "lease_id" = ?`,
    [delivery.id, delivery.leaseId],
    "run",
  );
}

/** Ends a claimed delivery as failed without an attempt (its webhook is gone or disabled). */
export async function failWithoutAttempt(orm: MikroORM, delivery: ClaimedDelivery, error: string): Promise<void> {
  const { deliveries } = tablesOf(orm);
  await orm.em.getConnection().execute(
    `update ${deliveries} set "status" = 'failed', "last_error" = ?, "next_attempt_at" = null,
       "locked_until" = null, "lease_id" = null, "updated_at" = now()
     where "id" = ? and "lease_id" = ?`,
    [error, delivery.id, delivery.leaseId],
    "run",
  );
}

/** Pushes a claimed delivery back by `delayMs` without counting an attempt, and releases it. */
export async function deferDelivery(orm: MikroORM, delivery: ClaimedDelivery, delayMs: number, origin?: string): Promise<void> {
  const { deliveries } = tablesOf(orm);
  await orm.em.getConnection().execute(
    `update ${deliveries} set "next_attempt_at" = now() + make_interval(secs => ?), "origin" = ?,
       "locked_until" = null, "lease_id" = null, "updated_at" = now()
     where "id" = ? and "lease_id" = ?`,
    [Math.max(0, delayMs) / 1000, origin ?? delivery.origin, delivery.id, delivery.leaseId],
    "run",
  );
}
