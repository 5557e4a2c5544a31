import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/**
 * A form's webhook: where each completed response of the form is POSTed. `secret` (null when none) signs
 * the body; `headers` are sent with every request. Deleting a webhook removes the row (hard delete).
 */
export const WebhookEntity = defineEntity({
  name: "Webhook",
  tableName: "webhooks",
  properties: {
    id: p.string().primary(),
    formId: p.string(),
    url: p.string(),
    secret: p.string().nullable(),
    headers: p.json<Record<string, string>>(),
    enabled: p.boolean(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

export type Webhook = InferEntity<typeof WebhookEntity>;
