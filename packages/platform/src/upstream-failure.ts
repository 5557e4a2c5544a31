// What a failed call to another service becomes for our own caller, in one place: "not found" and the
// caller's own problems pass through, anything else is UNAVAILABLE without the other service's details
// (kept as the cause and logged).
import { Code, ConnectError } from "@connectrpc/connect";
import type { Logger } from "./logger.ts";
import { connectionFailureCodes } from "./network-errors.ts";

export interface UpstreamFailureOptions {
  /** NOT_FOUND's message for our caller; the other service's own message when absent. */
  notFoundMessage?: string;
  /** Codes passed through with the other service's message: UNAUTHENTICATED and PERMISSION_DENIED when absent. */
  passThrough?: readonly Code[];
  logger?: Logger;
}

const callerProblems = [Code.Unauthenticated, Code.PermissionDenied] as const;

// A broken connection, or an HTTP/2 stream or session cut under the call. connect-node reports a reset
// as ABORTED ("read ECONNRESET"), which on its own would read as a conflict, and a session that died
// with the other process (SIGKILL) as CANCELED "http/2 stream closed with error code CANCEL": a call we
// cancel ourselves fails with our signal's reason instead, which names no stream.
const transportErrorCodes = new Set([
  ...connectionFailureCodes,
  "ERR_STREAM_DESTROYED",
  "ERR_STREAM_PREMATURE_CLOSE",
  "ERR_HTTP2_INVALID_STREAM",
  "ERR_HTTP2_STREAM_CANCEL",
  "ERR_HTTP2_GOAWAY_SESSION",
  "ERR_HTTP2_SESSION_ERROR",
  "ERR_HTTP2_STREAM_ERROR",
]);

/**
 * Whether a failed call never got an answer from the other service: it was unreachable, timed out, or
 * its connection broke (reset, hang-up) mid-call. Worth retrying; never the caller's fault.
 */
export function isTransportFailure(err: unknown): boolean {
  const failure = ConnectError.from(err);
  if (failure.code === Code.Unavailable || failure.code === Code.DeadlineExceeded) return true;
  // A few hops at most: a cause chain may loop.
  for (let cause: unknown = failure, hops = 0; cause instanceof Error && hops < 8; cause = cause.cause, hops++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string" && transportErrorCodes.has(code)) return true;
    if (/socket hang up|http\/2 stream closed/i.test(cause.message)) return true;
  }
  return false;
}

/** Throws what a failed call to `service` means for our caller. */
export function upstreamFailure(service: string, err: unknown, options: UpstreamFailureOptions = {}): never {
  const failure = ConnectError.from(err);
  if (failure.code === Code.NotFound) throw new ConnectError(options.notFoundMessage ?? failure.rawMessage, Code.NotFound);
  if ((options.passThrough ?? callerProblems).includes(failure.code)) throw new ConnectError(failure.rawMessage, failure.code);
  options.logger?.warn({ err: failure, code: Code[failure.code] }, `${service} call failed`);
  throw new ConnectError(`${service} is unavailable`, Code.Unavailable, undefined, undefined, failure);
}
