// /api/v1: an API key on every request (resolved by identity each time, so a deleted key is refused on its
// very next use), limits per address and per key, and an Idempotency-Key on every POST. The keys of requests
// that arrive while identity is being asked go together in its next call (AuthenticateApiKeys).
import { maxApiKeysPerCall } from "@formsvc/platform/caller.ts";
import { GroupCommit } from "@formsvc/platform/group-commit.ts";
import express, { type RequestHandler, type Router } from "express";
import { auditAtDoor } from "../audit/trail.ts";
import type { GatewayDeps } from "../deps.ts";
import { HttpError, jsonNotFound } from "../http-errors.ts";
import { idempotencyKeyOf } from "../idempotency.ts";
import { rateLimit } from "../rate-limit/rate-limit-middleware.ts";
import { send, type ApiRoute } from "./route.ts";
import { newRouter } from "../routing.ts";

/** Who an API request acts as: the person who created the key. */
interface Caller {
  userId: string;
  apiKeyId: string;
}

const bearer = /^Bearer\s+(\S+)\s*$/i;

function authenticateApiKey(identity: GatewayDeps["identity"]): RequestHandler {
  // A call carries every key waiting; alone, a request's key is asked about at once. A refused key is an
  // answer, not a failure: a failed call is identity's, and asking again key by key would only add load.
  const verdicts = new GroupCommit(async (keys: string[]) => (await identity.authenticateApiKeys({ keys })).results, {
    maxBatch: maxApiKeysPerCall,
    splitOnFailure: false,
  });
  return async (req, res, next) => {
    const header = req.get("authorization");
    if (!header) throw new HttpError(401, "missing API key: send Authorization: Bearer <API_KEY>");
    const key = bearer.exec(header)?.[1];
    if (!key) throw new HttpError(401, "malformed Authorization header: expected Bearer <API_KEY>");
    const { user, apiKeyId } = await verdicts.add(key);
    if (!user) throw new HttpError(401, "invalid API key");
    res.locals.caller = { userId: user.id, apiKeyId } satisfies Caller;
    next();
  };
}

/** Every POST takes an `Idempotency-Key`: the creates and actions an integrator may need to retry. */
export function takesIdempotencyKey(route: Pick<ApiRoute, "method">): boolean {
  return route.method === "post";
}

/**
 * Mounts `routes`, each behind the key and its limit. A POST with an `Idempotency-Key` runs once per key
 * and API key; its repeats answer what it answered. An unknown path is a 404 with or without a key.
 */
export function apiDoor(deps: Pick<GatewayDeps, "identity" | "idempotency" | "rateLimits" | "audit">, routes: ApiRoute[]): Router {
  const { store, perKey, perIp } = deps.rateLimits;
  const api = newRouter();
  api.use(rateLimit(store, "address", perIp, (_res, req) => req.ip ?? "unknown"));
  const before = [
    authenticateApiKey(deps.identity),
    rateLimit(store, "key", perKey, (res) => (res.locals.caller as Caller).apiKeyId),
    express.json({ limit: "1mb" }),
  ];
  for (const route of routes) {
    api[route.method](route.path, ...before, async (req, res) => {
      const caller = res.locals.caller as Caller;
      const { parts, input, answer } = route.accept(req, caller.userId, caller.apiKeyId);
      const actor = { type: "api_key", userId: caller.userId, apiKeyId: caller.apiKeyId } as const;
      const audited = await auditAtDoor(deps.audit, route.key, input, { actor, address: req.ip ?? "", requestId: res.locals.requestId });
      const run = async () => {
        const { status, body } = await answer();
        return { status, body };
      };
      const key = takesIdempotencyKey(route) ? idempotencyKeyOf(req) : "";
      const { replayed, ...reply } = key
        ? await deps.idempotency.run({ scope: `key:${caller.apiKeyId}`, key, content: [route.operationId, ...parts] }, run)
        : { ...(await run()), replayed: false };
      if (replayed) res.setHeader("Idempotent-Replayed", "true");
      // A replay changed nothing: only the run that did is recorded.
      else audited(reply);
      send(res, reply);
    });
  }
  api.use(jsonNotFound);
  return api;
}
