import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/**
 * Forms' outbox: an event of a form (FORM_PUBLISHED, FORM_CLOSED, FORM_DELETED), written in the same
 * transaction as the change, then forwarded to the submissions outbox (RecordFormEvent, idempotent on
 * the event id), from where it travels like every event. `forwardedAt` is null until submissions took it.
 */
export const FormEventEntity = defineEntity({
  name: "FormEvent",
  tableName: "outbox",
  properties: {
    id: p.bigint("string").primary().autoincrement(),
    eventId: p.string(),
    formId: p.string(),
    /** A formsvc.events.v1.Event. */
    payload: p.uint8array(),
    requestId: p.string().nullable(),
    traceParent: p.string().nullable(),
    createdAt: p.datetime(),
    forwardedAt: p.datetime().nullable(),
  },
});

export type FormEvent = InferEntity<typeof FormEventEntity>;
