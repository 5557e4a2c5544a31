import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ConnectRouter, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { UniqueConstraintViolationException } from "@mikro-orm/core";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import { qualifiedTable } from "@formsvc/platform/database.ts";
import { actorOf, callerOf, maxApiKeysPerCall, operator, requireCaller } from "@formsvc/platform/caller.ts";
import { newId, randomToken } from "@formsvc/platform/ids.ts";
import { insertMailsSql, mailOutboxTable, type Mail } from "@formsvc/platform/mail.ts";
import { keysetAfter, pageOf, pageRequest } from "@formsvc/platform/paging.ts";
import {
  ApiKeySchema,
  BeginIdempotencyResponse_Outcome,
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
import { apiKeyMatches, apiKeyPrefix, digestsEqual, generateApiKey, hashSecret, isWellFormedApiKey, secretDigest } from "../api-keys.ts";
import type { ApiKeyCache, VerifiedApiKey } from "../api-key-cache.ts";
import { beginIdempotency, completeIdempotency, type IdempotencyClaim } from "../idempotency.ts";
import { decoyPasswordHash, hashPassword, passwordProblem, verifyPassword } from "../passwords.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { invitationMail, linkLifetimeMs, linkUrl, passwordResetMail, verificationMail, type LinkPurpose } from "../mails.ts";
import { ApiKeyEntity, type ApiKey } from "../entities/api-key.ts";
import { MembershipEntity, type Membership, type RoleName } from "../entities/membership.ts";
import { SessionEntity } from "../entities/session.ts";
import { UserEntity, type User } from "../entities/user.ts";
import { WorkspaceEntity, type PlanName, type Workspace } from "../entities/workspace.ts";

/** How long an app session lasts. */
export const sessionLifetimeMs = 30 * 24 * 60 * 60 * 1000;
/** last_used_at of a key is written at most this often. */
export const lastUsedResolutionMs = 60 * 1000;

export const maxNameLength = 100;
const maxEmailLength = 254;
const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

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
}

export type IdentityHandlers = ServiceImpl<typeof IdentityService>;

// One message for "missing" and "not yours", so existence is never confirmed.
const workspaceNotFound = () => new ConnectError("workspace not found", Code.NotFound);
const userNotFound = () => new ConnectError("user not found", Code.NotFound);
const apiKeyNotFound = () => new ConnectError("API key not found", Code.NotFound);
const invalidApiKey = () => new ConnectError("invalid API key", Code.Unauthenticated);
const invalidSession = () => new ConnectError("invalid or expired session", Code.Unauthenticated);
const unknownCaller = () => new ConnectError("unknown caller", Code.Unauthenticated);
/** One answer for a link that is unknown, used or expired, so a guessed token learns nothing. */
const invalidLink = () => new ConnectError("this link is not valid: it was used already, has expired or is unknown; ask for a new one", Code.InvalidArgument);
/** One answer for an unknown email, a user without a password and a wrong password. */
const wrongCredentials = () => new ConnectError("email or password is wrong", Code.Unauthenticated);
const notAManager = () => new ConnectError("only the workspace's owner or an admin may manage its members", Code.PermissionDenied);
const memberNotFound = () => new ConnectError("member not found", Code.NotFound);
const accountExists = () => new ConnectError("an account has this email: sign in, then open the link again", Code.AlreadyExists);
/** Who invited, in invitations the operator made (the CLI). */
const operatorInviter = "The formsvc administrator";

/** The roles that may manage a workspace's members (add, invite, remove, change roles). */
const managerRoles: readonly RoleName[] = ["owner", "admin"];

