// Workspaces and their members: creating, listing, roles, removing, plans (the operator's).
import { Code, ConnectError } from "@connectrpc/connect";
import { actorOf, operator, requireCaller } from "@formsvc/platform/caller.ts";
import { keysetAfter, pageOf, pageRequest } from "@formsvc/platform/paging.ts";
import { MembershipEntity, type RoleName } from "../entities/membership.ts";
import { UserEntity } from "../entities/user.ts";
import { WorkspaceEntity, type PlanName, type Workspace } from "../entities/workspace.ts";
import {
  entitlementsOf,
  grantableRole,
  memberNotFound,
  normaliseEmail,
  planFromProto,
  toMemberMessage,
  toUserMessage,
  toWorkspaceMessage,
  validateName,
  workspaceNotFound,
  type IdentityContext,
  type IdentityHandlers,
} from "./context.ts";

type WorkspaceHandlers = Pick<
  IdentityHandlers,
  | "createWorkspace"
  | "addMember"
  | "setMemberRole"
  | "removeMember"
  | "listMembers"
  | "listWorkspaces"
  | "getWorkspace"
  | "getWorkspaceEntitlements"
>;

export function workspaceHandlers(c: IdentityContext): WorkspaceHandlers {
  const { fork, table, callerUser, findUserByEmail, memberWorkspace, anyWorkspace, managedWorkspace, addMembership, newWorkspace } = c;
  return {
    async createWorkspace(req, ctx) {
      const name = req.name.trim();
      validateName("name", name);
      const plan = planFromProto(req.plan, false);
      const actor = actorOf(ctx);
      if (actor !== operator) {
        // A person makes free workspaces only; plans change by the operator.
        if (plan !== "free") throw new ConnectError("a workspace you create starts on the free plan", Code.PermissionDenied);
        const em = fork();
        const workspace = newWorkspace(em, await callerUser(em, actor), name, plan, false);
        await em.flush();
        return { workspace: toWorkspaceMessage(workspace, "owner") };
      }
      if (!req.ownerEmail.trim()) throw new ConnectError("owner_email is required", Code.InvalidArgument);
      const em = fork();
      const owner = await em.findOne(UserEntity, { email: normaliseEmail(req.ownerEmail) });
      if (!owner) throw new ConnectError("owner not found", Code.NotFound);
      const workspace = newWorkspace(em, owner, name, plan, false);
      await em.flush();
      return { workspace: toWorkspaceMessage(workspace) };
    },

    async addMember(req, ctx) {
      // A person joins only by accepting an invitation; the operator (the CLI's `members add`) adds at once.
      if (actorOf(ctx) !== operator) throw new ConnectError("members join by accepting an invitation: invite them", Code.PermissionDenied);
      if (!req.email.trim()) throw new ConnectError("email is required", Code.InvalidArgument);
      const role = grantableRole(req.role);
      const em = fork();
      const workspace = await anyWorkspace(em, req.workspaceId);
      const user = await findUserByEmail(em, req.email);
      await addMembership(em, workspace, user, role);
      return { workspace: toWorkspaceMessage(workspace), user: toUserMessage(user) };
    },

    async setMemberRole(req, ctx) {
      const role = grantableRole(req.role);
      const em = fork();
      const workspace = await managedWorkspace(em, ctx, req.workspaceId);
      const membership = req.userId ? await em.findOne(MembershipEntity, { workspaceId: workspace.id, userId: req.userId }) : null;
      if (!membership) throw memberNotFound();
      if (membership.role === "owner") throw new ConnectError("the owner's role does not change", Code.FailedPrecondition);
      membership.role = role;
      await em.flush();
      const user = await em.findOne(UserEntity, { id: membership.userId });
      if (!user) throw memberNotFound();
      return { member: toMemberMessage(membership, user) };
    },

    async removeMember(req, ctx) {
      const em = fork();
      const actor = actorOf(ctx);
      // Anyone but the owner may leave; removing someone else takes the owner or an admin.
      const leaving = actor === req.userId;
      const workspace = leaving ? (await memberWorkspace(em, actor, req.workspaceId)).workspace : await managedWorkspace(em, ctx, req.workspaceId);
      const membership = req.userId ? await em.findOne(MembershipEntity, { workspaceId: workspace.id, userId: req.userId }) : null;
      if (!membership) throw memberNotFound();
      if (membership.role === "owner") throw new ConnectError("the owner cannot be removed from their workspace", Code.FailedPrecondition);
      // Keys and sessions act as their person; with the membership gone, every later call on this
      // workspace is refused (each one reads the membership), whatever key or session it carries.
      await em.nativeDelete(MembershipEntity, { id: membership.id });
      return {};
    },

    async listMembers(req, ctx) {
      const actor = actorOf(ctx);
      const em = fork();
      // The operator (also submissions, for whom to notify of a response): any workspace.
      const workspace = actor === operator ? await anyWorkspace(em, req.workspaceId) : (await memberWorkspace(em, actor, req.workspaceId)).workspace;
      const memberships = await em.find(MembershipEntity, { workspaceId: workspace.id }, { orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
      const users = await em.find(UserEntity, { id: { $in: memberships.map((m) => m.userId) } });
      const byId = new Map(users.map((u) => [u.id, u]));
      const members = memberships
        .filter((m) => byId.has(m.userId))
        .sort((a, b) => Number(b.role === "owner") - Number(a.role === "owner"))
        .map((m) => toMemberMessage(m, byId.get(m.userId)!));
      return { members };
    },


    async listWorkspaces(req, ctx) {
      const caller = requireCaller(ctx);
      const em = fork();
      const memberships = await em.find(MembershipEntity, { userId: caller }, { fields: ["workspaceId", "role"] });
      const ids = memberships.map((m) => m.workspaceId);
      const roles = new Map(memberships.map((m) => [m.workspaceId, m.role]));
      const asMember = (w: Workspace) => toWorkspaceMessage(w, roles.get(w.id));
      const orderBy = [{ createdAt: "asc" }, { id: "asc" }] as const;
      if (req.limit === 0) {
        const page = req.page || 1;
        if (!Number.isInteger(page) || page < 1) {
          throw new ConnectError("page must be an integer of at least 1", Code.InvalidArgument);
        }
        // Every workspace is on page 1.
        const rows = page === 1 && ids.length ? await em.find(WorkspaceEntity, { id: { $in: ids } }, { orderBy: [...orderBy] }) : [];
        return { workspaces: rows.map(asMember), hasMore: false };
      }
      const window = pageRequest(req);
      const after = window.after ? [keysetAfter(table(WorkspaceEntity), "created_at", "asc", window.after)] : [];
      const rows = ids.length
        ? await em.find(
            WorkspaceEntity,
            { $and: [{ id: { $in: ids } }, ...after] },
            { orderBy: [...orderBy], offset: window.offset, limit: window.fetch },
          )
        : [];
      const { items, hasMore, nextCursor } = pageOf(rows, window.limit, (w) => w.createdAt);
      return { workspaces: items.map(asMember), hasMore, nextCursor };
    },

    async getWorkspace(req, ctx) {
      const caller = requireCaller(ctx);
      if (!req.workspaceId) throw workspaceNotFound();
      // On every authenticated API request (forms checks membership, and the caller's role, through it):
      // one read-only query, the membership joined to its workspace, without the ORM's unit of work.
      const [row] = await fork().execute<WorkspaceRow[]>(
        `select w.id, w.name, w.plan, w.owner_id, w.personal, w.created_at, m.role
           from ${table(WorkspaceEntity)} w join ${table(MembershipEntity)} m on m.workspace_id = w.id
          where w.id = ? and m.user_id = ?`,
        [req.workspaceId, caller],
      );
      if (!row) throw workspaceNotFound();
      return {
        workspace: toWorkspaceMessage({
          id: row.id,
          name: row.name,
          plan: row.plan,
          ownerId: row.owner_id,
          personal: row.personal,
          createdAt: new Date(row.created_at),
        } as Workspace, row.role),
      };
    },

    async getWorkspaceEntitlements(req) {
      // Internal: no caller and no membership check; only the entitlements leave identity.
      const workspace = req.workspaceId ? await fork().findOne(WorkspaceEntity, { id: req.workspaceId }) : null;
      if (!workspace) throw workspaceNotFound();
      return { entitlements: entitlementsOf(workspace.plan) };
    },
  };
}

/** A row of getWorkspace's query. */
interface WorkspaceRow {
  id: string;
  name: string;
  plan: PlanName;
  owner_id: string;
  personal: boolean;
  created_at: Date | string;
  role: RoleName;
}
