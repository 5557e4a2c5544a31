// The form service's TypeScript SDK: typed clients generated from the OpenAPI document, and webhook verification.
export { createFormsClient, createHostedFormsClient, type ApiPaths, type FormsClientOptions, type HostedPaths } from "./client.ts";
export { verifyWebhook, WebhookVerificationError, webhookTimestampToleranceSeconds, type WebhookEvent, type WebhookHeaders, type WebhookPayload } from "./webhook.ts";
export type { components, operations, paths, webhooks } from "./openapi.ts";
