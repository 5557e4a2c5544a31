// What a webhook may be: its url, secret and headers. Each check throws INVALID_ARGUMENT with a message
// that starts with the field it is about ("url: ...", "headers.<Name>: ...").
import { isIP } from "node:net";
import { blockedKind } from "@formsvc/platform/blocked-addresses.ts";
import { Code, ConnectError } from "@connectrpc/connect";

const maxUrlLength = 2000;
const maxSecretLength = 256;
const maxHeaders = 20;
const maxHeaderNameLength = 256;
const maxHeaderValueLength = 1000;
/** Webhooks a form may have at most. */
export const maxWebhooksPerForm = 20;

/**
 * Header names a webhook cannot set (compared case-insensitively): the ones delivery sets itself
 * (body framing, signature, Standard Webhooks ids) or that belong to the connection.
 */
export const reservedHeaderNames: ReadonlySet<string> = new Set([
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

const invalid = (message: string) => new ConnectError(message, Code.InvalidArgument);

/** RFC 9110 token: the characters a header name may have. */
const tokenPattern = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Control characters other than horizontal tab (CR and LF among them), which no header value may hold. */
const headerValueForbidden = /[\u0000-\u0008\u000a-\u001f\u007f]/;
/** Whitespace or control characters, which an URL as given must not hold anywhere. */
const urlForbidden = /[\u0000-\u0020\u007f-\u00a0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]/;

/**
 * Checks a webhook URL and returns it as given: absolute http(s), with a host, no credentials, at most
 * 2000 characters, and (unless `allowPrivate`) not a literal IP address of a private, loopback,
 * link-local or otherwise non-public range, nor `localhost`. Names that resolve to such addresses are
 * refused by delivery when it connects, since DNS answers change.
 */
export function parseWebhookUrl(raw: string, allowPrivate: boolean): string {
  if (!raw) throw invalid("url: is required");
  if (raw.length > maxUrlLength) throw invalid(`url: must be at most ${maxUrlLength} characters`);
  if (urlForbidden.test(raw)) throw invalid("url: must not contain spaces or control characters");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid("url: must be an absolute http or https URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw invalid("url: must use http or https");
  // An http(s) URL always parses with a host; the check guards what the parser may let through.
  if (!url.hostname) throw invalid("url: must have a host");
  if (url.username || url.password) throw invalid("url: must not contain a username or password");
  if (!allowPrivate && isPrivateHost(url.hostname)) {
    throw invalid("url: must not point to a private, loopback or link-local address");
  }
  return raw;
}

/** The secret to store: null when empty (requests are then unsigned). */
export function parseSecret(raw: string): string | null {
  if (raw.length > maxSecretLength) throw invalid(`secret: must be at most ${maxSecretLength} characters`);
  return raw === "" ? null : raw;
}

/**
 * Checks a webhook's headers: at most 20, names of token characters, neither reserved nor repeated
 * (names are case-insensitive), values of at most 1000 characters without line breaks or other
 * control characters. Returns them as given.
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
    if (!tokenPattern.test(name)) throw invalid(`headers.${shown}: the name may only contain letters, digits and !#$%&'*+-.^_\`|~`);
    const lower = name.toLowerCase();
    if (reservedHeaderNames.has(lower)) throw invalid(`headers.${name}: reserved`);
    if (seen.has(lower)) throw invalid(`headers.${name}: given twice (names are case-insensitive)`);
    seen.add(lower);
    if (value.length > maxHeaderValueLength) throw invalid(`headers.${name}: the value must be at most ${maxHeaderValueLength} characters`);
    if (headerValueForbidden.test(value)) throw invalid(`headers.${name}: the value must not contain line breaks or control characters`);
    headers[name] = value;
  }
  return headers;
}

// --- Private addresses ---

/**
 * Whether a URL's hostname (as `URL.hostname` gives it: IPv4 normalized to dotted decimal, IPv6 in
 * brackets) is a literal address in a non-public range, or `localhost` (RFC 6761).
 */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  return isIP(bare) !== 0 && blockedKind(bare) !== undefined;
}
