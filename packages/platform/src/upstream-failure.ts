// What a failed call to another service becomes for our own caller, in one place: "not found" and the
// caller's own problems pass through, anything else is UNAVAILABLE without the other service's details
// (kept as the cause and logged).
import { Code, ConnectError } from "@connectrpc/connect";
import type { Logger } from "./logger.ts";

export interface UpstreamFailureOptions {
  /** NOT_FOUND's message for our caller; the other service's own message when absent. */
  notFoundMessage?: string;
  /** Codes passed through with the other service's message: UNAUTHENTICATED and PERMISSION_DENIED when absent. */
  passThrough?: readonly Code[];
  logger?: Logger;
}

const callerProblems = [Code.Unauthenticated, Code.PermissionDenied] as const;

/** Throws what a failed call to `service` means for our caller. */
export function upstreamFailure(service: string, err: unknown, options: UpstreamFailureOptions = {}): never {
  const failure = ConnectError.from(err);
  if (failure.code === Code.NotFound) throw new ConnectError(options.notFoundMessage ?? failure.rawMessage, Code.NotFound);
  if ((options.passThrough ?? callerProblems).includes(failure.code)) throw new ConnectError(failure.rawMessage, failure.code);
  options.logger?.warn({ err: failure, code: Code[failure.code] }, `${service} call failed`);
  throw new ConnectError(`${service} is unavailable`, Code.Unavailable, undefined, undefined, failure);
}
