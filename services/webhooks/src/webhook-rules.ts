// What a webhook may be: its url, secret and headers. Each check throws INVALID_ARGUMENT with a message
// that starts with the field it is about ("url: ...", "headers.<Name>: ...").
import { randomBytes } from "node:crypto";
import { validateHeaderName, validateHeaderValue } from "node:http";
import { isIP } from "node:net";
import { blockedKind, type AllowedRanges } from "@formsvc/platform/blocked-addresses.ts";
import { defaultWebhookFormat, reservedWebhookHeaders, standardWebhookSecretPrefix, webhookFormats, type WebhookFormat } from "@formsvc/platform/webhook-headers.ts";
import { Code, ConnectError } from "@connectrpc/connect";
import { defaultEventTypes, eventTypes, isEventType } from "@formsvc/platform/events.ts";

const maxUrlLength = 2000;
const maxSecretLength = 256;
const maxHeaders = 20;
const maxHeaderNameLength = 256;
const maxHeaderValueLength = 1000;
/** Webhooks a form may have at most. */
export const maxWebhooksPerForm = 20;

const invalid = (message: string) => new ConnectError(message, Code.InvalidArgument);

/**
 * The refusal of a private URL names the settings that allow one, since a local receiver is the first thing
 * a developer tries (`npm run dev` turns the first on).
 */
export const privateUrlMessage =
  "url: must not point to a private, loopback or link-local address; to allow local receivers, the operator sets " +
  "WEBHOOK_ALLOW_PRIVATE_URLS=true (or starts with `npm run dev`), or lists ranges in WEBHOOK_ALLOWED_CIDRS (e.g. 127.0.0.1/32)";

/** Whether `check` (node:http's own header checks, the ones every delivery request goes through) passes. */
function passes(check: () => void): boolean {
  try {
    check();
    return true;
  } catch {
    return false;
  }
}

