import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

export const deliveryStatuses = ["pending", "retrying", "succeeded", "failed"] as const;
export type DeliveryStatusName = (typeof deliveryStatuses)[number];
/** What made a delivery: an event of the bus, or a test sent on request (never due for the worker). */
export const deliveryTriggers = ["event", "test"] as const;

/**
 * One event to send to one webhook (unique per webhook and event, so an event delivered twice to this
 * service creates nothing twice). The body sent on every attempt is the event's payload (entities/payload.ts),
 * stored once for all its webhooks. `eventAt`, the event's own time, places the row in its partition
 * (retention/partitions.ts) and goes with its id in every lookup.
 *
 * pending (never tried) and retrying (tried, waiting for `nextAttemptAt`) are due once `nextAttemptAt`
 * has passed; succeeded and failed are final. `lockedUntil`/`leaseId` mark the row as being attempted
 * by one worker; a lease that runs out (its worker was killed) lets another worker take the row.
 * `scheduleStep` counts the automatic retries scheduled so far (an attempt by hand leaves it alone);
 * `origin` is the receiver's scheme://host:port, to spread work over receivers.
 */
export const DeliveryEntity = defineEntity({
  name: "Delivery",
  tableName: "deliveries",
  properties: {
    id: p.string().primary(),
    eventAt: p.datetime(),
    webhookId: p.string(),
    eventId: p.string(),
    eventType: p.string(),
    trigger: p.enum(deliveryTriggers),
    formId: p.string(),
    submissionId: p.string(),
    origin: p.string(),
    status: p.enum(deliveryStatuses),
    attempts: p.integer(),
    lastError: p.text(),
    lastStatusCode: p.integer(),
    nextAttemptAt: p.datetime().nullable(),
    lockedUntil: p.datetime().nullable(),
    leaseId: p.string().nullable(),
    scheduleStep: p.integer(),
    /** The W3C traceparent of the event's trace, which every attempt continues; null while tracing is off. */
    traceParent: p.string().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

/** A delivery's record, as listed. */
export type DeliveryRecord = InferEntity<typeof DeliveryEntity>;
/** A delivery with the body its attempts send. */
export type Delivery = DeliveryRecord & { payload: string };
