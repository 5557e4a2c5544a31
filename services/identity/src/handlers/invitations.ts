// Invitations: an owner or admin mails someone a link to join a workspace, and nobody joins without accepting
// it. Pending ones are listed and revoked by the workspace's managers and shown to the invited person once their
// address is verified; each dies with its inviter's right to manage members, and a few limits (counted from the
// links themselves) keep anyone from flooding an inbox.
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { UniqueConstraintViolationException } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import { actorOf, callerOf, operator, requireCaller } from "@formsvc/platform/caller.ts";
import { InvitationSchema, type Invitation } from "@formsvc/proto/identity/v1/identity_pb.js";
import { hashPassword, passwordProblem } from "../passwords.ts";
import { invitationMail } from "../mails.ts";
import { MembershipEntity } from "../entities/membership.ts";
import { UserEntity, type User } from "../entities/user.ts";
import { WorkspaceEntity } from "../entities/workspace.ts";
import {
  accountExists,
  grantableRole,
  invalidLink,
  invitedRole,
  normaliseEmail,
  operatorInviter,
  roleToProto,
  toUserMessage,
  toWorkspaceMessage,
  validateEmail,
  validateName,
  type EmailLinkRow,
  type IdentityContext,
  type IdentityHandlers,
  type LinkRef,
} from "./context.ts";

const hour = 60 * 60 * 1000;

/**
 * How many invitations an hour may go out, as data: each counts the invitation links written in the last hour
 * that match it. One email gets a few from a workspace (a resend or two) and not many more from all of them
 * (someone could make workspaces to send from); a workspace invites a whole team, not a mailing list.
 */
const invitationLimits = [
  { limit: 3, counts: "pair", to: "to one email from this workspace" },
  { limit: 10, counts: "email", to: "to one email" },
  { limit: 100, counts: "workspace", to: "from one workspace" },
] as const;

/** The most pending invitations one list shows (100 an hour for the 7 days a link lasts would be 16,800). */
const maxListed = 1000;

const invitationNotFound = () => new ConnectError("invitation not found", Code.NotFound);

type InvitationHandlers = Pick<
  IdentityHandlers,
  "inviteMember" | "listInvitations" | "revokeInvitation" | "listMyInvitations" | "getInvitation" | "acceptInvitation"
>;

/** A pending invitation as listed: the link's row with its workspace's and inviter's names. */
interface InvitationRow extends EmailLinkRow {
  workspace_name: string;
  inviter_name: string | null;
}

