import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";

/**
 * The person a call is made for travels in this metadata header. The gateway sets it after
 * authenticating a key or session; operator calls (the CLI) carry none.
 */
export const callerHeader = "x-caller-user-id";
export const requestIdHeader = "x-request-id";

export function callerOf(ctx: HandlerContext): string | undefined {
  return ctx.requestHeader.get(callerHeader) || undefined;
}

export function requireCaller(ctx: HandlerContext): string {
  const caller = callerOf(ctx);
  if (!caller) throw new ConnectError("this call needs a caller", Code.Unauthenticated);
  return caller;
}

/** Call options that make an outgoing call on behalf of `userId`. */
export function asCaller(userId: string | undefined): { headers: Record<string, string> } {
  return { headers: userId ? { [callerHeader]: userId } : {} };
}