const portMessage = "url: the port must be between 1 and 65535";
/** The port of an http(s) URL the parser refused, to tell a port over 65535 from other errors. */
const authorityPort = /^https?:\/\/[^/?#]*:(\d+)(?:[/?#]|$)/i;
/** Whitespace or control characters, which an URL as given must not hold anywhere. */
const urlForbidden = /[\u0000-\u0020\u007f-\u00a0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]/;

/**
 * Checks a webhook URL and returns it as given: absolute http(s), with a host, no credentials, a port
 * (if any) of 1 to 65535, at most 2000 characters, and (unless `allowPrivate`) not a literal IP address
 * of a private, loopback, link-local or otherwise non-public range outside the `allowed` ones
 * (WEBHOOK_ALLOWED_CIDRS), nor `localhost`. Names that resolve to such addresses are refused by delivery
 * when it connects, since DNS answers change.
 */
export function parseWebhookUrl(raw: string, allowPrivate: boolean, allowed: AllowedRanges = []): string {
  if (!raw) throw invalid("url: is required");
  if (raw.length > maxUrlLength) throw invalid(`url: must be at most ${maxUrlLength} characters`);
  if (urlForbidden.test(raw)) throw invalid("url: must not contain spaces or control characters");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    const port = authorityPort.exec(raw)?.[1];
    throw invalid(port !== undefined && Number(port) > 65535 ? portMessage : "url: must be an absolute http or https URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw invalid("url: must use http or https");
  // An http(s) URL always parses with a host; the check guards what the parser may let through.
  if (!url.hostname) throw invalid("url: must have a host");
  if (url.username || url.password) throw invalid("url: must not contain a username or password");
  // The parser takes 0 to 65535 (and refuses more); port 0 cannot be connected to.
  if (url.port === "0") throw invalid(portMessage);
  if (!allowPrivate && isPrivateHost(url.hostname, allowed)) {
    throw invalid(privateUrlMessage);
  }
  return raw;
}

/** Stands for the hidden part of a masked secret. */
const maskMark = "…";
/** Bytes a `whsec_` secret may decode to (the Standard Webhooks spec: 24 to 64). */
const standardSecretBytes = { min: 24, max: 64 } as const;
/** Standard base64 with its padding: what the Standard Webhooks and Svix libraries decode. */
const paddedBase64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The secret to store: null when empty (requests are then unsigned). A `whsec_` secret must be one the
 * Standard Webhooks libraries can decode, or its receivers could never verify a signature.
 */
export function parseSecret(raw: string): string | null {
  if (raw.length > maxSecretLength) throw invalid(`secret: must be at most ${maxSecretLength} characters`);
  // Reads show secrets masked; a client that sends a read back whole must not replace the real one.
  if (raw.includes(maskMark)) throw invalid("secret: is a masked secret as reads show it; leave secret out to keep the current one");
  if (raw.startsWith(standardWebhookSecretPrefix)) {
    const encoded = raw.slice(standardWebhookSecretPrefix.length);
    if (!paddedBase64.test(encoded)) {
      throw invalid(
        "secret: after whsec_ must come standard base64 (A-Z, a-z, 0-9, + and /, padded with = to a multiple of 4 characters); " +
          "base64url ('-', '_') or missing padding cannot be decoded by Standard Webhooks libraries",
      );
    }
    const bytes = Buffer.from(encoded, "base64").length;
    if (bytes < standardSecretBytes.min || bytes > standardSecretBytes.max) {
      throw invalid(`secret: a whsec_ secret must decode to ${standardSecretBytes.min} to ${standardSecretBytes.max} bytes, not ${bytes}`);
    }
  }
  return raw === "" ? null : raw;
}

/** The disabledReason of a webhook its owner disabled (PATCH enabled: false, or created disabled). */
export const disabledByOwner = "disabled by its owner";

/** A new secret for a webhook created without one: `whsec_` and 24 random bytes in base64. */
export function generateSecret(): string {
  return standardWebhookSecretPrefix + randomBytes(standardSecretBytes.min).toString("base64");
}

/**
 * A secret as reads show it (only its creation shows it whole): its prefix, if any, and its last 4
 * characters when it has at least 16 (a shorter one shows none).
 */
export function maskSecret(secret: string | null | undefined): string {
  if (!secret) return "";
  const prefix = secret.startsWith(standardWebhookSecretPrefix) ? standardWebhookSecretPrefix : "";
  return `${prefix}${maskMark}${secret.length >= 16 ? secret.slice(-4) : ""}`;
}

/**
 * Checks a webhook's headers: at most 20, names that are HTTP tokens, neither reserved nor repeated
 * (names are case-insensitive), values of at most 1000 characters that node:http will send (tab,
 * visible ASCII, space and Latin-1 obs-text; no line breaks, control characters or characters beyond
 * U+00FF). Checked by node:http's validateHeaderName/validateHeaderValue, so a saved header never
 * fails at delivery. Returns them as given.
 */
export function parseHeaders(raw: Record<string, string>): Record<string, string> {
  const entries = Object.entries(raw);
  if (entries.length > maxHeaders) throw invalid(`headers: at most ${maxHeaders} headers are allowed`);
  const seen = new Set<string>();
  const headers: Record<string, string> = {};
  for (const [name, value] of entries) {
    const shown = JSON.stringify(name).slice(1, -1);
    if (!name) throw invalid("headers: a header name is empty");
    if (name.length > maxHeaderNameLength) throw invalid(`headers: a header name must be at most ${maxHeaderNameLength} characters`);
    if (!passes(() => validateHeaderName(name))) throw invalid(`headers.${shown}: the name may only contain letters, digits and !#$%&'*+-.^_\`|~`);
    const lower = name.toLowerCase();
    if (reservedWebhookHeaders.has(lower)) throw invalid(`headers.${name}: reserved`);
    if (seen.has(lower)) throw invalid(`headers.${name}: given twice (names are case-insensitive)`);
    seen.add(lower);
    if (value.length > maxHeaderValueLength) throw invalid(`headers.${name}: the value must be at most ${maxHeaderValueLength} characters`);
    if (!passes(() => validateHeaderValue(name, value))) {
      throw invalid(`headers.${name}: the value may only contain printable ASCII or Latin-1 characters and tabs, no line breaks or control characters`);
    }
    headers[name] = value;
  }
  return headers;
}

/**
 * Checks a webhook's event types: known ones (packages/platform/src/events.ts), at least one, none twice.
 * Empty when not given at creation: the default, FORM_RESPONSE.
 */
export function parseEventTypes(raw: readonly string[], given: "create" | "update"): string[] {
  if (raw.length === 0) {
    if (given === "create") return [...defaultEventTypes];
    throw invalid("eventTypes: at least one event type is needed");
  }
  const seen = new Set<string>();
  for (const type of raw) {
    if (!isEventType(type)) throw invalid(`eventTypes: ${JSON.stringify(type).slice(0, 80)} is not an event type; one of ${eventTypes.join(", ")}`);
    if (seen.has(type)) throw invalid(`eventTypes: ${type} is given twice`);
    seen.add(type);
  }
  return [...raw];
}

/** A webhook's format; empty at creation: standard. */
export function parseFormat(raw: string): WebhookFormat {
  if (raw === "") return defaultWebhookFormat;
  const format = webhookFormats.find((f) => f === raw);
  if (!format) throw invalid(`format: one of ${webhookFormats.join(", ")}`);
  return format;
}

/** A subscriber's name: a tool's, as its integration sends it (`n8n`, `zapier`, `make`). */
const subscriberPattern = /^[a-z0-9][a-z0-9_.-]{0,39}$/;

/** The subscriber to store: null when none is given. */
export function parseSubscriber(raw: string): string | null {
  if (raw === "") return null;
  if (!subscriberPattern.test(raw)) throw invalid("subscriber: 1 to 40 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit");
  return raw;
}

// --- Private addresses ---

/**
 * Whether a URL's hostname (as `URL.hostname` gives it: IPv4 normalized to dotted decimal, IPv6 in
 * brackets) is a literal address in a non-public range not `allowed`, or `localhost` (RFC 6761).
 */
export function isPrivateHost(hostname: string, allowed: AllowedRanges = []): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  return isIP(bare) !== 0 && blockedKind(bare, allowed) !== undefined;
}
