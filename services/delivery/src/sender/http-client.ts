// One webhook POST over node:http(s): a hard limit on the whole exchange (connect, TLS, answer), no
// redirect followed, the address guard at connect time, and at most a few KiB of the answer kept.
// Never throws: every end is a SendResult (send-result.ts says what it means).
import http from "node:http";
import https from "node:https";
import type { AllowedRanges } from "@formsvc/platform/blocked-addresses.ts";
import { assertPublicLiteral, guardedLookup, AddressBlockedError } from "./address-guard.ts";
import { classify, type SendErrorKind, type SendResult } from "./send-result.ts";
import { signatureHeaders } from "./sign.ts";
import { reservedWebhookHeaders, webhookRequestHeaders as names } from "@formsvc/platform/webhook-headers.ts";
import { inSpan, markFailed, SpanKind } from "@formsvc/platform/tracing.ts";

export const userAgent = "formsvc-webhooks/1";
/** The spec's receiver time-out. */
const defaultTimeoutMs = 10_000;
/** How much of a receiver's answer is kept with the attempt. */
export const maxResponseBytes = 4096;

export interface WebhookRequest {
  url: string;
  /** The exact bytes to send, as stored with the delivery. */
  body: string;
  eventId: string;
  /** Empty when the webhook has none. */
  secret: string;
  /** The secret a rotation replaced, while it is still valid (empty otherwise): it signs too. */
  previousSecret?: string;
  /** The webhook's own headers. */
  headers: Record<string, string>;
}

export interface HttpClientOptions {
  /** The hard limit on the whole exchange; 10 s unless a test says otherwise. */
  timeoutMs?: number;
  /** WEBHOOK_ALLOW_PRIVATE_URLS: when true, loopback and private addresses may be reached. */
  allowPrivateUrls: boolean;
  /** WEBHOOK_ALLOWED_CIDRS: non-public ranges that may be reached all the same; none unless given. */
  allowedCidrs?: AllowedRanges;
  /** Idle connections kept per origin: as many as attempts may be in flight to one (4 unless told). */
  keptPerOrigin?: number;
  /** The clock of the signature timestamp. */
  now?: () => Date;
}

/**
 * Every header of the request: the webhook's own, then the service's. A webhook's header of a reserved
 * name is left out (the webhooks service refuses them anyway), so nobody can forge a signature or
 * break the framing.
 */
function requestHeaders(request: WebhookRequest, now: Date): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (!reservedWebhookHeaders.has(name.toLowerCase())) headers[name] = value;
  }
  return {
    ...headers,
    ...signatureHeaders({ eventId: request.eventId, body: request.body, secret: request.secret, previousSecret: request.previousSecret, now }),
    [names.contentType]: "application/json",
    [names.userAgent]: userAgent,
  };
}

function describeError(err: NodeJS.ErrnoException, timeoutMs: number): { errorKind: SendErrorKind; error: string } {
  if (err instanceof AddressBlockedError) return { errorKind: "blocked", error: err.message };
  switch (err.code) {
    case "ETIMEDOUT_TOTAL":
      return { errorKind: "timeout", error: `no complete answer within ${timeoutMs / 1000} s` };
    case "ECONNREFUSED":
      return { errorKind: "refused", error: "connection refused" };
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return { errorKind: "network", error: "the host name could not be resolved" };
    case "ECONNRESET":
      return { errorKind: "network", error: "connection reset by the receiver" };
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return { errorKind: "network", error: "the receiver's network is unreachable" };
    case "ERR_INVALID_HTTP_TOKEN":
    case "ERR_INVALID_CHAR":
      return { errorKind: "invalid", error: "a header of the webhook is not a valid HTTP header" };
    default:
      return { errorKind: "network", error: err.message || String(err.code ?? "network error") };
  }
}

/**
 * Connections are kept alive per receiver origin and reused by the next attempts to it (a new TLS
 * handshake and TCP connect per webhook POST cost more than the POST). The address guard is the
 * agents' lookup, so it checks every connection made; a kept connection goes to an address it
 * checked. Idle connections close after a few seconds; as many per origin are kept as attempts may be
 * in flight to it, so a burst to a quick receiver (32 at a time) does not close and open connections as
 * its attempts end and begin.
 */
const agents = new Map<string, http.Agent>();
const idleConnectionMs = 4_000;

function agentFor(protocol: string, allowPrivateUrls: boolean, allowedCidrs: AllowedRanges, keptPerOrigin: number): http.Agent {
  const allowed = allowedCidrs.map(([address, bits]) => `${address.toString()}/${bits}`).join(",");
  const key = `${protocol}${allowPrivateUrls ? " private" : ""} ${keptPerOrigin} ${allowed}`;
  let agent = agents.get(key);
  if (!agent) {
    const options = {
      keepAlive: true,
      maxFreeSockets: keptPerOrigin,
      timeout: idleConnectionMs,
      scheduling: "lifo" as const,
      lookup: allowPrivateUrls ? undefined : guardedLookup(undefined, allowedCidrs),
    };
    agent = protocol === "https:" ? new https.Agent(options) : new http.Agent(options);
    agents.set(key, agent);
  }
  return agent;
}

