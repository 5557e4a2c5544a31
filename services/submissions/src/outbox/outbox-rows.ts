// The outbox rows submissions writes, each in the statement or transaction of what it tells of (a
// completion, a partial save that reaches another page, a forwarded form event).
import { currentRequestId } from "@formsvc/platform/request-context.ts";
import { traceparentOf } from "@formsvc/platform/tracing.ts";
import { encodeEvent, eventFacts, eventTypeOf } from "@formsvc/platform/events.ts";
import type { Event } from "@formsvc/proto/events/v1/events_pb.js";

export type OutboxRow = ReturnType<typeof outboxRow>;

/** The outbox row of an event; the row's txid (a column default) orders it for the event stream. */
export function outboxRow(event: Event, createdAt: Date) {
  const { eventId, formId } = eventFacts(event);
  return {
    eventId,
    formId,
    eventType: eventTypeOf(event),
    payload: encodeEvent(event),
    requestId: currentRequestId() ?? null,
    traceParent: traceparentOf(),
    createdAt,
  };
}

/** The columns an insert of an outbox row names, in the order of `outboxParams`. */
export const outboxColumns = `("event_id", "form_id", "event_type", "payload", "request_id", "trace_parent", "created_at")`;

export function outboxParams(outbox: OutboxRow): unknown[] {
  return [outbox.eventId, outbox.formId, outbox.eventType, Buffer.from(outbox.payload), outbox.requestId, outbox.traceParent, outbox.createdAt];
}
