// Writing down what happened to a delivery. An attempt's row and the delivery's new state go together in
// one transaction, under the delivery's row lock, so the attempt numbers and the count never drift apart
// and the next automatic attempt is only due once the result is stored.
import { newId } from "@formsvc/platform/ids.ts";
import type { MikroORM } from "@formsvc/platform/database.ts";
import type { Delivery, DeliveryStatusName } from "../entities/index.ts";
import { deliveryFromRow, tablesOf, type DeliveryRow } from "../entities/rows.ts";
import type { SendResult } from "../sender/http-client.ts";
import { maxResponseBytes } from "../sender/http-client.ts";
import { classify, describeResult } from "./outcome.ts";
import { nextRetryDelay } from "./retry-schedule.ts";
import type { ClaimedDelivery } from "./claim.ts";

export interface RecordAttemptOptions {
  deliveryId: string;
  result: SendResult;
  /** An attempt asked for by hand: it never changes the automatic schedule (see below). */
  manual: boolean;
  /** The lease of the worker's claim; required for automatic attempts. */
  leaseId?: string;
  /** The receiver origin the attempt went to (the webhook's URL may have changed since the delivery was made). */
  origin?: string;
  retrySchedule: readonly number[];
  random?: () => number;
}

/**
 * Stores one attempt and moves its delivery on:
 * - automatic: 2xx succeeded; 3xx/4xx/refused address failed; anything else retrying with the next
 *   delay of the schedule, or failed once the schedule is used up. The lease is released.
 * - manual: success makes the delivery succeeded; a failure leaves status, schedule and next attempt as
 *   they were (a retrying delivery keeps its automatic schedule, a failed one stays failed).
 * An automatic attempt whose lease was lost meanwhile (it outlived its lease, or was completed by
 * hand) is still recorded and counted, but changes nothing else.
 * Returns the delivery as it now is, undefined when it no longer exists.
 */
export async function recordAttempt(orm: MikroORM, options: RecordAttemptOptions): Promise<Delivery | undefined> {
  const { deliveries, attempts } = tablesOf(orm);
  const { result } = options;
  return orm.em.fork().transactional(async (em) => {
    const [row]: DeliveryRow[] = await em.execute(`select * from ${deliveries} where "id" = ? for update`, [options.deliveryId], "all");
    if (!row) return undefined;
    const number = row.attempts + 1;
    await em.execute(
      `insert into ${attempts} ("id", "delivery_id", "number", "status_code", "duration_ms", "error", "response_body", "manual", "created_at")
       values (?, ?, ?, ?, ?, ?, ?, ?, now())`,
      [
        newId(),
        row.id,
        number,
        result.statusCode,
        Math.max(0, Math.round(result.durationMs)),
        result.error ?? "",
        result.responseBody.slice(0, maxResponseBytes),
        options.manual,
      ],
      "run",
    );

    const outcome = classify(result);
    const error = describeResult(result);
    const holdsLease = !options.manual && options.leaseId !== undefined && row.lease_id === options.leaseId;
    // What changes besides the count: [column, value] pairs.
    const set: [string, unknown][] = [];
    const setRaw: string[] = [];
    if (options.manual || holdsLease) {
      if (error) set.push(["last_error", error]);
      set.push(["last_status_code", result.statusCode]);
      if (options.origin) set.push(["origin", options.origin]);
    }
    let status: DeliveryStatusName = row.status;
    if (options.manual) {
      if (outcome === "succeeded") status = "succeeded";
    } else if (holdsLease) {
      setRaw.push(`"locked_until" = null`, `"lease_id" = null`);
      if (outcome === "succeeded" || outcome === "failed") {
        status = outcome;
      } else {
        const delay = nextRetryDelay(options.retrySchedule, row.schedule_step, options.random);
        if (delay === undefined) {
          status = "failed";
        } else {
          status = "retrying";
          setRaw.push(`"next_attempt_at" = now() + make_interval(secs => ${Number(delay.toFixed(3))})`);
          set.push(["schedule_step", row.schedule_step + 1]);
        }
      }
    }
    if (status !== row.status) set.push(["status", status]);
    if (status === "succeeded" || status === "failed") {
      setRaw.push(`"next_attempt_at" = null`);
      // A delivery completed by hand is no longer the worker's: its lease is void.
      if (options.manual) setRaw.push(`"locked_until" = null`, `"lease_id" = null`);
    }

    const assignments = [`"attempts" = ?`, `"updated_at" = now()`, ...set.map(([column]) => `"${column}" = ?`), ...setRaw];
    const [updated]: DeliveryRow[] = await em.execute(
      `update ${deliveries} set ${assignments.join(", ")} where "id" = ? returning *`,
      [number, ...set.map(([, value]) => value), row.id],
      "all",
    );
    return deliveryFromRow(updated);
  });
}

/** Ends a claimed delivery as failed without an attempt (its webhook is gone or disabled). */
export async function failWithoutAttempt(orm: MikroORM, delivery: ClaimedDelivery, error: string): Promise<void> {
  const { deliveries } = tablesOf(orm);
  await orm.em.fork().execute(
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
  await orm.em.fork().execute(
    `update ${deliveries} set "next_attempt_at" = now() + make_interval(secs => ?), "origin" = ?,
       "locked_until" = null, "lease_id" = null, "updated_at" = now()
     where "id" = ? and "lease_id" = ?`,
    [Math.max(0, delayMs) / 1000, origin ?? delivery.origin, delivery.id, delivery.leaseId],
    "run",
  );
}
