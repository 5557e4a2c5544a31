import { WebhookEntity } from "./webhook.ts";

export { WebhookEntity };
export type { Webhook } from "./webhook.ts";

/** Every entity of the webhooks schema, for openDatabase. */
export const entities = [WebhookEntity];
