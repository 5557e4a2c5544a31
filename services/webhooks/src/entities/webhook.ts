import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/**
 * A form's webhook: where the form's events of its `eventTypes` are POSTed. `secret` (null when none) signs
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
    /** The event types it receives (FORM_RESPONSE, ...; packages/platform/src/events.ts). */
    eventTypes: p.json<string[]>(),
    enabled: p.boolean(),
    /** Why and when it was disabled (by its owner, a 410 Gone, days of failures); null while enabled. */
    disabledReason: p.text().nullable(),
    disabledAt: p.datetime().nullable(),
    /** The secret the last rotation replaced; deliveries are signed with both until it expires. */
    previousSecret: p.string().nullable(),
    previousSecretExpiresAt: p.datetime().nullable(),
    /** standard, slack or discord (packages/platform/src/webhook-headers.ts). */
    format: p.string(),
    /** The automation tool that subscribed it (n8n, zapier, ...); null for one made by hand. */
    subscriber: p.string().nullable(),
    /** The API key and its person that subscribed it: it goes when that key does (key-subscriptions.ts). */
    subscribedByKey: p.string().nullable(),
    subscribedByUser: p.string().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

export type Webhook = InferEntity<typeof WebhookEntity>;
