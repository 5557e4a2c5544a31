// The event types, named once: the cases of formsvc.events.v1.Event, upper-cased (form_response ->
// FORM_RESPONSE). Webhooks subscribe to them, the outbox and the buses label events with them, delivery
// builds each type's payload. Also how an outbox payload is read, whatever its age.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { EventSchema, ResponseCompletedSchema, type Event, type ResponseCompleted } from "@formsvc/proto/events/v1/events_pb.js";

export type EventCase = NonNullable<Event["event"]["case"]>;

/** The webhook event type of each case of the envelope. */
export const eventTypeNames = Object.fromEntries(
  EventSchema.oneofs[0].fields.map((field) => [field.localName, field.name.toUpperCase()]),
) as Record<EventCase, string>;

/** Every event type, in the envelope's order: FORM_RESPONSE, FORM_RESPONSE_PARTIAL, FORM_PUBLISHED, FORM_CLOSED, FORM_DELETED. */
export const eventTypes: readonly string[] = Object.values(eventTypeNames);

/** The most sample events one call answers (GET /forms/:id/sample-events), and how many by default. */
export const maxSampleEvents = 10;
export const defaultSampleEvents = 3;

/** The type a response completion is (the spec's one event). */
export const formResponseEventType = eventTypeNames.formResponse;

/** What a webhook receives when it names no event types: completed responses, as before event types existed. */
export const defaultEventTypes: readonly string[] = [formResponseEventType];

/** The Kafka header naming a message's event type; a message without it is a bare ResponseCompleted. */
export const eventTypeHeader = "event-type";

export function eventTypeOf(event: Event): string {
  if (!event.event.case) throw new Error("an event without a type");
  return eventTypeNames[event.event.case];
}

export function isEventType(name: string): boolean {
  return eventTypes.includes(name);
}

/** The envelope's case of an event type; undefined for a name that is none. */
export function eventCaseOf(eventType: string): EventCase | undefined {
  return (Object.keys(eventTypeNames) as EventCase[]).find((c) => eventTypeNames[c] === eventType);
}

/** The event's id, form and subject (the response of a response event, else empty). */
export function eventFacts(event: Event): { eventId: string; formId: string; responseId: string } {
  const { value } = event.event;
  if (!value) return { eventId: "", formId: "", responseId: "" };
  return { eventId: value.eventId, formId: value.formId, responseId: "responseId" in value ? value.responseId : "" };
}

/**
 * The time the event tells of (a response's submission, a partial save, a form's change); undefined when it
 * carries none. The same each time a bus hands the event again.
 */
export function eventTimeOf(event: Event): Date | undefined {
  const { value } = event.event;
  if (!value) return undefined;
  const at = "submittedAt" in value ? value.submittedAt : "savedAt" in value ? value.savedAt : "changedAt" in value ? value.changedAt : undefined;
  return at ? new Date(Number(at.seconds) * 1000 + Math.floor(at.nanos / 1e6)) : undefined;
}

/**
 * An outbox payload or Kafka value as an envelope: with an event type it is an Event; without one it was
 * written before the envelope, a bare ResponseCompleted.
 */
export function decodeEvent(bytes: Uint8Array, eventType: string | null | undefined): Event {
  if (eventType) return fromBinary(EventSchema, bytes);
  return envelopeOf(fromBinary(ResponseCompletedSchema, bytes));
}

/** A response completion in the envelope. */
export function envelopeOf(completed: ResponseCompleted): Event {
  return create(EventSchema, { event: { case: "formResponse", value: completed } });
}

export function encodeEvent(event: Event): Uint8Array {
  return toBinary(EventSchema, event);
}
