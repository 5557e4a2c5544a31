import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/**
 * An event waiting to be published, written in the same transaction as the change it reports (the
 * completion of a response). `payload` is a protobuf `formsvc.events.v1.ResponseCompleted`; the Kafka
 * relay publishes rows in `id` order (per relay), keyed by `formId`, with `requestId` as the
 * `x-request-id` header and `traceParent` as the `traceparent` header, and sets `publishedAt` once the broker acknowledged them.
 */
export const OutboxEntity = defineEntity({
  name: "Outbox",
  tableName: "outbox",
  properties: {
    id: p.bigint("string").primary().autoincrement(),
    eventId: p.string(),
    formId: p.string(),
    /** FORM_RESPONSE, ...: `payload` is then a formsvc.events.v1.Event; null on rows older than the envelope (a bare ResponseCompleted). */
    eventType: p.string().nullable(),
    payload: p.uint8array(),
    requestId: p.string().nullable(),
    /** The W3C traceparent of the request that wrote the row; null while tracing is off. */
    traceParent: p.string().nullable(),
    createdAt: p.datetime(),
    /** When the Kafka relay's broker acknowledged the row; null until then (and always, on the embedded bus). */
    publishedAt: p.datetime().nullable(),
  },
});

export type Outbox = InferEntity<typeof OutboxEntity>;
