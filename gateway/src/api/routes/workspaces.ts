import type { Client } from "@connectrpc/connect";
import { asCaller } from "@formsvc/platform/caller.ts";
import { workspaceJson } from "@formsvc/api-records";
import type { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { defineRoute } from "../route-table.ts";
import { envelopeOf, idParamsSchema, pagingQuerySchema, workspaceSchema } from "../schemas.ts";

export function workspaceRoutes(identity: Client<typeof IdentityService>) {
  return [
    defineRoute({
      method: "get",
      path: "/workspaces",
      operationId: "listWorkspaces",
      tag: "Workspaces",
      summary: "Workspaces the caller is a member of",
      query: pagingQuerySchema,
      success: { status: 200, description: "A page of workspaces", schema: envelopeOf(workspaceSchema, "WorkspacePage") },
      errors: [400],
      handle: async ({ query, caller }) => {
        const { workspaces, hasMore } = await identity.listWorkspaces(query, asCaller(caller.userId));
        return { items: workspaces.map(workspaceJson), page: query.page, limit: query.limit, hasMore };
      },
    }),
    defineRoute({
      method: "get",
      path: "/workspaces/:id",
      operationId: "getWorkspace",
      tag: "Workspaces",
      summary: "One workspace",
      params: idParamsSchema,
      success: { status: 200, description: "The workspace", schema: workspaceSchema },
      errors: [404],
      handle: async ({ params, caller }) =>
        workspaceJson((await identity.getWorkspace({ workspaceId: params.id }, asCaller(caller.userId))).workspace!),
    }),
  ];
}
