// What every identity handler shares: its dependencies, the errors that must read the same everywhere (so a
// missing thing and another's thing answer alike), the lookups of callers and workspaces, the mailed links,
// validation, and the records as messages. The handlers themselves live by concern beside this file.
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import { qualifiedTable } from "@formsvc/platform/database.ts";
import { actorOf, operator } from "@formsvc/platform/caller.ts";
import { newId, randomToken } from "@formsvc/platform/ids.ts";
import { insertMailsSql, mailOutboxTable, type Mail } from "@formsvc/platform/mail.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { openSignUp, type SignUpPolicy } from "@formsvc/platform/config.ts";
import {
  ApiKeySchema,
  EntitlementsSchema,
  IdentityService,
  MemberSchema,
  Plan,
  Role,
  UserSchema,
  WorkspaceSchema,
  type ApiKey as ApiKeyMessage,
  type Entitlements,
  type User as UserMessage,
  type Workspace as WorkspaceMessage,
} from "@formsvc/proto/identity/v1/identity_pb.js";
import { hashSecret } from "../api-keys.ts";
import { signUpRefusal } from "../sign-up-policy.ts";
import type { ApiKeyCache } from "../api-key-cache.ts";
import { linkLifetimeMs, linkUrl, type LinkPurpose } from "../mails.ts";
import type { ApiKey } from "../entities/api-key.ts";
import { MembershipEntity, type Membership, type RoleName } from "../entities/membership.ts";
import { UserEntity, type User } from "../entities/user.ts";
import { WorkspaceEntity, type PlanName, type Workspace } from "../entities/workspace.ts";
import { productName } from "@formsvc/platform/product.ts";


export const maxNameLength = 100;
export const maxEmailLength = 254;
export const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface IdentityHandlerDeps {
  orm: MikroORM;
  /** The clock; tests move it. */
  now?: () => Date;
  /** PUBLIC_URL: where the links in mails lead. */
  publicUrl: string;
  /** Told when mail was written to the outbox, so it goes now rather than at the next poll. */
  mailWritten?: () => void;
  /** Verified keys held in memory; without it every AuthenticateApiKey reads the database. */
  apiKeyCache?: ApiKeyCache;
  /** Where work done after the answer (a reset link and its mail) reports a failure. */
  logger?: Logger;
  /** SIGNUP: who may make an account in the app; open when absent. */
  signUp?: SignUpPolicy;
  /** SECRET_KEY: seals the secrets of second factors (two-factor.ts); without it none can be enrolled. */
  secretKey?: string;
  /** AUDIT_LOG_STDOUT: takes each recorded audit event as one JSON line (without it, none is written). */
  auditLine?: (line: string) => void;
}

export type IdentityHandlers = ServiceImpl<typeof IdentityService>;

// One message for "missing" and "not yours", so existence is never confirmed.
export const workspaceNotFound = () => new ConnectError("workspace not found", Code.NotFound);
export const userNotFound = () => new ConnectError("user not found", Code.NotFound);
export const apiKeyNotFound = () => new ConnectError("API key not found", Code.NotFound);
export const invalidApiKey = () => new ConnectError("invalid API key", Code.Unauthenticated);
export const invalidSession = () => new ConnectError("invalid or expired session", Code.Unauthenticated);
const unknownCaller = () => new ConnectError("unknown caller", Code.Unauthenticated);
/** One answer for a link that is unknown, used or expired, so a guessed token learns nothing. */
export const invalidLink = () => new ConnectError("this link is not valid: it was used already, has expired or is unknown; ask for a new one", Code.InvalidArgument);
/** One answer for an unknown email, a user without a password and a wrong password. */
export const wrongCredentials = () => new ConnectError("email or password is wrong", Code.Unauthenticated);
const notAManager = () => new ConnectError("only the workspace's owner or an admin may manage its members", Code.PermissionDenied);
export const memberNotFound = () => new ConnectError("member not found", Code.NotFound);
export const accountExists = () => new ConnectError("an account has this email: sign in, then open the link again", Code.AlreadyExists);
/** Who invited, in invitations the operator made (the CLI). */
export const operatorInviter = `The ${productName} administrator`;

