// The one way events come in, whichever bus brings them (Kafka or the embedded stream), a batch at a
// time: ask webhooks for each form's enabled webhooks of each event type (once per form and type in the
// batch) and store one pending delivery per event and webhook, due at once, with the event's payload once for all
// its webhooks, in one statement. The unique (webhook_id, event_id, event_at) makes a redelivered event create
// nothing twice: event_at is the event's own time, the same each time it comes. Each delivery keeps its event's trace
// context, which its attempts continue. Deliveries whose receiver has a slot free in this process's
// worker are stored already leased to it and handed over as the statement returns, so they go without a
// claim; the others are stored due, and the worker is woken to claim them. The caller acknowledges the
// batch to its bus (Kafka offset, stream cursor) only after this has returned; the embedded stream's
// cursor moves in the same statement that stores the deliveries.
import type { Client } from "@connectrpc/connect";
import type { MikroORM } from "@formsvc/platform/database.ts";
import type { FileLinks } from "@formsvc/platform/file-links.ts";
import { newId } from "@formsvc/platform/ids.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { traceparentOf, withContext, type Context } from "@formsvc/platform/tracing.ts";
import { eventFacts, eventTimeOf, eventTypeOf } from "@formsvc/platform/events.ts";
import type { Event } from "@formsvc/proto/events/v1/events_pb.js";
import type { WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { tablesOf } from "../entities/rows.ts";
import { originOf } from "../sender/breaker.ts";
import { serializePayload } from "../sender/payload.ts";
import { releaseLease, type ClaimedDelivery, type SlotReservation } from "../worker/claim.ts";

/** A call to webhooks that takes longer fails (and is tried again), so a hung call holds nothing for long. */
export const webhooksCallTimeoutMs = 5_000;

/** Deliveries stored per statement (12 parameters per delivery, 3 per payload, stay far below Postgres' 65,535). */
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
  /** The worker of this process (DeliveryWorker): it takes the new deliveries it has slots for, and is woken for the rest. */
  worker?: { reserve(origins: readonly string[]): SlotReservation; dueStored(): void };
}

/** A delivery to store: what an attempt needs (see ClaimedDelivery), and the rest of its row. */
interface NewDelivery extends Omit<ClaimedDelivery, "leaseId"> {
  eventType: string;
  formId: string;
  submissionId: string;
}

/**
 * Inserts the deliveries (those already there are left alone), each leased for `leaseMs` under `leaseId` where
 * `leased` says so, and moves the cursor, in one statement (atomic without a transaction, one round trip);
 * the ids of the deliveries created.
 */
async function storeDeliveries(
  orm: MikroORM,
  deliveries: readonly NewDelivery[],
  lease: { leaseId: string; leaseMs: number; leased: readonly boolean[] } | undefined,
  cursor: AcceptOptions["cursor"],
): Promise<Set<string>> {
  const { deliveries: table, cursor: cursors, payloads } = tablesOf(orm);
  // One payload per event of the part (deliveries of an event are next to each other).
  const events = deliveries.filter((d, i) => i === 0 || deliveries[i - 1].eventId !== d.eventId || +deliveries[i - 1].eventAt !== +d.eventAt);
  const storePayloads = `insert into ${payloads} ("event_id", "event_at", "body") values ${events.map(() => "(?, ?, ?)").join(", ")}
     on conflict ("event_id", "event_at") do nothing`;
  const insert = `insert into ${table} ("id", "event_at", "webhook_id", "event_id", "event_type", "form_id", "submission_id", "origin", "trace_parent",
       "locked_until", "lease_id", "status", "attempts", "last_error", "last_status_code", "next_attempt_at", "schedule_step", "created_at", "updated_at")
     values ${deliveries.map(() => `(?, ?, ?, ?, ?, ?, ?, ?, ?, now() + make_interval(secs => ?::float8), ?, 'pending', 0, '', 0, now(), 0, now(), now())`).join(", ")}
     on conflict ("webhook_id", "event_id", "event_at") do nothing
     returning "id"`;
  const moveCursor = `insert into ${cursors} ("name", "position") values (?, ?::bigint)
     on conflict ("name") do update set "position" = greatest(${cursors}."position", excluded."position")`;
  const cursorParams = cursor ? [cursor.name, cursor.position.toString()] : [];
  const connection = orm.em.getConnection();
  if (deliveries.length === 0) {
    if (cursor) await connection.execute(moveCursor, cursorParams, "run");
    return new Set();
  }
  const payloadParams = events.flatMap((d) => [d.eventId, d.eventAt, d.payload]);
  const params = deliveries.flatMap((d, i) => {
    const leased = lease?.leased[i] === true;
    return [d.id, d.eventAt, d.webhookId, d.eventId, d.eventType, d.formId, d.submissionId, d.origin, d.traceParent, leased ? lease.leaseMs / 1000 : null, leased ? lease.leaseId : null];
  });
  // Data-modifying CTEs run to completion whether or not the outer query reads them.
  const sql = `with "payloads" as (${storePayloads}), "created" as (${insert})${cursor ? `, "cursor" as (${moveCursor})` : ""} select "id" from "created"`;
  const created: { id: string }[] = await connection.execute(sql, [...payloadParams, ...params, ...cursorParams], "all");
  return new Set(created.map((row) => row.id));
}

