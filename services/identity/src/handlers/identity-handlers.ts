// The identity service: its handlers, by concern in the files beside this one, over the helpers they share
// (context.ts), and the route that mounts them.
import type { ConnectRouter } from "@connectrpc/connect";
import { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { accountHandlers } from "./accounts.ts";
import { administrationHandlers } from "./administration.ts";
import { auditHandlers } from "./audit.ts";
import { identityContext, type IdentityHandlerDeps, type IdentityHandlers } from "./context.ts";
import { idempotencyHandlers } from "./idempotency.ts";
import { invitationHandlers } from "./invitations.ts";
import { apiKeyHandlers } from "./keys.ts";
import { oidcHandlers } from "./oidc.ts";
import { sessionHandlers } from "./sessions.ts";
import { twoFactorHandlers } from "./two-factor.ts";
import { workspaceSettingsHandlers } from "./workspace-settings.ts";
import { workspaceHandlers } from "./workspaces.ts";

export type { IdentityHandlerDeps, IdentityHandlers } from "./context.ts";
export { lastUsedResolutionMs } from "./keys.ts";
export { sessionLifetimeMs } from "./sessions.ts";

export function createIdentityHandlers(deps: IdentityHandlerDeps): IdentityHandlers {
  const context = identityContext(deps);
  return {
    ...accountHandlers(context),
    ...sessionHandlers(context),
    ...apiKeyHandlers(context),
    ...workspaceHandlers(context),
    ...administrationHandlers(context),
    ...invitationHandlers(context),
    ...idempotencyHandlers(context),
    ...twoFactorHandlers(context),
    ...oidcHandlers(context),
    ...auditHandlers(context),
    ...workspaceSettingsHandlers(context),
  };
}

/** Mounts the identity service on a Connect router. */
export function routes(router: ConnectRouter, handlers: IdentityHandlers): ConnectRouter {
  return router.service(IdentityService, handlers);
}
