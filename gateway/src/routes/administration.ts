// The installation's administration in the app (/app/api/admin): every user and workspace, and plans. Only
// the administrator (the first account made) gets answers; identity refuses everyone else with a 403.
import type { Client } from "@connectrpc/connect";
import { z } from "zod";
import { planFromName, sessionUserJson, workspaceJson } from "@formsvc/api-records";
import type { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { cursorPagingQuerySchema, envelope } from "./paging.ts";
import { defineRoute, idParamsSchema } from "./route.ts";

export function administrationRoutes(identity: Client<typeof IdentityService>) {
  return [
    defineRoute({
      method: "get",
      path: "/admin/users",
      query: cursorPagingQuerySchema,
      success: { status: 200 },
      handle: ({ query, asUser }) => identity.listAllUsers(query, asUser),
      answer: (page, { query }) =>
        envelope(
          page.users.map((u) => ({ ...sessionUserJson(u.user!), workspaceCount: u.workspaceCount })),
          query,
          page,
        ),
      app: {},
    }),
    defineRoute({
      method: "get",
      path: "/admin/workspaces",
      query: cursorPagingQuerySchema,
      success: { status: 200 },
      handle: ({ query, asUser }) => identity.listAllWorkspaces(query, asUser),
      answer: (page, { query }) =>
        envelope(
          page.workspaces.map((w) => ({ ...workspaceJson(w.workspace!), ownerEmail: w.ownerEmail, memberCount: w.memberCount })),
          query,
          page,
        ),
      app: {},
    }),
    defineRoute({
      method: "put",
      path: "/admin/workspaces/:id/plan",
      params: idParamsSchema,
      body: z.strictObject({ plan: z.enum(["free", "pro"]) }),
      success: { status: 200 },
      handle: async ({ params, body, asUser }) => workspaceJson((await identity.setPlan({ workspaceId: params.id, plan: planFromName(body.plan) }, asUser)).workspace!),
      app: {},
    }),
  ];
}