export function createIdentityHandlers(deps: IdentityHandlerDeps): IdentityHandlers {
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

  const linksTable = `"${deps.orm.config.get("schema") ?? "public"}"."email_links"`;
  /**
   * A new single-use link of `purpose` and the mail carrying it, written in one statement (in `em`'s
   * transaction, if it has one): only the token's hash is kept.
   */
  async function mailLink(
    em: EntityManager,
    purpose: LinkPurpose,
    link: { email: string; userId?: string; workspaceId?: string; role?: string; invitedBy?: string },
    mail: (url: string) => Mail,
  ): Promise<void> {
    const token = randomToken(32);
    const createdAt = now();
    const expiresAt = new Date(createdAt.getTime() + linkLifetimeMs[purpose]);
    const outbox = insertMailsSql(mailOutboxTable(deps.orm), [mail(linkUrl(deps.publicUrl, purpose, token))]);
    await em.execute(
      `with link as (insert into ${linksTable} ("token_hash", "purpose", "email", "user_id", "workspace_id", "role", "invited_by", "created_at", "expires_at")
                     values (?, ?, ?, ?, ?, ?, ?, ?, ?)) ${outbox.sql}`,
      [hashSecret(token), purpose, link.email, link.userId ?? null, link.workspaceId ?? null, link.role ?? null, link.invitedBy ?? null, createdAt, expiresAt, ...outbox.params],
      "run",
    );
  }

  /** Uses up a link of `purpose`: its row once, if it is still good; undefined otherwise. */
  async function useLink(em: EntityManager, purpose: LinkPurpose, token: string): Promise<EmailLinkRow | undefined> {
    if (!token) return undefined;
    const [row] = await em.execute<EmailLinkRow[]>(
      `update ${linksTable} set "used_at" = ? where "token_hash" = ? and "purpose" = ? and "used_at" is null and "expires_at" > ?
        returning "email", "user_id", "workspace_id", "role", "invited_by"`,
      [now(), hashSecret(token), purpose, now()],
    );
    return row;
  }

  /** Uses up every unused link of `purpose` of `userId`. */
  async function spendLinks(em: EntityManager, purpose: LinkPurpose, userId: string): Promise<void> {
    await em.execute(`update ${linksTable} set "used_at" = ? where "user_id" = ? and "purpose" = ? and "used_at" is null`, [now(), userId, purpose], "run");
  }

  /** The link's row if it could be used now, without using it. */
  async function peekLink(em: EntityManager, purpose: LinkPurpose, token: string): Promise<EmailLinkRow | undefined> {
    if (!token) return undefined;
    const [row] = await em.execute<EmailLinkRow[]>(
      `select "email", "user_id", "workspace_id", "role", "invited_by" from ${linksTable}
        where "token_hash" = ? and "purpose" = ? and "used_at" is null and "expires_at" > ?`,
      [hashSecret(token), purpose, now()],
    );
    return row;
  }

  /**
   * The key from the database, offered to the cache; UNAUTHENTICATED when no stored hash matches. One
   * read-only query (the keys with this prefix joined to their user), without the ORM's unit of work.
   */
  async function readApiKey(key: string, cache: ApiKeyCache | undefined): Promise<VerifiedApiKey> {
    const generation = cache?.generation;
    const candidates = await fork().execute<ApiKeyUserRow[]>(
      `select k.id, k.key_hash, k.last_used_at, u.id as user_id, u.email, u.name, u.created_at
         from ${table(ApiKeyEntity)} k join ${table(UserEntity)} u on u.id = k.user_id
        where k.prefix = ?`,
      [apiKeyPrefix(key)],
    );
    let match: ApiKeyUserRow | undefined;
    for (const candidate of candidates) {
      if (apiKeyMatches(key, candidate.key_hash)) match = candidate;
    }
    if (!match) throw invalidApiKey();
    const user = { id: match.user_id, email: match.email, name: match.name, createdAt: new Date(match.created_at) } as User;
    const verified: VerifiedApiKey = {
      apiKeyId: match.id,
      keyHash: match.key_hash,
      user: toUserMessage(user),
      lastUsedAt: match.last_used_at === null ? null : new Date(match.last_used_at),
    };
    if (cache && generation !== undefined) cache.remember(verified, generation);
    return verified;
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
    const user = em.create(UserEntity, { id: newId(), email, name, createdAt: now(), passwordHash });
    const workspace = newWorkspace(em, user, `${name}'s workspace`, plan, true);
    return { user, workspace };
  }

  function newWorkspace(em: EntityManager, owner: User, name: string, plan: PlanName, personal: boolean): Workspace {
    const createdAt = now();
    const workspace = em.create(WorkspaceEntity, { id: newId(), name, plan, ownerId: owner.id, personal, createdAt });
    em.create(MembershipEntity, { id: newId(), workspaceId: workspace.id, userId: owner.id, role: "owner", createdAt });
    return workspace;
  }

  /**
   * A new user with their personal workspace; ALREADY_EXISTS for a taken email. `password` is null for
   * the operator's users (they sign in once one is set), and hashed only once the email is known free.
   */
  async function registerUser(req: { email: string; name: string; plan: Plan }, password: string | null, options: { verifyEmail: boolean }) {
    const email = normaliseEmail(req.email);
    validateEmail(email);
    const name = req.name.trim() || email.slice(0, email.indexOf("@"));
    validateName("name", name);
    const plan = planFromProto(req.plan, false);
    const problem = password === null ? undefined : await passwordProblem(password, [email, name]);
    if (problem) throw new ConnectError(problem, Code.InvalidArgument);
    if (await fork().findOne(UserEntity, { email })) throw userExists();
    const passwordHash = password === null ? null : await hashPassword(password);
    try {
      return await inTransaction(async (em) => {
        const { user, workspace } = newUser(em, email, name, plan, passwordHash);
        await em.flush();
        // Whoever signs up is asked to confirm the address; the operator's users are not mailed.
        if (options.verifyEmail) await mailLink(em, "email-verification", { email, userId: user.id }, (url) => verificationMail(email, name, url));
        return { user: toUserMessage(user), workspace: toWorkspaceMessage(workspace) };
      }, options.verifyEmail);
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) throw userExists();
      throw err;
    }
  }

  /** A bearer key's user and key id; UNAUTHENTICATED when the key is unknown or deleted. */
  async function authenticateKey(key: string): Promise<{ user: UserMessage; apiKeyId: string }> {
    if (!isWellFormedApiKey(key)) throw invalidApiKey();
    const digest = secretDigest(key);
    const cache = deps.apiKeyCache;
    // A held key was read while this replica listened for its revocation, and is dropped by it.
    const held = cache?.lookup(digest.toString("hex"));
    const verified = held && digestsEqual(digest, held.keyHash) ? held : await readApiKey(key, cache);
    const at = now();
    const staleBefore = new Date(at.getTime() - lastUsedResolutionMs);
    if (!verified.lastUsedAt || verified.lastUsedAt <= staleBefore) {
      // Conditional, so replicas racing on the same key write once.
      await fork().nativeUpdate(
        ApiKeyEntity,
        { id: verified.apiKeyId, $or: [{ lastUsedAt: null }, { lastUsedAt: { $lte: staleBefore } }] },
        { lastUsedAt: at },
      );
      verified.lastUsedAt = at;
    }
    return { user: verified.user, apiKeyId: verified.apiKeyId };
  }

  return {
    createUser: (req) => registerUser(req, req.password || null, { verifyEmail: false }),

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
      if (!req.email.trim()) throw new ConnectError("email is required", Code.InvalidArgument);
      const role = grantableRole(req.role);
      const em = fork();
      const workspace = await managedWorkspace(em, ctx, req.workspaceId);
      const user = await findUserByEmail(em, req.email);
      // Joining takes a proven address: whoever signed up with an email never verified may not own it, so
      // to a caller that account is no account (InviteMember mails the address instead). The operator
      // adds any account: the users it makes are never mailed to verify.
      if (actorOf(ctx) !== operator && !user.emailVerifiedAt) throw userNotFound();
      await addMembership(em, workspace, user, role);
      return { workspace: toWorkspaceMessage(workspace), user: toUserMessage(user) };
    },

    async inviteMember(req, ctx) {
      const email = normaliseEmail(req.email);
      validateEmail(email);
      const role = grantableRole(req.role);
      const workspace = await managedWorkspace(fork(), ctx, req.workspaceId);
      const existing = await fork().findOne(UserEntity, { email });
      // Only a verified account joins at once. One whose email was never verified may be a stranger's
      // sign-up with the address: the address is mailed the link, as one without an account, and the
      // answer is the same, so it does not tell which; following the link verifies the email.
      if (existing?.emailVerifiedAt) {
        await addMembership(fork(), workspace, existing, role);
        return { user: toUserMessage(existing), invited: false };
      }
      const actor = actorOf(ctx);
      const inviter = actor === operator ? operatorInviter : (await callerUser(fork(), actor)).name;
      const invitedBy = actor === operator ? undefined : actor;
      await inTransaction((em) =>
        mailLink(em, "invitation", { email, workspaceId: workspace.id, role, invitedBy }, (url) => invitationMail(email, inviter, workspace.name, url)),
      );
      return { invited: true };
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

    async getInvitation(req) {
      const em = fork();
      const link = await peekLink(em, "invitation", req.token);
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
      const link = await peekLink(fork(), "invitation", req.token);
      if (!link?.workspace_id) throw invalidLink();
      let signUp: { name: string; passwordHash: string } | undefined;
      if (!caller) {
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
          const used = await useLink(em, "invitation", req.token);
          const workspace = used?.workspace_id ? await em.findOne(WorkspaceEntity, { id: used.workspace_id }) : null;
          if (!used || !workspace) throw invalidLink();
          let user: User;
          if (signUp) {
            user = newUser(em, used.email, signUp.name, "free", signUp.passwordHash).user;
            // The link came to this address: it is verified.
            user.emailVerifiedAt = now();
            await em.flush();
          } else {
            user = await callerUser(em, caller!);
            if (user.email !== used.email) throw new ConnectError("this invitation is for another email address", Code.PermissionDenied);
            // The link came to this address: it is verified.
            user.emailVerifiedAt ??= now();
            await em.flush();
          }
          const role = invitedRole(used);
          await addMembership(em, workspace, user, role);
          return { user: toUserMessage(user), workspace: toWorkspaceMessage(workspace, role) };
        }, false);
      } catch (err) {
        if (err instanceof UniqueConstraintViolationException) throw accountExists();
        throw err;
      }
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

    // Whoever signs up starts on the free plan.
    signUp: (req) => registerUser({ ...req, plan: Plan.FREE }, req.password, { verifyEmail: true }),

    async requestPasswordReset(req) {
      const email = normaliseEmail(req.email);
      // The same empty answer whether or not anyone has this email, and as soon: the person is looked up and
      // the link and its mail written after answering, so the time taken tells nothing (16 ms against 10 ms
      // when they were written first). A process stopped meanwhile loses the mail; asking again sends one.
      if (!email || email.length > maxEmailLength || !emailPattern.test(email)) return {};
      void (async () => {
        const user = await fork().findOne(UserEntity, { email });
        if (user) await inTransaction((em) => mailLink(em, "password-reset", { email, userId: user.id }, (url) => passwordResetMail(email, url)));
      })().catch((err) => deps.logger?.error({ err }, "a password-reset link could not be written"));
      return {};
    },

    async resetPassword(req) {
      const link = await peekLink(fork(), "password-reset", req.token);
      const user = link?.user_id ? await fork().findOne(UserEntity, { id: link.user_id }) : null;
      if (!link || !user) throw invalidLink();
      // A refused password leaves the link usable, so the person can try another.
      const problem = await passwordProblem(req.password, [user.email, user.name]);
      if (problem) throw new ConnectError(problem, Code.InvalidArgument);
      const passwordHash = await hashPassword(req.password);
      const reset = await inTransaction(async (em) => {
        if (!(await useLink(em, "password-reset", req.token))) throw invalidLink();
        const current = await em.findOne(UserEntity, { id: user.id });
        if (!current) throw invalidLink();
        // Every other reset link of this person is spent too: an older one, perhaps in an intruder's hands,
        // must not set the password again after this reset.
        await spendLinks(em, "password-reset", user.id);
        const verifiedBefore = current.emailVerifiedAt;
        const emailVerifiedAt = verifiedBefore ?? now();
        // Following the mailed link proves the address too; every session, perhaps an intruder's, ends.
        await em.nativeUpdate(UserEntity, { id: user.id }, { passwordHash, emailVerifiedAt });
        await em.nativeDelete(SessionEntity, { userId: user.id });
        // Keys act without a password. Before the address was proven they may be a stranger's, who signed
        // up with it: they go whatever was asked. A verified person keeps theirs only when they ask to.
        const keysDeleted = verifiedBefore && req.keepApiKeys ? 0 : await em.nativeDelete(ApiKeyEntity, { userId: user.id });
        return { user: toUserMessage({ ...current, emailVerifiedAt }), keysDeleted };
      }, false);
      // This replica refuses the keys before answering; the others when the deletes' notices reach them.
      if (reset.keysDeleted > 0) deps.apiKeyCache?.forgetUser(user.id);
      return { user: reset.user };
    },

    async verifyEmail(req) {
      return inTransaction(async (em) => {
        const link = await useLink(em, "email-verification", req.token);
        const user = link?.user_id ? await em.findOne(UserEntity, { id: link.user_id }) : null;
        // The user changed nothing since: the address verified is still theirs.
        if (!link || !user || user.email !== link.email) throw invalidLink();
        user.emailVerifiedAt ??= now();
        await em.flush();
        return { user: toUserMessage(user) };
      }, false);
    },

    async verifyPassword(req) {
      const email = normaliseEmail(req.email);
      const user = email && req.password ? await fork().findOne(UserEntity, { email }) : null;
      // A hash is checked whatever happens, so the time taken does not tell whether the email exists.
      const matches = await verifyPassword(req.password, user?.passwordHash ?? (await decoyPasswordHash()));
      if (!user || !user.passwordHash || !matches) throw wrongCredentials();
      return { user: toUserMessage(user) };
    },

    async setPassword(req, ctx) {
      if (actorOf(ctx) !== operator) throw new ConnectError("only the operator sets a password by email", Code.PermissionDenied);
      if (!req.email.trim()) throw new ConnectError("email is required", Code.InvalidArgument);
      const em = fork();
      const user = await findUserByEmail(em, req.email);
      const problem = await passwordProblem(req.password, [user.email, user.name]);
      if (problem) throw new ConnectError(problem, Code.InvalidArgument);
      user.passwordHash = await hashPassword(req.password);
      await em.flush();
      return { user: toUserMessage(user) };
    },

    async setPlan(req, ctx) {
      // Plans are the operator's (README, "Operator CLI"): an owner who could set one would give themselves Pro.
      if (actorOf(ctx) !== operator) throw new ConnectError("plans are set by whoever runs this installation", Code.PermissionDenied);
      const plan = planFromProto(req.plan, true);
      const em = fork();
      const workspace = await workspaceAs(em, ctx, req.workspaceId, ["owner"], () => new ConnectError("plans are set by whoever runs this installation", Code.PermissionDenied));
      workspace.plan = plan;
      await em.flush();
      return { workspace: toWorkspaceMessage(workspace, undefined) };
    },

    async getCurrentUser(_req, ctx) {
      const user = await callerUser(fork(), requireCaller(ctx));
      return { user: toUserMessage(user) };
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

    async createApiKey(req, ctx) {
      const name = req.name.trim();
      validateName("name", name);
      const em = fork();
      const user = await subjectUser(em, ctx, req.email);
      const key = generateApiKey();
      const row = em.create(ApiKeyEntity, {
        id: newId(),
        userId: user.id,
        name,
        prefix: apiKeyPrefix(key),
        keyHash: hashSecret(key),
        createdAt: now(),
        lastUsedAt: null,
      });
      await em.flush();
      return { apiKey: toApiKeyMessage(row), key };
    },

    async listApiKeys(req, ctx) {
      const em = fork();
      const user = await subjectUser(em, ctx, req.email);
      const rows = await em.find(ApiKeyEntity, { userId: user.id }, { orderBy: [{ createdAt: "desc" }, { id: "desc" }] });
      return { apiKeys: rows.map(toApiKeyMessage) };
    },

    async deleteApiKey(req, ctx) {
      if (!req.id) throw new ConnectError("id is required", Code.InvalidArgument);
      const actor = actorOf(ctx);
      // A caller may delete only their own keys; someone else's key is "not found".
      const where = actor === operator ? { id: req.id } : { id: req.id, userId: actor };
      const deleted = await fork().nativeDelete(ApiKeyEntity, where);
      if (deleted === 0) throw apiKeyNotFound();
      // This replica refuses the key before answering; the others when the delete's notice reaches them.
      deps.apiKeyCache?.forgetKey(req.id);
      return {};
    },

    async authenticateApiKey(req) {
      return authenticateKey(req.key);
    },

    async authenticateApiKeys(req) {
      if (req.keys.length > maxApiKeysPerCall) throw new ConnectError(`keys: at most ${maxApiKeysPerCall} in one call`, Code.InvalidArgument);
      // A burst from one client repeats its key: each distinct key is checked once.
      const verdicts = new Map<string, Promise<{ user?: UserMessage; apiKeyId?: string }>>();
      const verdictOf = (key: string) =>
        authenticateKey(key).catch((err: unknown) => {
          if (ConnectError.from(err).code === Code.Unauthenticated) return {};
          throw err;
        });
      for (const key of req.keys) if (!verdicts.has(key)) verdicts.set(key, verdictOf(key));
      return { results: await Promise.all(req.keys.map((key) => verdicts.get(key)!)) };
    },

    async createSession(req) {
      if (!req.userId) throw new ConnectError("user_id is required", Code.InvalidArgument);
      const em = fork();
      const user = await em.findOne(UserEntity, { id: req.userId });
      if (!user) throw userNotFound();
      const token = randomToken(32);
      const createdAt = now();
      const expiresAt = new Date(createdAt.getTime() + sessionLifetimeMs);
      em.create(SessionEntity, { id: newId(), userId: user.id, tokenHash: hashSecret(token), createdAt, expiresAt });
      await em.flush();
      return { token, expiresAt: timestampFromDate(expiresAt) };
    },

    async resolveSession(req) {
      if (!req.token) throw invalidSession();
      const em = fork();
      const session = await em.findOne(SessionEntity, { tokenHash: hashSecret(req.token) });
      if (!session) throw invalidSession();
      if (session.expiresAt <= now()) {
        await em.nativeDelete(SessionEntity, { id: session.id });
        throw invalidSession();
      }
      const user = await em.findOne(UserEntity, { id: session.userId });
      if (!user) throw invalidSession();
      return { user: toUserMessage(user), expiresAt: timestampFromDate(session.expiresAt) };
    },

    async deleteSession(req) {
      // Signing out twice, or with an unknown token, is not an error.
      if (req.token) await fork().nativeDelete(SessionEntity, { tokenHash: hashSecret(req.token) });
      return {};
    },

    async deleteUserSessions(_req, ctx) {
      // Every session of the caller, whichever browser holds it: the next request of each is refused.
      const deleted = await fork().nativeDelete(SessionEntity, { userId: requireCaller(ctx) });
      return { deleted };
    },

    async beginIdempotency(req) {
      const result = await beginIdempotency(deps.orm, idempotencyClaim(req), now());
      if (result.outcome === "replay") return { outcome: Outcome.REPLAY, status: result.status, body: result.body };
      return { outcome: outcomes[result.outcome] };
    },

    async completeIdempotency(req) {
      await completeIdempotency(deps.orm, idempotencyClaim(req), req.release ? { release: true } : { release: false, status: req.status, body: req.body });
      return {};
    },
  };
}

