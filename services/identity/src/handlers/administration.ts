// The installation's administration: its administrator (the first account made) and the operator see every
// user and workspace and set plans, which nobody inside a workspace may (an owner would give themselves Pro).
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { actorOf, operator } from "@formsvc/platform/caller.ts";
import { keysetAfter, pageOf, pageRequest } from "@formsvc/platform/paging.ts";
import { MembershipEntity } from "../entities/membership.ts";
import { UserEntity } from "../entities/user.ts";
import { WorkspaceEntity } from "../entities/workspace.ts";
import { planFromProto, toUserMessage, toWorkspaceMessage, type IdentityContext, type IdentityHandlers } from "./context.ts";

/** The most rows one page of the administrator's lists holds. */
const maxPage = 100;

const notTheAdministrator = () => new ConnectError("only the installation's administrator may do this", Code.PermissionDenied);
const plansAreTheInstallations = () => new ConnectError("plans are set by whoever runs this installation", Code.PermissionDenied);

type AdministrationHandlers = Pick<IdentityHandlers, "setPlan" | "listAllUsers" | "listAllWorkspaces">;

export function administrationHandlers({ fork, table, anyWorkspace }: IdentityContext): AdministrationHandlers {
  /** Passes the operator and the administrator; `refused` (PERMISSION_DENIED) for anyone else. */
  async function requireAdministrator(em: EntityManager, ctx: HandlerContext, refused = notTheAdministrator): Promise<void> {
    const actor = actorOf(ctx);
    if (actor === operator) return;
    const user = await em.findOne(UserEntity, { id: actor }, { fields: ["administrator"] });
    if (!user?.administrator) throw refused();
  }

  /** The page a request asks for: `limit` 0 is a whole page, never every row. */
  const adminPage = (req: { page: number; limit: number; cursor: string }) => {
    if (req.limit < 0 || req.limit > maxPage) throw new ConnectError(`limit must be between 1 and ${maxPage}`, Code.InvalidArgument);
    return pageRequest({ ...req, limit: req.limit || maxPage });
  };

  /** How many memberships each of `ids` (users or workspaces, by `column`) has. */
  async function countsBy(em: EntityManager, column: "user_id" | "workspace_id", ids: string[]): Promise<Map<string, number>> {
    if (!ids.length) return new Map();
    const rows = await em.execute<{ id: string; n: string }[]>(
      `select "${column}" as "id", count(*) as "n" from ${table(MembershipEntity)} where "${column}" in (${ids.map(() => "?").join(", ")}) group by "${column}"`,
      ids,
    );
    return new Map(rows.map((r) => [r.id, Number(r.n)]));
  }

  return {
    async setPlan(req, ctx) {
      const plan = planFromProto(req.plan, true);
      const em = fork();
      // Plans are the installation's: an owner who could set one would give themselves Pro. A failure to read the
      // caller stays what it is, not a refusal.
      await requireAdministrator(em, ctx, plansAreTheInstallations);
      const workspace = await anyWorkspace(em, req.workspaceId);
      workspace.plan = plan;
      await em.flush();
      return { workspace: toWorkspaceMessage(workspace, undefined) };
    },

    async listAllUsers(req, ctx) {
      const em = fork();
      await requireAdministrator(em, ctx);
      const window = adminPage(req);
      const rows = await em.find(UserEntity, window.after ? keysetAfter(table(UserEntity), "created_at", "asc", window.after) : {}, {
        orderBy: [{ createdAt: "asc" }, { id: "asc" }],
        offset: window.offset,
        limit: window.fetch,
      });
      const page = pageOf(rows, window.limit, (u) => u.createdAt);
      const counts = await countsBy(em, "user_id", page.items.map((u) => u.id));
      return {
        users: page.items.map((u) => ({ user: toUserMessage(u), workspaceCount: counts.get(u.id) ?? 0 })),
        hasMore: page.hasMore,
        nextCursor: page.nextCursor,
      };
    },

    async listAllWorkspaces(req, ctx) {
      const em = fork();
      await requireAdministrator(em, ctx);
      const window = adminPage(req);
      const rows = await em.find(WorkspaceEntity, window.after ? keysetAfter(table(WorkspaceEntity), "created_at", "asc", window.after) : {}, {
        orderBy: [{ createdAt: "asc" }, { id: "asc" }],
        offset: window.offset,
        limit: window.fetch,
      });
      const page = pageOf(rows, window.limit, (w) => w.createdAt);
      const counts = await countsBy(em, "workspace_id", page.items.map((w) => w.id));
      const owners = page.items.length ? await em.find(UserEntity, { id: { $in: [...new Set(page.items.map((w) => w.ownerId))] } }, { fields: ["email"] }) : [];
      const ownerEmails = new Map(owners.map((u) => [u.id, u.email]));
      return {
        workspaces: page.items.map((w) => ({ workspace: toWorkspaceMessage(w), ownerEmail: ownerEmails.get(w.ownerId) ?? "", memberCount: counts.get(w.id) ?? 0 })),
        hasMore: page.hasMore,
        nextCursor: page.nextCursor,
      };
    },
  };
}
