// App sessions: made at sign-in, resolved on every app request, ended one at a time or all at once.
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { newId, randomToken } from "@formsvc/platform/ids.ts";
import { requireCaller } from "@formsvc/platform/caller.ts";
import { hashSecret } from "../api-keys.ts";
import { SessionEntity } from "../entities/session.ts";
import { UserEntity } from "../entities/user.ts";
import { invalidSession, toUserMessage, userNotFound, type IdentityContext, type IdentityHandlers } from "./context.ts";
import { secondFactor } from "./two-factor.ts";

/** How long an app session lasts. */
export const sessionLifetimeMs = 30 * 24 * 60 * 60 * 1000;

type SessionHandlers = Pick<IdentityHandlers, "createSession" | "resolveSession" | "deleteSession" | "deleteUserSessions">;

export function sessionHandlers(c: IdentityContext): SessionHandlers {
  const { now, fork } = c;
  const factor = secondFactor(c);
  return {
    async createSession(req) {
      if (!req.userId) throw new ConnectError("user_id is required", Code.InvalidArgument);
      const em = fork();
      const user = await em.findOne(UserEntity, { id: req.userId });
      if (!user) throw userNotFound();
      const token = randomToken(32);
      const createdAt = now();
      const expiresAt = new Date(createdAt.getTime() + sessionLifetimeMs);
      em.create(SessionEntity, { id: newId(), userId: user.id, tokenHash: hashSecret(token), createdAt, expiresAt });
      await em.flush();
      return { token, expiresAt: timestampFromDate(expiresAt), twoFactorRequired: await factor.mustEnrol(em, user) };
    },

    async resolveSession(req) {
      if (!req.token) throw invalidSession();
      const em = fork();
      const session = await em.findOne(SessionEntity, { tokenHash: hashSecret(req.token) });
      if (!session) throw invalidSession();
      if (session.expiresAt <= now()) {
        await em.nativeDelete(SessionEntity, { id: session.id });
        throw invalidSession();
      }
      const user = await em.findOne(UserEntity, { id: session.userId });
      if (!user) throw invalidSession();
      return { user: toUserMessage(user), expiresAt: timestampFromDate(session.expiresAt), twoFactorRequired: await factor.mustEnrol(em, user) };
    },

    async deleteSession(req) {
      // Signing out twice, or with an unknown token, is not an error.
      if (req.token) await fork().nativeDelete(SessionEntity, { tokenHash: hashSecret(req.token) });
      return {};
    },

    async deleteUserSessions(_req, ctx) {
      // Every session of the caller, whichever browser holds it: the next request of each is refused.
      const deleted = await fork().nativeDelete(SessionEntity, { userId: requireCaller(ctx) });
      return { deleted };
    },
  };
}