/** The roles that may manage a workspace's members (add, invite, remove, change roles). */
const managerRoles: readonly RoleName[] = ["owner", "admin"];

export type IdentityContext = ReturnType<typeof identityContext>;

/** The helpers the handlers share, bound to `deps`. */
export function identityContext(deps: IdentityHandlerDeps) {
  const now = deps.now ?? (() => new Date());
  const fork = (): EntityManager => deps.orm.em.fork();
  // Raw queries on the hot paths name their tables in the service's own schema.
  const table = (entity: Parameters<typeof qualifiedTable>[1]) => qualifiedTable(deps.orm, entity);

  /** The user a call is about: the caller, or for the operator the user of `email`. */
  async function subjectUser(em: EntityManager, ctx: HandlerContext, email: string): Promise<User> {
    const actor = actorOf(ctx);
    if (actor !== operator) return callerUser(em, actor);
    if (!email.trim()) throw new ConnectError("email is required", Code.InvalidArgument);
    const user = await em.findOne(UserEntity, { email: normaliseEmail(email) });
    if (!user) throw userNotFound();
    return user;
  }

  async function callerUser(em: EntityManager, callerId: string): Promise<User> {
    const user = await em.findOne(UserEntity, { id: callerId });
    if (!user) throw unknownCaller();
    return user;
  }

  async function findUserByEmail(em: EntityManager, email: string): Promise<User> {
    const user = await em.findOne(UserEntity, { email: normaliseEmail(email) });
    if (!user) throw userNotFound();
    return user;
  }

  /** The workspace and the caller's membership, when they are a member; the same NOT_FOUND as a missing one otherwise. */
  async function memberWorkspace(em: EntityManager, caller: string, workspaceId: string): Promise<{ workspace: Workspace; membership: Membership }> {
    if (!workspaceId) throw workspaceNotFound();
    const membership = await em.findOne(MembershipEntity, { workspaceId, userId: caller });
    if (!membership) throw workspaceNotFound();
    const workspace = await em.findOne(WorkspaceEntity, { id: workspaceId });
    if (!workspace) throw workspaceNotFound();
    return { workspace, membership };
  }

  /** Any workspace, for the operator's calls. */
  async function anyWorkspace(em: EntityManager, workspaceId: string): Promise<Workspace> {
    const workspace = workspaceId ? await em.findOne(WorkspaceEntity, { id: workspaceId }) : null;
    if (!workspace) throw workspaceNotFound();
    return workspace;
  }

  /**
   * The workspace a call changes: for a caller, one they are a member of in one of `roles` (NOT_FOUND
   * when not a member, PERMISSION_DENIED from `refused` for another role); for the operator, any.
   */
  async function workspaceAs(em: EntityManager, ctx: HandlerContext, workspaceId: string, roles: readonly RoleName[], refused: () => ConnectError): Promise<Workspace> {
    const actor = actorOf(ctx);
    if (actor === operator) return anyWorkspace(em, workspaceId);
    const { workspace, membership } = await memberWorkspace(em, actor, workspaceId);
    if (!roles.includes(membership.role)) throw refused();
    return workspace;
  }

  /** The workspace whose members a call manages (the owner's or an admin's). */
  const managedWorkspace = (em: EntityManager, ctx: HandlerContext, workspaceId: string) => workspaceAs(em, ctx, workspaceId, managerRoles, notAManager);

  /** Adds `user` to `workspace` as `role`; a member already keeps their role. */
  async function addMembership(em: EntityManager, workspace: Workspace, user: User, role: RoleName): Promise<void> {
    await em.execute(
      `insert into ${table(MembershipEntity)} ("id", "workspace_id", "user_id", "role", "created_at") values (?, ?, ?, ?, ?)
       on conflict ("workspace_id", "user_id") do nothing`,
      [newId(), workspace.id, user.id, role, now()],
      "run",
    );
  }

  /** A table of the service's schema that no entity maps (raw SQL only). */
  const schemaTable = (name: string) => `"${deps.orm.config.get("schema") ?? "public"}"."${name}"`;
  const linksTable = schemaTable("email_links");
  /**
   * A link (alias l) that can still be used: not used, not expired, and for an invitation, its inviter (when a
   * person, not the operator) may still manage the workspace's members: removed, or made a plain member,
   * their invitations die with their rights.
   */
  const usableLink = (at: Date): { sql: string; params: unknown[] } => ({
    sql: `l."used_at" is null and l."expires_at" > ?
          and (l."invited_by" is null or exists (
                select 1 from ${table(MembershipEntity)} m
                 where m."workspace_id" = l."workspace_id" and m."user_id" = l."invited_by" and m."role" in (${managerRoles.map(() => "?").join(", ")})))`,
    params: [at, ...managerRoles],
  });
  /** The link a request names: by its token (the mailed link) or by its id (a verified person's own invitations). */
  const linkMatch = (ref: LinkRef): { sql: string; params: unknown[] } =>
    "token" in ref ? { sql: `l."token_hash" = ?`, params: [hashSecret(ref.token)] } : { sql: `l."id" = ?`, params: [ref.id] };
  const linkColumns = `l."id", l."email", l."user_id", l."workspace_id", l."role", l."invited_by", l."created_at", l."expires_at"`;

  /**
   * A new single-use link of `purpose` and the mail carrying it, written in one statement (in `em`'s
   * transaction, if it has one): only the token's hash is kept.
   */
  async function mailLink(
    em: EntityManager,
    purpose: LinkPurpose,
    link: { email: string; userId?: string; workspaceId?: string; role?: string; invitedBy?: string },
    mail: (url: string) => Mail,
  ): Promise<{ id: string; createdAt: Date; expiresAt: Date }> {
    const token = randomToken(32);
    const id = newId();
    const createdAt = now();
    const expiresAt = new Date(createdAt.getTime() + linkLifetimeMs[purpose]);
    const outbox = insertMailsSql(mailOutboxTable(deps.orm), [mail(linkUrl(deps.publicUrl, purpose, token))]);
    await em.execute(
      `with link as (insert into ${linksTable} ("id", "token_hash", "purpose", "email", "user_id", "workspace_id", "role", "invited_by", "created_at", "expires_at")
                     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)) ${outbox.sql}`,
      [id, hashSecret(token), purpose, link.email, link.userId ?? null, link.workspaceId ?? null, link.role ?? null, link.invitedBy ?? null, createdAt, expiresAt, ...outbox.params],
      "run",
    );
    return { id, createdAt, expiresAt };
  }

  /** Uses up a link of `purpose`: its row once, if it is still good; undefined otherwise. */
  async function useLink(em: EntityManager, purpose: LinkPurpose, ref: LinkRef): Promise<EmailLinkRow | undefined> {
    if (!("token" in ref ? ref.token : ref.id)) return undefined;
    const match = linkMatch(ref);
    const usable = usableLink(now());
    const [row] = await em.execute<EmailLinkRow[]>(
      `update ${linksTable} l set "used_at" = ? where ${match.sql} and l."purpose" = ? and ${usable.sql} returning ${linkColumns}`,
      [now(), ...match.params, purpose, ...usable.params],
    );
    return row;
  }

  /** Uses up every unused link of `purpose` of `userId`. */
  async function spendLinks(em: EntityManager, purpose: LinkPurpose, userId: string): Promise<void> {
    await em.execute(`update ${linksTable} set "used_at" = ? where "user_id" = ? and "purpose" = ? and "used_at" is null`, [now(), userId, purpose], "run");
  }

  /** The link's row if it could be used now, without using it. */
  async function peekLink(em: EntityManager, purpose: LinkPurpose, ref: LinkRef): Promise<EmailLinkRow | undefined> {
    if (!("token" in ref ? ref.token : ref.id)) return undefined;
    const match = linkMatch(ref);
    const usable = usableLink(now());
    const [row] = await em.execute<EmailLinkRow[]>(
      `select ${linkColumns} from ${linksTable} l where ${match.sql} and l."purpose" = ? and ${usable.sql}`,
      [...match.params, purpose, ...usable.params],
    );
    return row;
  }

  /** Runs `work` in a transaction of a fork, then tells the mail worker when it committed mail. */
  async function inTransaction<T>(work: (em: EntityManager) => Promise<T>, mails = true): Promise<T> {
    const em = fork();
    await em.begin();
    try {
      const result = await work(em);
      await em.commit();
      if (mails) deps.mailWritten?.();
      return result;
    } catch (err) {
      await em.rollback();
      throw err;
    }
  }

  /** A new user with a personal workspace (not yet flushed). */
  function newUser(em: EntityManager, email: string, name: string, plan: PlanName, passwordHash: string | null): { user: User; workspace: Workspace } {
    const user = em.create(UserEntity, { id: newId(), email, name, createdAt: now(), passwordHash, administrator: false, totpSecret: null, totpPendingSecret: null, totpLastStep: null });
    const workspace = newWorkspace(em, user, `${name}'s workspace`, plan, true);
    return { user, workspace };
  }

  function newWorkspace(em: EntityManager, owner: User, name: string, plan: PlanName, personal: boolean): Workspace {
    const createdAt = now();
    const workspace = em.create(WorkspaceEntity, { id: newId(), name, plan, ownerId: owner.id, personal, createdAt, requireTwoFactor: false });
    em.create(MembershipEntity, { id: newId(), workspaceId: workspace.id, userId: owner.id, role: "owner", createdAt });
    return workspace;
  }

  /** PERMISSION_DENIED when SIGNUP does not let `email` get an account `by` this way. */
  function admitAccount(email: string, by: "sign-up" | "invitation"): void {
    const refusal = signUpRefusal(deps.signUp ?? openSignUp, email, by);
    if (refusal) throw new ConnectError(refusal, Code.PermissionDenied);
  }

  /**
   * Makes `user` (new, flushed, in `em`'s transaction) the installation's administrator when nobody is one yet:
   * the first account made. Once someone is, a sign-up costs one index lookup (the partial unique index that
   * also keeps it to one); until then a lock serialises the first sign-ups, so racing ones make one administrator.
   */
  async function firstAccountAdministers(em: EntityManager, user: User): Promise<void> {
    const someoneAdministers = `exists (select 1 from ${table(UserEntity)} where "administrator")`;
    const [row] = await em.execute<{ taken: boolean }[]>(`select ${someoneAdministers} as "taken"`);
    if (row?.taken) return;
    await em.execute(`select pg_advisory_xact_lock(hashtext('formsvc:identity:administrator'))`);
    const promoted = await em.execute<unknown[]>(
      `update ${table(UserEntity)} set "administrator" = true where "id" = ? and not ${someoneAdministers} returning "id"`,
      [user.id],
    );
    if (promoted.length) user.administrator = true;
  }

  return {
    deps,
    now,
    admitAccount,
    firstAccountAdministers,
    fork,
    table,
    subjectUser,
    callerUser,
    findUserByEmail,
    memberWorkspace,
    anyWorkspace,
    managedWorkspace,
    workspaceAs,
    addMembership,
    schemaTable,
    linksTable,
    usableLink,
    linkColumns,
    mailLink,
    useLink,
    spendLinks,
    peekLink,
    inTransaction,
    newUser,
    newWorkspace,
  };
}

