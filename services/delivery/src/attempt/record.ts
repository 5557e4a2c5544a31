// Writing down what happened to a delivery. An attempt's row and the delivery's new state go together in
// one statement, under the delivery's row lock, so the attempt numbers and the count never drift apart
// and the next automatic attempt is only due once the result is stored.
import { GroupCommit } from "@formsvc/platform/group-commit.ts";
import { newId } from "@formsvc/platform/ids.ts";
import type { MikroORM } from "@formsvc/platform/database.ts";
import type { Delivery } from "../entities/index.ts";
import { deliveryFromRow, payloadColumn, tablesOf, toDate, type DeliveryRow } from "../entities/rows.ts";
import { maxResponseBytes } from "../sender/http-client.ts";
import { classify, describeResult, honouredRetryAfter, type SendResult } from "../sender/send-result.ts";
import { retryAfterSeconds, withJitter } from "./retry-schedule.ts";

export interface RecordAttemptOptions {
  deliveryId: string;
  /** The delivery's partition key, which goes with its id. */
  eventAt: Date;
  result: SendResult;
  /** An attempt asked for by hand: it never changes the automatic schedule (see below). */
  manual: boolean;
  /** The lease of the worker's claim; required for automatic attempts. */
  leaseId?: string;
  /** The receiver origin the attempt went to (the webhook's URL may have changed since the delivery was made). */
  origin?: string;
  retrySchedule: readonly number[];
  random?: () => number;
  /** The clock a Retry-After date is read against. */
  now?: Date;
}

/** A delivery after an attempt, with since when its webhook's attempts have all failed (null after a success). */
export type RecordedDelivery = Delivery & { failingSince: Date | null };

/** The columns of an attempt's row, in the order both statements below fill them. */
const attemptColumns = `"id", "delivery_id", "event_at", "number", "status_code", "duration_ms", "error", "response_body", "manual", "created_at"`;

/** What an attempt's row keeps of its result. */
function keptOf(result: SendResult) {
  return {
    status_code: result.statusCode,
    duration_ms: Math.max(0, Math.round(result.durationMs)),
    error: result.error ?? "",
    response_body: result.responseBody.slice(0, maxResponseBytes),
  };
}

/** Changes of an automatic attempt: an attempt whose lease was lost is counted, and changes nothing else. */
function whileHolding(changes: [string, string][]): [string, string][] {
  return changes.map(([column, value]) => [column, `case when r."holds" then ${value} else d."${column}" end`]);
}

/**
 * Stores one attempt and moves its delivery on, and notes its webhook's failing period (failing_webhooks:
 * kept from the first failure, gone at a success; webhook-disabling.ts reads it):
 * - automatic: 2xx succeeded; 3xx/4xx/refused address failed; anything else retrying with the next
 *   delay of the schedule, or failed once the schedule is used up. The lease is released.
 * - manual: success makes the delivery succeeded; a failure leaves status, schedule and next attempt as
 *   they were (a retrying delivery keeps its automatic schedule, a failed one stays failed).
 * An automatic attempt whose lease was lost meanwhile (it outlived its lease, or was completed by
 * hand) is still recorded and counted, but changes nothing else.
 * Returns the delivery as it now is, undefined when it no longer exists.
 */
