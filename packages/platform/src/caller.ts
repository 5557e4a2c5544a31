import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";

/**
 * The person a call is made for travels in this metadata header. The gateway sets it after
 * authenticating a key or session; operator calls (the CLI) carry none.
 */
export const callerHeader = "x-caller-user-id";
export const requestIdHeader = "x-request-id";

/** The most keys one AuthenticateApiKeys call carries: identity refuses more, the gateway sends no more. */
export const maxApiKeysPerCall = 256;

/** The most saves one SaveResponses call carries: submissions refuses more, the gateway sends no more. */
export const maxSavesPerCall = 256;

export function callerOf(ctx: HandlerContext): string | undefined {
  return ctx.requestHeader.get(callerHeader) || undefined;
}

export function requireCaller(ctx: HandlerContext): string {
  const caller = callerOf(ctx);
  if (!caller) throw new ConnectError("this call needs a caller", Code.Unauthenticated);
  return caller;
}

/** The operator, as actorOf names a call without a caller. */
export const operator: unique symbol = Symbol("operator");

/**
 * Whom a call acts for, by the operator rule: a call without a caller is the operator's (the CLI, or
 * a service asking another on nobody's behalf), and the operator is held to no person's memberships.
 * Otherwise it is the caller, a user id. The gateway sets the caller on every call it makes for a
 * signed-in person (key or session). Calls only a person may make use requireCaller instead; public
 * calls (a respondent, a sign-up) ask neither.
 */
export function actorOf(ctx: HandlerContext): string | typeof operator {
  return callerOf(ctx) ?? operator;
}

/** Call options that make an outgoing call on behalf of `userId`. */
export function asCaller(userId: string | undefined): { headers: Record<string, string> } {
  return { headers: userId ? { [callerHeader]: userId } : {} };
}