// --- validation -------------------------------------------------------------

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function validateEmail(email: string): void {
  if (!email) throw new ConnectError("email is required", Code.InvalidArgument);
  if (email.length > maxEmailLength || !emailPattern.test(email)) {
    throw new ConnectError("email must be a valid email address", Code.InvalidArgument);
  }
}

export function validateName(field: string, name: string): void {
  if (!name) throw new ConnectError(`${field} is required`, Code.InvalidArgument);
  if ([...name].length > maxNameLength) {
    throw new ConnectError(`${field} must be at most ${maxNameLength} characters`, Code.InvalidArgument);
  }
}

export function userExists(): ConnectError {
  return new ConnectError("a user with this email already exists", Code.AlreadyExists);
}

/** The stored plan of a requested one; UNSPECIFIED means free unless a plan is required. */
export function planFromProto(plan: Plan, required: boolean): PlanName {
  if (plan === Plan.FREE || (plan === Plan.UNSPECIFIED && !required)) return "free";
  if (plan === Plan.PRO) return "pro";
  throw new ConnectError("plan must be free or pro", Code.InvalidArgument);
}

function planToProto(plan: PlanName): Plan {
  return plan === "pro" ? Plan.PRO : Plan.FREE;
}

// --- messages ---------------------------------------------------------------

