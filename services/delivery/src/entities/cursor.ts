import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/**
 * How far an event source has been handled durably, by name. The embedded bus keeps the last
 * submissions outbox cursor whose deliveries are stored ("submissions-outbox").
 */
export const CursorEntity = defineEntity({
  name: "Cursor",
  tableName: "cursor",
  properties: {
    name: p.string().primary(),
    position: p.bigint("bigint"),
  },
});

export type Cursor = InferEntity<typeof CursorEntity>;
