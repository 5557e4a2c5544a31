import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { RequestHandler } from "express";
import type { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { HttpError } from "../http-errors.ts";

/** Who an API request acts as: the person who created the key. */
export interface Caller {
  userId: string;
  apiKeyId: string;
}

const bearer = /^Bearer\s+(\S+)\s*$/i;

/**
 * Resolves `Authorization: Bearer <key>` with identity on every request. Nothing is cached, so a
 * deleted key is refused on the very next request by every replica.
 */
export function authenticateApiKey(identity: Client<typeof IdentityService>): RequestHandler {
  return async (req, res, next) => {
    const header = req.get("authorization");
    if (!header) throw new HttpError(401, "missing API key: send Authorization: Bearer <API_KEY>");
    const key = bearer.exec(header)?.[1];
    if (!key) throw new HttpError(401, "malformed Authorization header: expected Bearer <API_KEY>");
    try {
      const { user, apiKeyId } = await identity.authenticateApiKey({ key });
      res.locals.caller = { userId: user!.id, apiKeyId } satisfies Caller;
    } catch (err) {
      if (ConnectError.from(err).code === Code.Unauthenticated) throw new HttpError(401, "invalid API key");
      throw err;
    }
    next();
  };
}
