import type { Client } from "@connectrpc/connect";
import { asCaller } from "@formsvc/platform/caller.ts";
import { workspaceJson } from "@formsvc/api-records";
import type { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { defineRoute } from "../route-table.ts";
import { cursorPagingQuerySchema, envelope, envelopeOf, idParamsSchema, workspaceSchema } from "../schemas.ts";

export function workspaceRoutes(identity: Client<typeof IdentityService>) {
  return [
    defineRoute({
      method: "get",
      path: "/workspaces",
      operationId: "listWorkspaces",
      tag: "Workspaces",
      summary: "Workspaces the caller is a member of",
      description: "Every workspace the key's person is a member of, their own personal one included, with plan and entitlements.",
      query: cursorPagingQuerySchema,
      success: { status: 200, description: "A page of workspaces", schema: envelopeOf(workspaceSchema, "WorkspacePage") },
      errors: [],
      handle: async ({ query, caller }) => {
        const page = await identity.listWorkspaces(query, asCaller(caller.userId));
        return envelope(page.workspaces.map(workspaceJson), query, page);
      },
    }),
    defineRoute({
      method: "get",
      path: "/workspaces/:id",
      operationId: "getWorkspace",
      tag: "Workspaces",
      summary: "One workspace",
      description: "A workspace the caller is a member of; any other id is a 404.",
      params: idParamsSchema,
      success: { status: 200, description: "The workspace", schema: workspaceSchema },
      errors: [],
      handle: async ({ params, caller }) =>
        workspaceJson((await identity.getWorkspace({ workspaceId: params.id }, asCaller(caller.userId))).workspace!),
    }),
  ];
}