/** Mounts the identity service on a Connect router. */
export function routes(router: ConnectRouter, handlers: IdentityHandlers): ConnectRouter {
  return router.service(IdentityService, handlers);
}

// --- validation -------------------------------------------------------------

const Outcome = BeginIdempotencyResponse_Outcome;
const outcomes = { proceed: Outcome.PROCEED, mismatch: Outcome.MISMATCH, "in-progress": Outcome.IN_PROGRESS } as const;

/** The claim an idempotency call names; every part is required. */
function idempotencyClaim(req: { scope: string; key: string; requestHash: string }): IdempotencyClaim {
  if (!req.scope || !req.key || !req.requestHash) throw new ConnectError("scope, key and request_hash are required", Code.InvalidArgument);
  return { scope: req.scope, key: req.key, requestHash: req.requestHash };
}

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

function validateEmail(email: string): void {
  if (!email) throw new ConnectError("email is required", Code.InvalidArgument);
  if (email.length > maxEmailLength || !emailPattern.test(email)) {
    throw new ConnectError("email must be a valid email address", Code.InvalidArgument);
  }
}

function validateName(field: string, name: string): void {
  if (!name) throw new ConnectError(`${field} is required`, Code.InvalidArgument);
  if ([...name].length > maxNameLength) {
    throw new ConnectError(`${field} must be at most ${maxNameLength} characters`, Code.InvalidArgument);
  }
}

