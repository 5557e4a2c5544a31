// Header names a webhook cannot set (lower case; compared case-insensitively): the ones delivery sets
// itself (body framing, signature, Standard Webhooks ids) or that belong to the connection. Webhooks
// refuses them when a webhook is saved; delivery leaves them out of what it sends. One list for both.
export const reservedWebhookHeaders: ReadonlySet<string> = new Set([
  "content-type",
  "content-length",
  "host",
  "x-service-signature",
  "webhook-id",
  "webhook-timestamp",
  "webhook-signature",
  "user-agent",
  "transfer-encoding",
  "connection",
]);

/**
 * The prefix of a Standard Webhooks secret (`whsec_<base64>`): its key is the bytes the base64 decodes to.
 * Webhooks generates and checks such secrets; delivery signs with their decoded bytes.
 */
export const standardWebhookSecretPrefix = "whsec_";
