// The headers of a webhook request, stated once: delivery sets them, the webhooks service refuses them as
// a webhook's own headers, and the API reference documents them.

/** The headers delivery sets on every webhook request (the signatures only when the webhook has a secret). */
export const webhookRequestHeaders = {
  contentType: "Content-Type",
  contentLength: "Content-Length",
  userAgent: "User-Agent",
  /** The spec's signature: base64(HMAC-SHA256(body, secret)). */
  serviceSignature: "X-Service-Signature",
  /** Standard Webhooks: the event's id, the same on every attempt. */
  id: "webhook-id",
  /** Standard Webhooks: the attempt's time in unix seconds. */
  timestamp: "webhook-timestamp",
  /** Standard Webhooks: `v1,<signature>`, space-separated while a rotated-out secret still signs. */
  signature: "webhook-signature",
} as const;

/**
 * Header names a webhook cannot set (lower case; compared case-insensitively): the ones delivery sets
 * itself (body framing, signature, Standard Webhooks ids) or that belong to the connection. Webhooks
 * refuses them when a webhook is saved; delivery leaves them out of what it sends.
 */
export const reservedWebhookHeaders: ReadonlySet<string> = new Set([
  ...Object.values(webhookRequestHeaders).map((name) => name.toLowerCase()),
  "host",
  "transfer-encoding",
  "connection",
]);

/**
 * The prefix of a Standard Webhooks secret (`whsec_<base64>`): its key is the bytes the base64 decodes to.
 * Webhooks generates and checks such secrets; delivery signs with their decoded bytes.
 */
export const standardWebhookSecretPrefix = "whsec_";

/**
 * What a webhook's body is: the standard JSON event, or a message for a chat's incoming webhook (Slack
 * Block Kit, Discord embeds) made from it (services/delivery/src/sender/chat-formats.ts).
 */
export const webhookFormats = ["standard", "slack", "discord"] as const;
export type WebhookFormat = (typeof webhookFormats)[number];
export const defaultWebhookFormat: WebhookFormat = "standard";
