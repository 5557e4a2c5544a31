import type { Client } from "@connectrpc/connect";
import { z } from "zod";
import { appWorkspaceJson, memberJson, pendingInvitationJson, workspaceJson } from "@formsvc/api-records";
import { workspaceSchema } from "@formsvc/api-records/schemas";
import { Role, type IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { cursorPagingQuerySchema, envelope, envelopeOf, items } from "./paging.ts";
import { defineRoute, idParamsSchema, noQuery } from "./route.ts";

export const emailSchema = z.string().trim().min(1, "is required").max(254);
/** A name the app gives a new workspace or API key. */
export const nameBodySchema = z.strictObject({ name: z.string().trim().min(1, "is required").max(100) });
const roleNameSchema = z.enum(["admin", "member"]);
const inviteBodySchema = z.strictObject({ email: emailSchema, role: roleNameSchema.optional() });
const memberParamsSchema = idParamsSchema.extend({ userId: z.string() });
const roleOf = (name: "admin" | "member" | undefined) => (name === "admin" ? Role.ADMIN : Role.MEMBER);

export function workspaceRoutes(identity: Client<typeof IdentityService>) {
  return [
    defineRoute({
      method: "get",
      path: "/workspaces",
      query: cursorPagingQuerySchema,
      success: { status: 200, description: "A page of workspaces", schema: envelopeOf(workspaceSchema, "WorkspacePage") },
      handle: ({ query, asUser }) => identity.listWorkspaces(query, asUser),
      answer: (page, { query }) => envelope(page.workspaces.map(workspaceJson), query, page),
      api: {
        operationId: "listWorkspaces",
        tag: "Workspaces",
        summary: "Workspaces the caller is a member of",
        description: "Every workspace the key's person is a member of, their own personal one included, with plan and entitlements.",
        errors: [],
      },
      // The app has every workspace of the person at once (limit 0), each with their role in it.
      app: {
        query: noQuery,
        input: () => ({ query: { limit: 0 } }),
        answer: ({ workspaces }, { userId }) => items(workspaces.map((w) => appWorkspaceJson(w, userId))),
      },
    }),
    defineRoute({
      method: "post",
      path: "/workspaces",
      body: nameBodySchema,
      success: { status: 201 },
      handle: async ({ body, userId, asUser }) => appWorkspaceJson((await identity.createWorkspace({ name: body.name }, asUser)).workspace!, userId),
      app: {},
    }),
    // Its owner and admins rename it (a plain member gets 403).
    defineRoute({
      method: "patch",
      path: "/workspaces/:id",
      params: idParamsSchema,
      body: nameBodySchema,
      success: { status: 200 },
      handle: async ({ params, body, userId, asUser }) =>
        appWorkspaceJson((await identity.renameWorkspace({ workspaceId: params.id, name: body.name }, asUser)).workspace!, userId),
      app: {},
    }),
    defineRoute({
      method: "get",
      path: "/workspaces/:id",
      params: idParamsSchema,
      success: { status: 200, description: "The workspace", schema: workspaceSchema },
      handle: async ({ params, asUser }) => workspaceJson((await identity.getWorkspace({ workspaceId: params.id }, asUser)).workspace!),
      api: {
        operationId: "getWorkspace",
        tag: "Workspaces",
        summary: "One workspace",
        description: "A workspace the caller is a member of; any other id is a 404.",
        errors: [],
      },
    }),
    defineRoute({
      method: "get",
      path: "/workspaces/:id/members",
      params: idParamsSchema,
      success: { status: 200 },
      handle: async ({ params, asUser }) => items((await identity.listMembers({ workspaceId: params.id }, asUser)).members.map(memberJson)),
      app: {},
    }),
    // Every invitation waits for its person to accept it (mailed link, or the app's list of their invitations);
    // the answer is the same whether or not the email has an account.
    defineRoute({
      method: "post",
      path: "/workspaces/:id/invites",
      params: idParamsSchema,
      body: inviteBodySchema,
      success: { status: 201 },
      handle: async ({ params, body, asUser }) =>
        pendingInvitationJson((await identity.inviteMember({ workspaceId: params.id, email: body.email, role: roleOf(body.role) }, asUser)).invitation!),
      app: {},
    }),
    defineRoute({
      method: "get",
      path: "/workspaces/:id/invites",
      params: idParamsSchema,
      success: { status: 200 },
      handle: async ({ params, asUser }) => items((await identity.listInvitations({ workspaceId: params.id }, asUser)).invitations.map(pendingInvitationJson)),
      app: {},
    }),
    defineRoute({
      method: "delete",
      path: "/workspaces/:id/invites/:invitationId",
      params: idParamsSchema.extend({ invitationId: z.string() }),
      success: { status: 204 },
      handle: async ({ params, asUser }) => {
        await identity.revokeInvitation({ workspaceId: params.id, invitationId: params.invitationId }, asUser);
      },
      app: {},
    }),
    // The signed-in person's own invitations (once their address is verified), accepted here without the mail.
    defineRoute({
      method: "get",
      path: "/invitations",
      success: { status: 200 },
      handle: async ({ asUser }) => items((await identity.listMyInvitations({}, asUser)).invitations.map(pendingInvitationJson)),
      app: {},
    }),
    defineRoute({
      method: "post",
      path: "/invitations/:id/accept",
      params: idParamsSchema,
      success: { status: 200 },
      handle: async ({ params, asUser, userId }) => {
        const { workspace } = await identity.acceptInvitation({ invitationId: params.id }, asUser);
        return { workspace: appWorkspaceJson(workspace!, userId) };
      },
      app: {},
    }),
    defineRoute({
      method: "patch",
      path: "/workspaces/:id/members/:userId",
      params: memberParamsSchema,
      body: z.strictObject({ role: roleNameSchema }),
      success: { status: 200 },
      handle: async ({ params, body, asUser }) =>
        memberJson((await identity.setMemberRole({ workspaceId: params.id, userId: params.userId, role: roleOf(body.role) }, asUser)).member!),
      app: {},
    }),
    defineRoute({
      method: "delete",
      path: "/workspaces/:id/members/:userId",
      params: memberParamsSchema,
      success: { status: 204 },
      handle: async ({ params, asUser }) => {
        await identity.removeMember({ workspaceId: params.id, userId: params.userId }, asUser);
      },
      app: {},
    }),
  ];
}
