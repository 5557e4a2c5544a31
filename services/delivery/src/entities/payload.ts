import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/**
 * The body every delivery of an event sends, stored once however many webhooks receive it; partitioned,
 * like the deliveries, by the event's time (`eventAt`), and dropped with them.
 */
export const PayloadEntity = defineEntity({
  name: "Payload",
  tableName: "payloads",
  properties: {
    eventId: p.string().primary(),
    eventAt: p.datetime().primary(),
    body: p.text(),
  },
});

export type Payload = InferEntity<typeof PayloadEntity>;
