import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/** A person. The email is stored lower-cased and is unique. */
export const UserEntity = defineEntity({
  name: "User",
  tableName: "users",
  properties: {
    id: p.string().primary(),
    email: p.string().unique(),
    name: p.string(),
    createdAt: p.datetime(),
  },
});

export type User = InferEntity<typeof UserEntity>;
