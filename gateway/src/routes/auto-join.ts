// A workspace's auto-join domains (the app's workspace settings): the people of these email domains join it as
// members on their first sign-in through OpenID Connect. The owner sets them; the owner and admins read them.
import type { Client } from "@connectrpc/connect";
import { z } from "zod";
import type { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { defineRoute, idParamsSchema } from "./route.ts";

const domainsBodySchema = z.strictObject({ domains: z.array(z.string().max(253)).max(100) });

export function autoJoinRoutes(identity: Client<typeof IdentityService>) {
  return [
    defineRoute({
      method: "get",
      path: "/workspaces/:id/auto-join-domains",
      params: idParamsSchema,
      success: { status: 200 },
      handle: async ({ params, asUser }) => ({ domains: (await identity.getAutoJoinDomains({ workspaceId: params.id }, asUser)).domains }),
      app: {},
    }),
    defineRoute({
      method: "put",
      path: "/workspaces/:id/auto-join-domains",
      params: idParamsSchema,
      body: domainsBodySchema,
      success: { status: 200 },
      handle: async ({ params, body, asUser }) => ({
        domains: (await identity.setAutoJoinDomains({ workspaceId: params.id, domains: body.domains }, asUser)).domains,
      }),
      app: {},
    }),
  ];
}