function userExists(): ConnectError {
  return new ConnectError("a user with this email already exists", Code.AlreadyExists);
}

/** The stored plan of a requested one; UNSPECIFIED means free unless a plan is required. */
function planFromProto(plan: Plan, required: boolean): PlanName {
  if (plan === Plan.FREE || (plan === Plan.UNSPECIFIED && !required)) return "free";
  if (plan === Plan.PRO) return "pro";
  throw new ConnectError("plan must be free or pro", Code.InvalidArgument);
}

function planToProto(plan: PlanName): Plan {
  return plan === "pro" ? Plan.PRO : Plan.FREE;
}

// --- messages ---------------------------------------------------------------

/** A row of authenticateApiKey's query: a key joined to its user. */
interface ApiKeyUserRow {
  id: string;
  key_hash: string;
  last_used_at: Date | string | null;
  user_id: string;
  email: string;
  name: string;
  created_at: Date | string;
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

export function toUserMessage(user: User): UserMessage {
  return create(UserSchema, {
    id: user.id,
    email: user.email,
    name: user.name,
    createdAt: timestampFromDate(user.createdAt),
    emailVerified: Boolean(user.emailVerifiedAt),
  });
}

/** A row of email_links, as useLink and peekLink read it. */
interface EmailLinkRow {
  email: string;
  user_id: string | null;
  workspace_id: string | null;
  role: string | null;
  invited_by: string | null;
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
  });
}

const roleMessages: Record<RoleName, Role> = { owner: Role.OWNER, admin: Role.ADMIN, member: Role.MEMBER };

export function roleToProto(role: RoleName): Role {
  return roleMessages[role];
}

/** A role one member may give another: member (the default) or admin; a workspace has one owner. */
function grantableRole(role: Role): RoleName {
  if (role === Role.UNSPECIFIED || role === Role.MEMBER) return "member";
  if (role === Role.ADMIN) return "admin";
  throw new ConnectError("role must be admin or member: a workspace has one owner, the person who made it", Code.InvalidArgument);
}

/** The role an invitation link gives. */
function invitedRole(link: EmailLinkRow): RoleName {
  return link.role === "admin" ? "admin" : "member";
}

function toMemberMessage(membership: Membership, user: User) {
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