export async function recordAttempt(orm: MikroORM, options: RecordAttemptOptions): Promise<RecordedDelivery | undefined> {
  const tables = tablesOf(orm);
  const { deliveries, attempts, failingWebhooks } = tables;
  const { result } = options;
  const outcome = classify(result);
  const error = describeResult(result) || null;
  // One statement (atomic without a transaction, one round trip): lock the row, add the attempt under
  // the next number, move the delivery on. What depends on the row (does this attempt still hold the
  // lease? how far is the schedule?) is decided in SQL; the rest here. `p` adds a parameter in the
  // order the text reads.
  const params: unknown[] = [];
  const p = (value: unknown) => (params.push(value), "?");
  const holds = options.manual || options.leaseId === undefined ? "false" : `"lease_id" = ${p(options.leaseId)}`;
  // The wait before the next automatic attempt: the schedule's next delay with jitter, or the answer's
  // Retry-After (429, 408; capped) when that is longer; null once the schedule is used up (and for
  // attempts by hand, which never touch the schedule).
  const schedule = `{${options.retrySchedule.join(",")}}`;
  const atLeast = retryAfterSeconds(honouredRetryAfter(result), options.retrySchedule, options.now);
  const delay = options.manual
    ? "null::float8"
    : `case when (${p(schedule)}::float8[])["schedule_step" + 1] is null then null
        else greatest((${p(schedule)}::float8[])["schedule_step" + 1] * ${p(withJitter(1, options.random))}, ${p(atLeast)}) end`;
  const locked = `select "id", "event_at", "webhook_id", "attempts", "schedule_step", ${holds} as "holds", ${delay} as "delay"
    from ${deliveries} where "id" = ${p(options.deliveryId)} and "event_at" = ${p(options.eventAt)} for update`;
  const kept = keptOf(result);
  const attempt = `insert into ${attempts} (${attemptColumns})
    select ${p(newId())}, r."id", r."event_at", r."attempts" + 1, ${p(kept.status_code)}, ${p(kept.duration_ms)}, ${p(kept.error)},
      ${p(kept.response_body)}, ${p(options.manual)}, now() from "r"`;

  // The columns an attempt by hand, or one holding the lease, sets: [column, expression].
  const reported: [string, string][] = [
    ["last_error", `coalesce(${p(error)}::text, d."last_error")`],
    ["last_status_code", p(result.statusCode)],
    ["origin", `coalesce(${p(options.origin ?? null)}::text, d."origin")`],
  ];
  let changes: [string, string][];
  if (options.manual) {
    // Success completes the delivery; a failure leaves status and schedule alone. A completed delivery
    // (succeeded now, or failed before) is no longer the worker's: its lease is void.
    const status = outcome === "succeeded" ? `'succeeded'` : `d."status"`;
    const final = `${status} in ('succeeded', 'failed')`;
    changes = [
      ...reported,
      ["status", status],
      ["next_attempt_at", `case when ${final} then null else d."next_attempt_at" end`],
      ["locked_until", `case when ${final} then null else d."locked_until" end`],
      ["lease_id", `case when ${final} then null else d."lease_id" end`],
    ];
  } else {
    // Retried: after the next delay, or failed once the schedule is used up.
    const status = outcome === "retry" ? `case when r."delay" is null then 'failed' else 'retrying' end` : p(outcome);
    const next = outcome === "retry" ? `now() + make_interval(secs => round(r."delay"::numeric, 3)::float8)` : "null";
    const step = outcome === "retry" ? `r."schedule_step" + case when r."delay" is null then 0 else 1 end` : `r."schedule_step"`;
    changes = whileHolding([...reported, ["status", status], ["next_attempt_at", next], ["schedule_step", step], ["locked_until", "null"], ["lease_id", "null"]]);
  }
  // The webhook's failing period, in the same statement (no round trip of its own on the common path).
  const period =
    outcome === "succeeded"
      ? `delete from ${failingWebhooks} f using "r" where f."webhook_id" = r."webhook_id" returning null::timestamptz as "failing_since"`
      : `insert into ${failingWebhooks} ("webhook_id", "failing_since") select "webhook_id", now() from "r"
         on conflict ("webhook_id") do update set "failing_since" = ${failingWebhooks}."failing_since" returning "failing_since"`;
  const [updated]: (DeliveryRow & { failing_since: Date | string | null })[] = await orm.em.getConnection().execute(
    `with "r" as (${locked}), "attempt" as (${attempt}), "period" as (${period})
     update ${deliveries} d set "attempts" = r."attempts" + 1, "updated_at" = now(), ${changes.map(([column, value]) => `"${column}" = ${value}`).join(", ")}
     from "r" where d."id" = r."id" and d."event_at" = r."event_at"
     returning d.*, ${payloadColumn(tables)}, (select max("failing_since") from "period") as "failing_since"`,
    params,
    "all",
  );
  return updated ? { ...deliveryFromRow(updated), failingSince: toDate(updated.failing_since) } : undefined;
}