/** The kept part of an answer: UTF-8, without NUL (Postgres text cannot hold it). */
function excerpt(chunks: Buffer[]): string {
  return Buffer.concat(chunks).subarray(0, maxResponseBytes).toString("utf8").replaceAll("\u0000", "");
}

/**
 * POSTs the request once, as a CLIENT span of the current trace: receiver host and port, status code,
 * and the error kind when no answer came; never the URL's path or query (they may hold a token). The
 * trace context is not sent to the receiver: our trace ids are ours.
 */
export function postWebhook(request: WebhookRequest, options: HttpClientOptions): Promise<SendResult> {
  let target: Record<string, string | number> = {};
  try {
    const url = new URL(request.url);
    target = { "server.address": url.hostname, "server.port": Number(url.port) || (url.protocol === "https:" ? 443 : 80), "url.scheme": url.protocol.slice(0, -1) };
  } catch {
    // sendOnce answers an invalid URL.
  }
  return inSpan("POST", { kind: SpanKind.CLIENT, attributes: { "http.request.method": "POST", ...target } }, async (span) => {
    const result = await sendOnce(request, options);
    if (result.statusCode) span.setAttribute("http.response.status_code", result.statusCode);
    if (result.errorKind) span.setAttribute("error.type", result.errorKind);
    if (classify(result) !== "succeeded") markFailed(span, result.error ?? `the receiver answered ${result.statusCode}`);
    return result;
  });
}

function sendOnce(request: WebhookRequest, options: HttpClientOptions): Promise<SendResult> {
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);

  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return Promise.resolve({ statusCode: 0, durationMs: 0, responseBody: "", errorKind: "invalid", error: "the webhook URL is not a valid URL" });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return Promise.resolve({ statusCode: 0, durationMs: 0, responseBody: "", errorKind: "invalid", error: "the webhook URL must be http or https" });
  }
  if (!options.allowPrivateUrls) {
    try {
      assertPublicLiteral(url.hostname, options.allowedCidrs);
    } catch (err) {
      return Promise.resolve({ statusCode: 0, durationMs: 0, responseBody: "", ...describeError(err as NodeJS.ErrnoException, timeoutMs) });
    }
  }

  const body = Buffer.from(request.body, "utf8");
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    let statusCode = 0;
    let retryAfter: string | undefined;
    const chunks: Buffer[] = [];
    let kept = 0;
    let timer: NodeJS.Timeout | undefined;
    const finish = (result: Omit<SendResult, "durationMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, durationMs: elapsed(), ...(retryAfter === undefined ? {} : { retryAfter }) });
    };
    const fail = (err: NodeJS.ErrnoException) => {
      // An answer whose status came in time counts, even if its body did not finish.
      if (statusCode) finish({ statusCode, responseBody: excerpt(chunks) });
      else finish({ statusCode: 0, responseBody: "", ...describeError(err, timeoutMs) });
    };

    let req: http.ClientRequest;
    try {
      const transport = url.protocol === "https:" ? https : http;
      req = transport.request(url, {
        method: "POST",
        headers: { ...requestHeaders(request, options.now?.() ?? new Date()), [names.contentLength]: String(body.length) },
        agent: agentFor(url.protocol, options.allowPrivateUrls, options.allowedCidrs ?? [], options.keptPerOrigin ?? 4),
      });
    } catch (err) {
      finish({ statusCode: 0, responseBody: "", ...describeError(err as NodeJS.ErrnoException, timeoutMs) });
      return;
    }

    timer = setTimeout(() => {
      const err: NodeJS.ErrnoException = new Error("time-out");
      err.code = "ETIMEDOUT_TOTAL";
      fail(err);
      req.destroy();
    }, timeoutMs);

    req.on("error", (err) => fail(err));
    req.on("response", (res) => {
      statusCode = res.statusCode ?? 0;
      retryAfter = res.headers["retry-after"];
      res.on("data", (chunk: Buffer) => {
        if (kept < maxResponseBytes) {
          chunks.push(chunk);
          kept += chunk.length;
        }
        // Enough kept: the rest of the answer is not waited for.
        if (kept >= maxResponseBytes) {
          finish({ statusCode, responseBody: excerpt(chunks) });
          res.destroy();
        }
      });
      res.on("end", () => finish({ statusCode, responseBody: excerpt(chunks) }));
      res.on("error", (err) => fail(err));
      res.on("close", () => finish({ statusCode, responseBody: excerpt(chunks) }));
    });
    req.end(body);
  });
}
