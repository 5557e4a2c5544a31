import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { z } from "zod";
import { appWorkspaceJson, memberJson, userJson, workspaceJson } from "@formsvc/api-records";
import { workspaceSchema } from "@formsvc/api-records/schemas";
import { Plan, Role, type IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { HttpError } from "../http-errors.ts";
import { cursorPagingQuerySchema, envelope, envelopeOf, items } from "./paging.ts";
import { defineRoute, idParamsSchema, noQuery, Reply } from "./route.ts";

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
    defineRoute({
      method: "post",
      path: "/workspaces/:id/members",
      params: idParamsSchema,
      body: inviteBodySchema,
      success: { status: 201 },
      handle: async ({ params, body, asUser }) => {
        try {
          const { user } = await identity.addMember({ workspaceId: params.id, email: body.email, role: roleOf(body.role) }, asUser);
          return { user: userJson(user!) };
        } catch (err) {
          const e = ConnectError.from(err);
          // Also an account whose email was never verified: only a proven address joins at once.
          if (e.code === Code.NotFound && e.rawMessage === "user not found") {
            throw new HttpError(404, "no account has this email verified yet: invite them by email (POST /workspaces/:id/invites)");
          }
          throw err;
        }
      },
      app: {},
    }),
    // Adds an existing account whose email is verified at once (201, {user}); mails anyone else a link to sign
    // up into the workspace, or to join it signed in (202; the same for a never-verified account as for none).
    defineRoute({
      method: "post",
      path: "/workspaces/:id/invites",
      params: idParamsSchema,
      body: inviteBodySchema,
      success: { status: 201 },
      handle: async ({ params, body, asUser }) => {
        const { user, invited } = await identity.inviteMember({ workspaceId: params.id, email: body.email, role: roleOf(body.role) }, asUser);
        return invited ? new Reply(202, { invited: true, email: body.email.toLowerCase() }) : { invited: false, user: userJson(user!) };
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
