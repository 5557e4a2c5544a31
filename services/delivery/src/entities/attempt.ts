import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/**
 * One try at sending a delivery, kept with what came back: the status (0 when no answer came), how
 * long it took, the error, and at most 4 KiB of the receiver's answer. `number` counts a delivery's
 * attempts from 1, automatic and by hand (`manual`) alike.
 */
export const AttemptEntity = defineEntity({
  name: "Attempt",
  tableName: "attempts",
  properties: {
    id: p.string().primary(),
    deliveryId: p.string(),
    /** The delivery's partition key: attempts are kept, and dropped, with their delivery. */
    eventAt: p.datetime(),
    number: p.integer(),
    statusCode: p.integer(),
    durationMs: p.integer(),
    error: p.text(),
    responseBody: p.text(),
    manual: p.boolean(),
    createdAt: p.datetime(),
  },
});

export type Attempt = InferEntity<typeof AttemptEntity>;
