import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/** An API key: only its SHA-256 hash (hex) and its first characters are stored. */
export const ApiKeyEntity = defineEntity({
  name: "ApiKey",
  tableName: "api_keys",
  properties: {
    id: p.string().primary(),
    userId: p.string().index(),
    name: p.string(),
    prefix: p.string().index(),
    keyHash: p.string(),
    createdAt: p.datetime(),
    lastUsedAt: p.datetime().nullable(),
  },
});

export type ApiKey = InferEntity<typeof ApiKeyEntity>;