/** Stores a part of a batch's deliveries; those the worker has slots for go leased to it, and are handed over. */
async function storePart(deps: AcceptEventDeps, part: readonly NewDelivery[], cursor: AcceptOptions["cursor"]): Promise<number> {
  const reservation = part.length > 0 ? deps.worker?.reserve(part.map((d) => d.origin)) : undefined;
  let created: Set<string>;
  try {
    created = await storeDeliveries(deps.orm, part, reservation && { ...reservation, leased: reservation.taken }, cursor);
  } catch (err) {
    reservation?.settle([]);
    // A statement that failed after it committed (its answer lost) would leave its deliveries leased to nobody
    // for a whole lease, and the batch handed again creates nothing: give them back (at worst, a no-op).
    if (reservation) {
      const leased = part.filter((_, i) => reservation.taken[i]).map((d) => d.id);
      await releaseLease(deps.orm, leased, reservation.leaseId).catch(() => undefined);
    }
    throw err;
  }
  const leased = (i: number) => reservation?.taken[i] === true;
  reservation?.settle(part.flatMap((d, i) => (leased(i) && created.has(d.id) ? [{ ...d, leaseId: reservation.leaseId }] : [])));
  if (part.some((d, i) => !leased(i) && created.has(d.id))) deps.worker?.dueStored();
  return created.size;
}

/** Moves a cursor forward (never back) on its own. */
export async function saveCursor(orm: MikroORM, cursor: NonNullable<AcceptOptions["cursor"]>): Promise<void> {
  await storeDeliveries(orm, [], undefined, cursor);
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
    const deliveries = deliverable.flatMap((incoming): NewDelivery[] => {
      const subscribed = hooks.get(subscriptionOf(incoming))!;
      if (subscribed.length === 0) return [];
      const { event, trace, eventId, eventType, formId, responseId } = incoming;
      const payload = serializePayload(event, deps.fileLinks);
      const traceParent = trace ? traceparentOf(trace) : null;
      const eventAt = eventTimeOf(event) ?? new Date();
      return subscribed.map((w) => ({ id: newId(), eventAt, webhookId: w.id, eventId, eventType, formId, submissionId: responseId, origin: w.origin, payload, traceParent }));
    });
    let created = 0;
    for (let i = 0; i < deliveries.length || i === 0; i += maxEventsPerStatement) {
      // The cursor moves with the last part, once everything before it is stored.
      const last = i + maxEventsPerStatement >= deliveries.length;
      created += await storePart(deps, deliveries.slice(i, i + maxEventsPerStatement), last ? options.cursor : undefined);
    }
    for (const incoming of deliverable) {
      const { eventId, formId, eventType, requestId } = incoming;
      logger?.info({ eventId, formId, eventType, requestId, webhooks: hooks.get(subscriptionOf(incoming))!.length }, "event accepted");
    }
    if (deliverable.length > 0 && created === 0 && deliveries.length > 0) logger?.info({ events: deliverable.length }, "events seen before: no new delivery");
    return { created };
  };
}
