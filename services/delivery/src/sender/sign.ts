// Signatures of a webhook request. Two schemes, both over the exact bytes sent:
//
// - `X-Service-Signature: base64(HMAC-SHA256(body, secret))` (the spec), the key being the secret
//   string's UTF-8 bytes, whatever it looks like.
// - Standard Webhooks (https://www.standardwebhooks.com, what Svix sends): `webhook-id` (the eventId,
//   the same on every attempt), `webhook-timestamp` (unix seconds of this attempt) and
//   `webhook-signature: v1,base64(HMAC-SHA256("<id>.<timestamp>.<body>", key))`. The standardwebhooks
//   libraries take a secret `whsec_<base64>` and sign with the bytes it decodes to, so for a secret of
//   that form the key is those bytes; for any other secret the key is its UTF-8 bytes (a receiver then
//   verifies with `new Webhook(Buffer.from(secret), { format: "raw" })`).
//
// Without a secret only `webhook-id` and `webhook-timestamp` are sent. For 24 hours after a rotation the
// previous secret signs too: `webhook-signature` carries both signatures, space-separated (new first),
// as Standard Webhooks specifies, so receivers holding either secret verify; `X-Service-Signature`,
// which has room for one, uses the new secret.
import { createHmac, createSecretKey, type KeyObject } from "node:crypto";
import { standardWebhookSecretPrefix, webhookRequestHeaders as names } from "@formsvc/platform/webhook-headers.ts";

/**
 * HMAC keys by scheme and secret, made once: Node 24 checks a Buffer key's type on every createHmac (~10 µs
 * of a ~12 µs signature), a KeyObject's at once. A few webhooks' secrets at a time; emptied when it fills.
 */
const keys = new Map<string, KeyObject>();
const maxKeys = 1_000;

function keyOf(scheme: "service" | "standard", secret: string): KeyObject {
  const name = `${scheme} ${secret}`;
  let key = keys.get(name);
  if (!key) {
    if (keys.size >= maxKeys) keys.clear();
    key = createSecretKey(scheme === "service" ? Buffer.from(secret, "utf8") : standardWebhookKey(secret));
    keys.set(name, key);
  }
  return key;
}

export function serviceSignature(body: string | Buffer, secret: string): string {
  return createHmac("sha256", keyOf("service", secret)).update(body).digest("base64");
}

/** The HMAC key of the Standard Webhooks signature for `secret` (see above). */
export function standardWebhookKey(secret: string): Buffer {
  if (secret.startsWith(standardWebhookSecretPrefix)) {
    const decoded = Buffer.from(secret.slice(standardWebhookSecretPrefix.length), "base64");
    if (decoded.length > 0) return decoded;
  }
  return Buffer.from(secret, "utf8");
}

export function standardWebhookSignature(id: string, timestamp: number, body: string | Buffer, secret: string): string {
  const mac = createHmac("sha256", keyOf("standard", secret));
  mac.update(`${id}.${timestamp}.`);
  mac.update(body);
  return `v1,${mac.digest("base64")}`;
}

/** The signature headers of one attempt. `now` gives the attempt's time. */
export function signatureHeaders(options: { eventId: string; body: string; secret: string; previousSecret?: string; now?: Date }): Record<string, string> {
  const timestamp = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const headers: Record<string, string> = {
    [names.id]: options.eventId,
    [names.timestamp]: String(timestamp),
  };
  if (options.secret) {
    headers[names.serviceSignature] = serviceSignature(options.body, options.secret);
    const secrets = options.previousSecret ? [options.secret, options.previousSecret] : [options.secret];
    headers[names.signature] = secrets.map((secret) => standardWebhookSignature(options.eventId, timestamp, options.body, secret)).join(" ");
  }
  return headers;
}
