import type { Client } from "@connectrpc/connect";
import { apiKeyJson } from "@formsvc/api-records";
import type { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { items } from "./paging.ts";
import { defineRoute, idParamsSchema, Reply } from "./route.ts";
import { nameBodySchema } from "./workspaces.ts";

/** The person's API keys, made and deleted in the app; a key is shown whole only when made. */
export function apiKeyRoutes(identity: Client<typeof IdentityService>) {
  return [
    defineRoute({
      method: "get",
      path: "/api-keys",
      success: { status: 200 },
      handle: async ({ asUser }) => items((await identity.listApiKeys({}, asUser)).apiKeys.map(apiKeyJson)),
      app: {},
    }),
    defineRoute({
      method: "post",
      path: "/api-keys",
      body: nameBodySchema,
      success: { status: 201 },
      handle: async ({ body, asUser }) => {
        const { apiKey, key } = await identity.createApiKey({ name: body.name }, asUser);
        return new Reply(201, { ...apiKeyJson(apiKey!), key }, { "Cache-Control": "no-store" });
      },
      app: {},
    }),
    defineRoute({
      method: "delete",
      path: "/api-keys/:id",
      params: idParamsSchema,
      success: { status: 204 },
      handle: async ({ params, asUser }) => {
        await identity.deleteApiKey({ id: params.id }, asUser);
      },
      app: {},
    }),
  ];
}
