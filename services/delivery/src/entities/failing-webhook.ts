import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/**
 * A webhook whose attempts have all failed since `failingSince` (no success in between); the row goes at
 * its next success. Once it is older than WEBHOOK_DISABLE_AFTER_FAILING_SECONDS the webhook is disabled.
 */
export const FailingWebhookEntity = defineEntity({
  name: "FailingWebhook",
  tableName: "failing_webhooks",
  properties: {
    webhookId: p.string().primary(),
    failingSince: p.datetime(),
  },
});

export type FailingWebhook = InferEntity<typeof FailingWebhookEntity>;
