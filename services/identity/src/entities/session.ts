import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/** An app session: the token is stored only as its SHA-256 hash (hex). */
export const SessionEntity = defineEntity({
  name: "Session",
  tableName: "sessions",
  properties: {
    id: p.string().primary(),
    userId: p.string().index(),
    tokenHash: p.string().unique(),
    createdAt: p.datetime(),
    expiresAt: p.datetime(),
  },
});

export type Session = InferEntity<typeof SessionEntity>;