export function invitationHandlers(c: IdentityContext): InvitationHandlers {
  const {
    now,
    fork,
    table,
    linksTable,
    linkColumns,
    usableLink,
    mailLink,
    useLink,
    peekLink,
    managedWorkspace,
    callerUser,
    inTransaction,
    newUser,
    addMembership,
    admitAccount,
    firstAccountAdministers,
  } = c;

  /** RESOURCE_EXHAUSTED when one more invitation of `email` from `workspaceId` would pass a limit. */
  async function admitInvitation(em: EntityManager, workspaceId: string, email: string): Promise<void> {
    const [counts] = await em.execute<Array<Record<(typeof invitationLimits)[number]["counts"], string>>>(
      `select count(*) filter (where "email" = ? and "workspace_id" = ?) as "pair",
              count(*) filter (where "email" = ?) as "email",
              count(*) filter (where "workspace_id" = ?) as "workspace"
         from ${linksTable}
        where "purpose" = 'invitation' and "created_at" > ? and ("email" = ? or "workspace_id" = ?)`,
      [email, workspaceId, email, workspaceId, new Date(now().getTime() - hour), email, workspaceId],
    );
    for (const { limit, counts: which, to } of invitationLimits) {
      if (Number(counts![which]) >= limit) {
        throw new ConnectError(`too many invitations: at most ${limit} an hour ${to}; try again later`, Code.ResourceExhausted);
      }
    }
  }

  /** Pending invitations matching `where` (on the link, alias l), newest first, with their names. */
  async function pendingInvitations(em: EntityManager, where: string, params: unknown[]): Promise<Invitation[]> {
    const usable = usableLink(now());
    const rows = await em.execute<InvitationRow[]>(
      `select ${linkColumns}, w."name" as "workspace_name", u."name" as "inviter_name"
         from ${linksTable} l
         join ${table(WorkspaceEntity)} w on w."id" = l."workspace_id"
         left join ${table(UserEntity)} u on u."id" = l."invited_by"
        where l."purpose" = 'invitation' and ${where} and ${usable.sql}
        order by l."created_at" desc, l."id" desc
        limit ${maxListed}`,
      [...params, ...usable.params],
    );
    return rows.map(toInvitationMessage);
  }

  return {
    async inviteMember(req, ctx) {
      const email = normaliseEmail(req.email);
      validateEmail(email);
      const role = grantableRole(req.role);
      const em = fork();
      const workspace = await managedWorkspace(em, ctx, req.workspaceId);
      // Whether or not the address has an account, so the answer tells nothing of it.
      admitAccount(email, "invitation");
      // A member's email is on the members list already, so saying so tells nothing new; whether anyone else has
      // an account is never told: they all get the same mail and the same answer.
      const member = await em.execute<unknown[]>(
        `select 1 from ${table(MembershipEntity)} m join ${table(UserEntity)} u on u."id" = m."user_id" where m."workspace_id" = ? and u."email" = ?`,
        [workspace.id, email],
      );
      if (member.length) throw new ConnectError("this person is a member of the workspace already", Code.FailedPrecondition);
      const actor = actorOf(ctx);
      const inviter = actor === operator ? undefined : await callerUser(em, actor);
      const inviterName = inviter?.name ?? operatorInviter;
      const invitation = await inTransaction(async (tx) => {
        // One workspace's invitations counted under its lock, so racing requests cannot pass a limit together.
        await tx.execute(`select pg_advisory_xact_lock(hashtext(?))`, [`invitations:${workspace.id}`]);
        await admitInvitation(tx, workspace.id, email);
        // A newer invitation replaces the older one: its link stops working, and the list shows one.
        await tx.execute(
          `update ${linksTable} set "used_at" = ? where "purpose" = 'invitation' and "workspace_id" = ? and "email" = ? and "used_at" is null`,
          [now(), workspace.id, email],
          "run",
        );
        const link = await mailLink(tx, "invitation", { email, workspaceId: workspace.id, role, invitedBy: inviter?.id }, (url) =>
          invitationMail(email, inviterName, workspace.name, url),
        );
        return create(InvitationSchema, {
          id: link.id,
          email,
          workspaceId: workspace.id,
          workspaceName: workspace.name,
          role: roleToProto(role),
          inviterName,
          createdAt: timestampFromDate(link.createdAt),
          expiresAt: timestampFromDate(link.expiresAt),
        });
      });
      return { invited: true, invitation };
    },

    async listInvitations(req, ctx) {
      const em = fork();
      const workspace = await managedWorkspace(em, ctx, req.workspaceId);
      return { invitations: await pendingInvitations(em, `l."workspace_id" = ?`, [workspace.id]) };
    },

    async revokeInvitation(req, ctx) {
      const em = fork();
      const workspace = await managedWorkspace(em, ctx, req.workspaceId);
      if (!req.invitationId) throw invitationNotFound();
      const usable = usableLink(now());
      const revoked = await em.execute<unknown[]>(
        `update ${linksTable} l set "used_at" = ?
          where l."id" = ? and l."workspace_id" = ? and l."purpose" = 'invitation' and ${usable.sql} returning l."id"`,
        [now(), req.invitationId, workspace.id, ...usable.params],
      );
      if (!revoked.length) throw invitationNotFound();
      return {};
    },

    async listMyInvitations(_req, ctx) {
      const em = fork();
      const user = await callerUser(em, requireCaller(ctx));
      // Until the address is proven, invitations to it may be meant for someone else.
      if (!user.emailVerifiedAt) return { invitations: [] };
      const notMember = `not exists (select 1 from ${table(MembershipEntity)} m where m."workspace_id" = l."workspace_id" and m."user_id" = ?)`;
      return { invitations: await pendingInvitations(em, `l."email" = ? and ${notMember}`, [user.email, user.id]) };
    },

    async getInvitation(req) {
      const em = fork();
      const link = await peekLink(em, "invitation", { token: req.token });
      const workspace = link?.workspace_id ? await em.findOne(WorkspaceEntity, { id: link.workspace_id }) : null;
      if (!link || !workspace) throw invalidLink();
      const inviter = link.invited_by ? await em.findOne(UserEntity, { id: link.invited_by }) : null;
      return {
        email: link.email,
        workspaceName: workspace.name,
        inviterName: inviter?.name ?? operatorInviter,
        role: roleToProto(invitedRole(link)),
        accountExists: Boolean(await em.findOne(UserEntity, { email: link.email })),
      };
    },

    async acceptInvitation(req, ctx) {
      const caller = callerOf(ctx);
      // The mailed token proves the address; an id alone does not, so it takes the signed-in, verified invitee.
      const ref: LinkRef = req.invitationId ? { id: req.invitationId } : { token: req.token };
      if ("id" in ref && !caller) throw invalidLink();
      const link = await peekLink(fork(), "invitation", ref);
      if (!link?.workspace_id) throw invalidLink();
      let signUp: { name: string; passwordHash: string } | undefined;
      if (!caller) {
        admitAccount(link.email, "invitation");
        const name = req.name.trim() || link.email.slice(0, link.email.indexOf("@"));
        validateName("name", name);
        if (await fork().findOne(UserEntity, { email: link.email })) throw accountExists();
        // A refused password leaves the link usable, so the person can try another.
        const problem = await passwordProblem(req.password, [link.email, name]);
        if (problem) throw new ConnectError(problem, Code.InvalidArgument);
        signUp = { name, passwordHash: await hashPassword(req.password) };
      }
      try {
        return await inTransaction(async (em) => {
          const used = await useLink(em, "invitation", ref);
          const workspace = used?.workspace_id ? await em.findOne(WorkspaceEntity, { id: used.workspace_id }) : null;
          if (!used || !workspace) throw invalidLink();
          let user: User;
          if (signUp) {
            user = newUser(em, used.email, signUp.name, "free", signUp.passwordHash).user;
          } else {
            user = await callerUser(em, caller!);
            if (user.email !== used.email) throw new ConnectError("this invitation is for another email address", Code.PermissionDenied);
            if ("id" in ref && !user.emailVerifiedAt) throw invalidLink();
          }
          // The link came to this address (or the address was verified already): it is verified.
          user.emailVerifiedAt ??= now();
          await em.flush();
          if (signUp) await firstAccountAdministers(em, user);
          const role = invitedRole(used);
          await addMembership(em, workspace, user, role);
          return { user: toUserMessage(user), workspace: toWorkspaceMessage(workspace, role) };
        }, false);
      } catch (err) {
        if (err instanceof UniqueConstraintViolationException) throw accountExists();
        throw err;
      }
    },
  };
}

function toInvitationMessage(row: InvitationRow): Invitation {
  return create(InvitationSchema, {
    id: row.id,
    email: row.email,
    workspaceId: row.workspace_id ?? "",
    workspaceName: row.workspace_name,
    role: roleToProto(invitedRole(row)),
    inviterName: row.inviter_name ?? operatorInviter,
    createdAt: timestampFromDate(new Date(row.created_at)),
    expiresAt: timestampFromDate(new Date(row.expires_at)),
  });
}