/** An automatic attempt that succeeded, to be recorded with others (`successRecorder`). */
export interface RecordSuccessOptions {
  deliveryId: string;
  eventAt: Date;
  leaseId: string;
  result: SendResult;
  origin: string;
}

/** A delivery after a recorded success, without its payload (the sender has it already). */
export type RecordedSuccess = Omit<RecordedDelivery, "payload">;

/**
 * Records automatic successful attempts, the common case, in one statement for many: the same effect as
 * `recordAttempt` gives each (the attempt under the next number, the delivery succeeded and its lease
 * released when it still held it, the webhook's failing period ended), rows locked in id order.
 * Each delivery is found by its primary key, whatever the planner thinks of the partition's size (a join
 * planned from a partition's stale statistics scanned every delivery of the day once per batch, twice).
 * Returns each delivery as it now is, by id (absent when it no longer exists).
 */
async function recordSuccesses(orm: MikroORM, successes: readonly RecordSuccessOptions[]): Promise<Map<string, RecordedSuccess>> {
  const tables = tablesOf(orm);
  const { deliveries, attempts, failingWebhooks } = tables;
  // In id order: the rows are locked in the order they are listed.
  const values = [...successes]
    .sort((a, b) => (a.deliveryId < b.deliveryId ? -1 : a.deliveryId > b.deliveryId ? 1 : 0))
    .map(({ deliveryId, eventAt, leaseId, result, origin }) => ({ delivery_id: deliveryId, event_at: eventAt, lease_id: leaseId, attempt_id: newId(), ...keptOf(result), origin }));
  const changes = whileHolding([
    ["last_status_code", `r."status_code"`],
    ["origin", `r."origin"`],
    ["status", `'succeeded'`],
    ["next_attempt_at", "null"],
    ["locked_until", "null"],
    ["lease_id", "null"],
  ]);
  const rows: DeliveryRow[] = await orm.em.getConnection().execute(
    `with "v" as (
       select * from jsonb_to_recordset(?::jsonb) as v("delivery_id" text, "event_at" timestamptz, "lease_id" text, "attempt_id" text, "status_code" int,
         "duration_ms" int, "error" text, "response_body" text, "origin" text)),
     "r" as (
       select d."id", d."webhook_id", d."attempts", d."lease_id" = v."lease_id" as "holds", v.*
         from "v" cross join lateral (select * from ${deliveries} x where x."id" = v."delivery_id" and x."event_at" = v."event_at" offset 0) d
         for update of d),
     "attempt" as (
       insert into ${attempts} (${attemptColumns})
       select "attempt_id", "id", "event_at", "attempts" + 1, "status_code", "duration_ms", "error", "response_body", false, now() from "r"),
     "period" as (delete from ${failingWebhooks} f using "r" where f."webhook_id" = r."webhook_id")
     update ${deliveries} d set "attempts" = r."attempts" + 1, "updated_at" = now(),
       ${changes.map(([column, value]) => `"${column}" = ${value}`).join(", ")}
     from "r" where d."id" = r."id" and d."event_at" = r."event_at" and d."id" = any(array(select "id" from "r"))
     returning d.*`,
    [JSON.stringify(values)],
    "all",
  );
  return new Map(rows.map((row) => [row.id, { ...deliveryFromRow(row), failingSince: null }]));
}

/**
 * Automatic successes recorded by group commit (packages/platform/src/group-commit.ts): under a burst one
 * statement for many attempts instead of one each; alone, an attempt waits for nothing.
 */
export function successRecorder(orm: MikroORM, maxBatch = 128): GroupCommit<RecordSuccessOptions, RecordedSuccess | undefined> {
  return new GroupCommit(
    async (successes) => {
      const recorded = await recordSuccesses(orm, successes);
      return successes.map((success) => recorded.get(success.deliveryId));
    },
    // A delivery has one lease, so one attempt in a statement; the key only guards the rule.
    { maxBatch, keyOf: (success) => success.deliveryId },
  );
}