/** What a user's message is made of (an entity, or a row read with its session). */
export type SessionUser = Pick<User, "id" | "email" | "name" | "createdAt" | "emailVerifiedAt" | "administrator" | "totpSecret" | "locale">;

export function toUserMessage(user: SessionUser): UserMessage {
  return create(UserSchema, {
    id: user.id,
    email: user.email,
    name: user.name,
    createdAt: timestampFromDate(user.createdAt),
    emailVerified: Boolean(user.emailVerifiedAt),
    administrator: Boolean(user.administrator),
    twoFactorEnabled: Boolean(user.totpSecret),
    locale: user.locale ?? "",
  });
}


/** A link named by the token it was mailed with, or by its id. */
export type LinkRef = { token: string } | { id: string };

/** A row of email_links, as useLink and peekLink read it (linkColumns). */
export interface EmailLinkRow {
  id: string;
  email: string;
  user_id: string | null;
  workspace_id: string | null;
  role: string | null;
  invited_by: string | null;
  created_at: Date | string;
  expires_at: Date | string;
}

/** What a plan allows. */
export function entitlementsOf(plan: PlanName): Entitlements {
  return create(EntitlementsSchema, { removeBranding: plan === "pro" });
}

/** A workspace as the message; `role` is the caller's, when a caller asked. */
export function toWorkspaceMessage(workspace: Workspace, role?: RoleName): WorkspaceMessage {
  return create(WorkspaceSchema, {
    id: workspace.id,
    name: workspace.name,
    plan: planToProto(workspace.plan),
    entitlements: entitlementsOf(workspace.plan),
    ownerId: workspace.ownerId,
    personal: workspace.personal,
    createdAt: timestampFromDate(workspace.createdAt),
    role: role ? roleToProto(role) : Role.UNSPECIFIED,
    requireTwoFactor: Boolean(workspace.requireTwoFactor),
  });
}

const roleMessages: Record<RoleName, Role> = { owner: Role.OWNER, admin: Role.ADMIN, member: Role.MEMBER };

export function roleToProto(role: RoleName): Role {
  return roleMessages[role];
}

/** A role one member may give another: member (the default) or admin; a workspace has one owner. */
export function grantableRole(role: Role): RoleName {
  if (role === Role.UNSPECIFIED || role === Role.MEMBER) return "member";
  if (role === Role.ADMIN) return "admin";
  throw new ConnectError("role must be admin or member: a workspace has one owner, the person who made it", Code.InvalidArgument);
}

/** The role an invitation link gives. */
export function invitedRole(link: EmailLinkRow): RoleName {
  return link.role === "admin" ? "admin" : "member";
}

export function toMemberMessage(membership: Membership, user: User) {
  return create(MemberSchema, { user: toUserMessage(user), role: roleToProto(membership.role), joinedAt: timestampFromDate(membership.createdAt) });
}

export function toApiKeyMessage(key: ApiKey): ApiKeyMessage {
  return create(ApiKeySchema, {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    createdAt: timestampFromDate(key.createdAt),
    lastUsedAt: key.lastUsedAt ? timestampFromDate(key.lastUsedAt) : undefined,
  });
}
