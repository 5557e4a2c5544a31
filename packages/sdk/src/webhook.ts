// Checks a webhook request the way the sender signs it (services/delivery/src/sender/sign.ts, tested against
// it in webhook.test.ts): both signatures over the raw body bytes, the Standard Webhooks one with its timestamp.
import { createHmac, timingSafeEqual } from "node:crypto";
import type { components } from "./openapi.ts";

/** FORM_RESPONSE's body. */
export type WebhookPayload = components["schemas"]["WebhookPayload"];

/** The body of any event type a webhook may receive; `eventType` tells them apart. */
export type WebhookEvent = WebhookPayload | components["schemas"]["PartialResponseWebhookPayload"] | components["schemas"]["FormWebhookPayload"];

/** Headers as Node (`req.headers`) or fetch (`Headers`) give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export class WebhookVerificationError extends Error {}

/** How far `webhook-timestamp` may be from the receiver's clock. */
export const webhookTimestampToleranceSeconds = 5 * 60;

const standardSecretPrefix = "whsec_";

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const value = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

function sameBase64(expected: Buffer, sent: string): boolean {
  const got = Buffer.from(sent, "base64");
  return got.length === expected.length && timingSafeEqual(got, expected);
}

/** The Standard Webhooks key: the bytes a `whsec_<base64>` secret decodes to, else the secret's UTF-8 bytes. */
function standardKey(secret: string): Buffer {
  if (secret.startsWith(standardSecretPrefix)) {
    const decoded = Buffer.from(secret.slice(standardSecretPrefix.length), "base64");
    if (decoded.length > 0) return decoded;
  }
  return Buffer.from(secret, "utf8");
}

/**
 * The payload of a webhook request once both its signatures hold: `X-Service-Signature`
 * (base64 HMAC-SHA256 of the raw body, keyed with the secret's UTF-8 bytes) and the Standard Webhooks
 * `webhook-signature` over `<webhook-id>.<webhook-timestamp>.<raw body>` with a timestamp within five minutes.
 * Throws WebhookVerificationError otherwise. Pass the body exactly as received, before any JSON parsing.
 */
export function verifyWebhook<T extends WebhookEvent = WebhookPayload>(rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string, now: Date = new Date()): T {
  const body = typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : Buffer.from(rawBody);
  if (!secret) throw new WebhookVerificationError("a secret is needed to verify a webhook");

  const serviceSignature = header(headers, "x-service-signature");
  if (!serviceSignature) throw new WebhookVerificationError("missing X-Service-Signature");
  const serviceExpected = createHmac("sha256", Buffer.from(secret, "utf8")).update(body).digest();
  if (!sameBase64(serviceExpected, serviceSignature)) throw new WebhookVerificationError("X-Service-Signature does not match");

  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature");
  const sentAt = Number(timestamp);
  if (!/^\d+$/.test(timestamp) || Math.abs(now.getTime() / 1000 - sentAt) > webhookTimestampToleranceSeconds) {
    throw new WebhookVerificationError("webhook-timestamp is missing or more than five minutes away");
  }
  const standardExpected = createHmac("sha256", standardKey(secret)).update(`${id}.${timestamp}.`).update(body).digest();
  // A space-separated list of `v1,<base64>`; one match is enough (the sender may list several while rotating keys).
  const matches = signatures.split(" ").some((entry) => {
    const [version, signature] = entry.split(",", 2);
    return version === "v1" && signature !== undefined && sameBase64(standardExpected, signature);
  });
  if (!matches) throw new WebhookVerificationError("webhook-signature does not match");

  // A receiver subscribed to other event types asks for WebhookEvent and narrows on eventType.
  const payload: T = JSON.parse(body.toString("utf8"));
  return payload;
}
