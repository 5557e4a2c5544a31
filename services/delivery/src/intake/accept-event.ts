// The one way events come in, whichever bus brings them (Kafka or the embedded stream): ask webhooks for
// the form's enabled webhooks and store one pending delivery per webhook, due at once. The unique
// (webhook_id, event_id) makes a redelivered event create nothing twice. Each delivery keeps the
// current trace context, which its attempts continue. The caller acknowledges the
// event to its bus (Kafka offset, stream cursor) only after this has returned; the embedded stream's
// cursor moves in the same statement that stores the deliveries.
import type { Client } from "@connectrpc/connect";
import type { MikroORM } from "@formsvc/platform/database.ts";
import { newId } from "@formsvc/platform/ids.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { currentTraceparent } from "@formsvc/platform/tracing.ts";
import type { ResponseCompleted } from "@formsvc/proto/events/v1/events_pb.js";
import type { WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { tablesOf } from "../entities/rows.ts";
import { originOf } from "../sender/breaker.ts";
import { formResponseEventType, serializePayload } from "../sender/payload.ts";

/** A call to webhooks that takes longer fails (and is tried again), so a hung call holds nothing for long. */
export const webhooksCallTimeoutMs = 5_000;

export interface AcceptOptions {
  /** A cursor moved forward (never back) atomically with storing the deliveries: the embedded stream's. */
  cursor?: { name: string; position: bigint };
}

export type AcceptEvent = (event: ResponseCompleted, options?: AcceptOptions) => Promise<{ created: number }>;

export interface AcceptEventDeps {
  orm: MikroORM;
  /** Asked, without a caller, for the form's enabled webhooks. */
  webhooks: Pick<Client<typeof WebhooksService>, "listEnabledWebhooks">;
  logger?: Logger;
  /** Called after deliveries were stored: the worker of this process looks at once. */
  onAccepted?: () => void;
}

/**
 * Inserts the deliveries (those already there are left alone) and moves the cursor, in one statement
 * (atomic without a transaction, one round trip); the number of deliveries created.
 */
async function storeDeliveries(orm: MikroORM, rows: unknown[][], cursor: AcceptOptions["cursor"]): Promise<number> {
  const { deliveries, cursor: cursors } = tablesOf(orm);
  const insert = `insert into ${deliveries} ("id", "webhook_id", "event_id", "event_type", "form_id", "submission_id", "origin", "payload", "trace_parent",
       "status", "attempts", "last_error", "last_status_code", "next_attempt_at", "schedule_step", "created_at", "updated_at")
     values ${rows.map(() => `(?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, '', 0, now(), 0, now(), now())`).join(", ")}
     on conflict ("webhook_id", "event_id") do nothing
     returning "id"`;
  const moveCursor = `insert into ${cursors} ("name", "position") values (?, ?::bigint)
     on conflict ("name") do update set "position" = greatest(${cursors}."position", excluded."position")`;
  const cursorParams = cursor ? [cursor.name, cursor.position.toString()] : [];
  const connection = orm.em.getConnection();
  if (rows.length === 0) {
    if (cursor) await connection.execute(moveCursor, cursorParams, "run");
    return 0;
  }
  // Data-modifying CTEs run to completion whether or not the outer query reads them.
  const sql = cursor
    ? `with "created" as (${insert}), "cursor" as (${moveCursor}) select count(*)::int as "n" from "created"`
    : `with "created" as (${insert}) select count(*)::int as "n" from "created"`;
  const [{ n }]: { n: number }[] = await connection.execute(sql, [...rows.flat(), ...cursorParams], "all");
  return n;
}

/** Moves a cursor forward (never back) on its own. */
export async function saveCursor(orm: MikroORM, cursor: NonNullable<AcceptOptions["cursor"]>): Promise<void> {
  await storeDeliveries(orm, [], cursor);
}

/**
 * Builds acceptEvent. It throws when webhooks or the database fails; the bus then hands the event
 * again later. An event without an id or a form cannot be delivered and is passed over (logged).
 */
export function createAcceptEvent(deps: AcceptEventDeps): AcceptEvent {
  const { orm } = deps;
  const { deliveries } = tablesOf(orm);

  return async (event, options = {}) => {
    let rows: unknown[][] = [];
    if (!event.eventId || !event.formId) {
      deps.logger?.error({ eventId: event.eventId, formId: event.formId }, "event without an id or a form: passed over");
    } else {
      const { webhooks } = await deps.webhooks.listEnabledWebhooks({ formId: event.formId }, { timeoutMs: webhooksCallTimeoutMs });
      const payload = serializePayload(event);
      const traceParent = currentTraceparent();
      rows = webhooks.map((w) => [newId(), w.id, event.eventId, formResponseEventType, event.formId, event.responseId, originOf(w.url), payload, traceParent]);
    }
    const created = await storeDeliveries(orm, rows, options.cursor);
    if (created > 0) {
      deps.logger?.info({ eventId: event.eventId, formId: event.formId, deliveries: created }, "event accepted");
      deps.onAccepted?.();
    } else if (rows.length > 0) {
      deps.logger?.info({ eventId: event.eventId, formId: event.formId }, "event seen before: no new delivery");
    }
    return { created };
  };
}
