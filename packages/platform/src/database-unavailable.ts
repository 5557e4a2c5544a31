// Which errors mean "the database cannot be reached right now", apart from database.ts so that the RPC
// layer (loaded by the gateway and the CLI too) can tell without loading MikroORM.
import { connectionFailureCodes } from "./network-errors.ts";

/** SQLSTATEs of a server that is going away or not taking connections (class 08 is matched as a whole). */
const unavailableStates = new Set(["57P01", "57P02", "57P03", "53300"]);
/** A broken connection, or a database host name that does not resolve (yet). */
const networkCodes = new Set([...connectionFailureCodes, "ENOTFOUND", "EAI_AGAIN"]);
/** What pg says, without a code, when a connection broke or could not be made in time. */
const brokenConnection = /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect)/;

/**
 * Whether `err` (or an error it wraps) means the database cannot be reached right now: refused, reset,
 * timed out, shutting down or starting up. Such a failure is temporary: UNAVAILABLE, not INTERNAL.
 */
export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== "object" || depth > 5) return false;
  const { code, message, cause, errors } = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === "string" && (networkCodes.has(code) || unavailableStates.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
  if (typeof message === "string" && brokenConnection.test(message)) return true;
  if (Array.isArray(errors) && errors.some((e) => isDatabaseUnavailable(e, depth + 1))) return true;
  return isDatabaseUnavailable(cause, depth + 1);
}
