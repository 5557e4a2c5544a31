// Taking due deliveries to attempt. Several workers (processes or replicas) share one table:
// `FOR UPDATE SKIP LOCKED` lets concurrent claims pass each other without waiting or taking the same
// row, and the lease written with the claim (`locked_until`, `lease_id`) keeps the row away from
// every other claim while it is attempted. A worker that dies leaves its lease to run out, and the
// row is due again: nothing is lost, at worst sent twice (delivery is at least once). The intake may also
// store a new delivery already leased to this process's worker (accept-event.ts), which then attempts it
// without a claim. A lease ends with an attempt (attempt/), or without one: given back, put off, or failed;
// each write checks the lease.
import { newId } from "@formsvc/platform/ids.ts";
import type { MikroORM } from "@formsvc/platform/database.ts";
import type { Delivery } from "../entities/index.ts";
import { payloadColumn, tablesOf, toDate, type DeliveryRow } from "../entities/rows.ts";

/** How long a claim keeps a delivery: far longer than one attempt (10 s plus a lookup and a write). */
export const defaultLeaseMs = 30_000;

/** A delivery leased to this worker, as much of it as an attempt needs: `leaseId` proves the lease in every later write. */
export type ClaimedDelivery = Pick<Delivery, "id" | "eventAt" | "webhookId" | "eventId" | "origin" | "payload" | "traceParent"> & { leaseId: string };

/**
 * Slots taken for deliveries about to be stored already leased to this worker (`leaseId`, for `leaseMs`).
 * `settle` is called once the statement has returned: it starts the deliveries stored, and gives back
 * every other slot (all of them, when storing failed).
 */
export interface SlotReservation {
  leaseId: string;
  leaseMs: number;
  /** Per origin asked for: whether a slot was taken (else the delivery is stored due, for a claim). */
  taken: readonly boolean[];
  settle(stored: readonly ClaimedDelivery[]): void;
}

/** The columns of a claimed delivery, and the order they are claimed in. */
type ClaimedRow = Pick<DeliveryRow, "id" | "event_at" | "webhook_id" | "event_id" | "origin" | "payload" | "trace_parent" | "next_attempt_at">;

export interface ClaimOptions {
  limit: number;
  leaseMs?: number;
  /**
   * The most to claim per receiver origin: `of` the origins named (0 leaves one alone: this worker already
   * sends all it may to it), `otherwise` for the rest. No bound when absent.
   */
  rooms?: { of: ReadonlyMap<string, number>; otherwise: number };
}

export interface Claimed {
  deliveries: ClaimedDelivery[];
  /** Due deliveries were passed over for want of room at their origin (or beyond the rows looked at). */
  passedOver: boolean;
}

/**
 * Claims up to `limit` due deliveries, those due longest first, at most an origin's room of each: a claim
 * never takes what its worker would only give back. The rows looked at are locked (skipping those another
 * claim holds) for the statement only; those passed over stay due.
 */
export async function claimDue(orm: MikroORM, options: ClaimOptions): Promise<Claimed> {
  if (options.limit <= 0) return { deliveries: [], passedOver: false };
  const tables = tablesOf(orm);
  const { deliveries } = tables;
  const leaseId = newId();
  const rooms = options.rooms ? [...options.rooms.of] : [];
  const full = rooms.filter(([, room]) => room <= 0).map(([origin]) => origin);
  const open = Object.fromEntries(rooms.filter(([, room]) => room > 0));
  const exclude = full.length ? `and "origin" not in (?)` : "";
  // Looked at: twice the limit when rooms bound the origins, so a full origin's backlog leaves others a share.
  const lookedAt = options.rooms ? options.limit * 2 : options.limit;
  const params: unknown[] = [];
  if (exclude) params.push(full);
  params.push(lookedAt, JSON.stringify(open), options.rooms?.otherwise ?? options.limit, options.limit, (options.leaseMs ?? defaultLeaseMs) / 1000, leaseId);
  const rows: (ClaimedRow & { looked_at: number })[] = await orm.em.getConnection().execute(
    `with "due" as (
       select "id", "event_at", "origin", "next_attempt_at" from ${deliveries}
       where "status" in ('pending', 'retrying') and "next_attempt_at" <= now()
         and ("locked_until" is null or "locked_until" <= now()) ${exclude}
       order by "next_attempt_at"
       limit ?
       for update skip locked),
     "picked" as (
       select "id", "event_at" from (
         select "id", "event_at", "next_attempt_at", row_number() over (partition by "origin" order by "next_attempt_at", "id") as "nth",
           coalesce((?::jsonb ->> "origin")::int, ?) as "room"
         from "due") "ranked"
       where "nth" <= "room"
       order by "next_attempt_at"
       limit ?)
     update ${deliveries} d set "locked_until" = now() + make_interval(secs => ?), "lease_id" = ?
     from "picked" where d."id" = "picked"."id" and d."event_at" = "picked"."event_at"
     returning d."id", d."event_at", d."webhook_id", d."event_id", d."origin", ${payloadColumn(tables)}, d."trace_parent", d."next_attempt_at", (select count(*) from "due")::int as "looked_at"`,
    params,
    "all",
  );
  return {
    deliveries: rows
      .sort((a, b) => +toDate(a.next_attempt_at!) - +toDate(b.next_attempt_at!))
      .map((row) => ({ id: row.id, eventAt: toDate(row.event_at), webhookId: row.webhook_id, eventId: row.event_id, origin: row.origin, payload: row.payload, traceParent: row.trace_parent, leaseId })),
    passedOver: rows.length > 0 && (rows[0].looked_at > rows.length || rows[0].looked_at === lookedAt),
  };
}

/** Gives back those of `ids` still held under `leaseId`, untouched, due as before. */
export async function releaseLease(orm: MikroORM, ids: readonly string[], leaseId: string): Promise<void> {
  if (ids.length === 0) return;
  const { deliveries } = tablesOf(orm);
  await orm.em.getConnection().execute(
    `update ${deliveries} set "locked_until" = null, "lease_id" = null where "id" in (?) and "lease_id" = ?`,
    [[...ids], leaseId],
    "run",
  );
}

/** Ends a claimed delivery as failed without an attempt (its webhook is gone or disabled). */
export async function failWithoutAttempt(orm: MikroORM, delivery: ClaimedDelivery, error: string): Promise<void> {
  const { deliveries } = tablesOf(orm);
  await orm.em.getConnection().execute(
    `update ${deliveries} set "status" = 'failed', "last_error" = ?, "next_attempt_at" = null,
       "locked_until" = null, "lease_id" = null, "updated_at" = now()
     where "id" = ? and "event_at" = ? and "lease_id" = ?`,
    [error, delivery.id, delivery.eventAt, delivery.leaseId],
    "run",
  );
}

/** Pushes a claimed delivery back by `delayMs` without counting an attempt, and releases it. */
export async function deferDelivery(orm: MikroORM, delivery: ClaimedDelivery, delayMs: number, origin?: string): Promise<void> {
  const { deliveries } = tablesOf(orm);
  await orm.em.getConnection().execute(
    `update ${deliveries} set "next_attempt_at" = now() + make_interval(secs => ?), "origin" = ?,
       "locked_until" = null, "lease_id" = null, "updated_at" = now()
     where "id" = ? and "event_at" = ? and "lease_id" = ?`,
    [Math.max(0, delayMs) / 1000, origin ?? delivery.origin, delivery.id, delivery.eventAt, delivery.leaseId],
    "run",
  );
}
