// The one way events come in, whichever bus brings them (Kafka or the embedded stream), a batch at a
// time: ask webhooks for each form's enabled webhooks of each event type (once per form and type in the
// batch) and store one pending delivery per event and webhook, due at once, in one statement. The unique (webhook_id,
// event_id) makes a redelivered event create nothing twice. Each delivery keeps its event's trace
// context, which its attempts continue. The caller acknowledges the batch to its bus (Kafka offset,
// stream cursor) only after this has returned; the embedded stream's cursor moves in the same
// statement that stores the deliveries.
import type { Client } from "@connectrpc/connect";
import type { MikroORM } from "@formsvc/platform/database.ts";
import type { FileLinks } from "@formsvc/platform/file-links.ts";
import { newId } from "@formsvc/platform/ids.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { traceparentOf, withContext, type Context } from "@formsvc/platform/tracing.ts";
import { eventFacts, eventTypeOf } from "@formsvc/platform/events.ts";
import type { Event } from "@formsvc/proto/events/v1/events_pb.js";
import type { WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { tablesOf } from "../entities/rows.ts";
import { originOf } from "../sender/breaker.ts";
import { serializePayload } from "../sender/payload.ts";

/** A call to webhooks that takes longer fails (and is tried again), so a hung call holds nothing for long. */
export const webhooksCallTimeoutMs = 5_000;

/** Events stored per statement (9 parameters per delivery stay far below Postgres' 65,535). */
export const maxEventsPerStatement = 200;

export interface AcceptOptions {
  /** A cursor moved forward (never back) atomically with storing the deliveries: the embedded stream's. */
  cursor?: { name: string; position: bigint };
}

/** An event as its bus hands it over. */
export interface IncomingEvent {
  event: Event;
  requestId?: string;
  /** The context of the bus's span of this event (its trace continues in the deliveries). */
  trace?: Context;
}

export type AcceptEvents = (events: IncomingEvent[], options?: AcceptOptions) => Promise<{ created: number }>;

export interface AcceptEventDeps {
  orm: MikroORM;
  /** Asked, without a caller, for each form's enabled webhooks of an event type. */
  webhooks: Pick<Client<typeof WebhooksService>, "listEnabledWebhooks">;
  /** Signs the file links of payloads. */
  fileLinks: FileLinks;
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
 * Builds acceptEvents. It throws when webhooks or the database fails; the bus then hands the batch
 * again later. An event without an id or a form cannot be delivered and is passed over (logged).
 */
export function createAcceptEvents(deps: AcceptEventDeps): AcceptEvents {
  const { orm, logger } = deps;

  return async (events, options = {}) => {
    const deliverable = events.flatMap((incoming) => {
      const facts = eventFacts(incoming.event);
      if (facts.eventId && facts.formId && incoming.event.event.case) return [{ ...incoming, ...facts, eventType: eventTypeOf(incoming.event) }];
      logger?.error({ eventId: facts.eventId, formId: facts.formId }, "event without an id, a form or a type: passed over");
      return [];
    });
    // The webhooks of each form and event type, asked once, in the trace of its first event in the batch.
    const subscriptionOf = (e: { formId: string; eventType: string }) => `${e.formId} ${e.eventType}`;
    const firsts = new Map<string, (typeof deliverable)[number]>();
    for (const incoming of deliverable) if (!firsts.has(subscriptionOf(incoming))) firsts.set(subscriptionOf(incoming), incoming);
    const hooks = new Map<string, { id: string; origin: string }[]>(
      await Promise.all(
        [...firsts].map(async ([key, first]) => {
          const ask = () => deps.webhooks.listEnabledWebhooks({ formId: first.formId, eventType: first.eventType }, { timeoutMs: webhooksCallTimeoutMs });
          const { webhooks } = await (first.trace ? withContext(first.trace, ask) : ask());
          return [key, webhooks.map((w) => ({ id: w.id, origin: originOf(w.url) }))] as const;
        }),
      ),
    );
    const rows = deliverable.flatMap((incoming) => {
      const subscribed = hooks.get(subscriptionOf(incoming))!;
      if (subscribed.length === 0) return [];
      const { event, trace, eventId, eventType, formId, responseId } = incoming;
      const payload = serializePayload(event, deps.fileLinks);
      const traceParent = trace ? traceparentOf(trace) : null;
      return subscribed.map((w) => [newId(), w.id, eventId, eventType, formId, responseId, w.origin, payload, traceParent]);
    });
    let created = 0;
    for (let i = 0; i < rows.length || i === 0; i += maxEventsPerStatement) {
      // The cursor moves with the last part, once everything before it is stored.
      const last = i + maxEventsPerStatement >= rows.length;
      created += await storeDeliveries(orm, rows.slice(i, i + maxEventsPerStatement), last ? options.cursor : undefined);
    }
    if (created > 0) deps.onAccepted?.();
    for (const incoming of deliverable) {
      const { eventId, formId, eventType, requestId } = incoming;
      logger?.info({ eventId, formId, eventType, requestId, webhooks: hooks.get(subscriptionOf(incoming))!.length }, "event accepted");
    }
    if (deliverable.length > 0 && created === 0 && rows.length > 0) logger?.info({ events: deliverable.length }, "events seen before: no new delivery");
    return { created };
  };
}
