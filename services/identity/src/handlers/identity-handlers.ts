import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ConnectRouter, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { UniqueConstraintViolationException } from "@mikro-orm/core";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import { qualifiedTable } from "@formsvc/platform/database.ts";
import { callerOf, requireCaller } from "@formsvc/platform/caller.ts";
import { newId, randomToken } from "@formsvc/platform/ids.ts";
import { pageOf, pageWindow } from "@formsvc/platform/paging.ts";
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
import { apiKeyMatches, apiKeyPrefix, generateApiKey, hashSecret, isWellFormedApiKey } from "../api-keys.ts";
import { decoyPasswordHash, hashPassword, passwordProblem, verifyPassword } from "../passwords.ts";
import { ApiKeyEntity, type ApiKey } from "../entities/api-key.ts";
import { MembershipEntity } from "../entities/membership.ts";
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
}

export type IdentityHandlers = ServiceImpl<typeof IdentityService>;

// One message for "missing" and "not yours", so existence is never confirmed.
const workspaceNotFound = () => new ConnectError("workspace not found", Code.NotFound);
const userNotFound = () => new ConnectError("user not found", Code.NotFound);
const apiKeyNotFound = () => new ConnectError("API key not found", Code.NotFound);
const invalidApiKey = () => new ConnectError("invalid API key", Code.Unauthenticated);
const invalidSession = () => new ConnectError("invalid or expired session", Code.Unauthenticated);
const unknownCaller = () => new ConnectError("unknown caller", Code.Unauthenticated);
/** One answer for an unknown email, a user without a password and a wrong password. */
const wrongCredentials = () => new ConnectError("email or password is wrong", Code.Unauthenticated);

export function createIdentityHandlers(deps: IdentityHandlerDeps): IdentityHandlers {
  const now = deps.now ?? (() => new Date());
  const fork = (): EntityManager => deps.orm.em.fork();
  // Raw queries on the hot paths name their tables in the service's own schema.
  const table = (entity: Parameters<typeof qualifiedTable>[1]) => qualifiedTable(deps.orm, entity);

  /** The user a call is about: the caller when there is one, else the operator's `email`. */
  async function subjectUser(em: EntityManager, ctx: HandlerContext, email: string): Promise<User> {
    const caller = callerOf(ctx);
    if (caller) return callerUser(em, caller);
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

  /** The workspace, when the caller is a member of it; the same NOT_FOUND as a missing one otherwise. */
  async function memberWorkspace(em: EntityManager, caller: string, workspaceId: string): Promise<Workspace> {
    if (!workspaceId) throw workspaceNotFound();
    const membership = await em.findOne(MembershipEntity, { workspaceId, userId: caller });
    if (!membership) throw workspaceNotFound();
    const workspace = await em.findOne(WorkspaceEntity, { id: workspaceId });
    if (!workspace) throw workspaceNotFound();
    return workspace;
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
  async function registerUser(req: { email: string; name: string; plan: Plan }, password: string | null) {
    const email = normaliseEmail(req.email);
    validateEmail(email);
    const name = req.name.trim() || email.slice(0, email.indexOf("@"));
    validateName("name", name);
    const plan = planFromProto(req.plan, false);
    const problem = password === null ? undefined : passwordProblem(password);
    if (problem) throw new ConnectError(problem, Code.InvalidArgument);
    const em = fork();
    if (await em.findOne(UserEntity, { email })) throw userExists();
    const { user, workspace } = newUser(em, email, name, plan, password === null ? null : await hashPassword(password));
    try {
      await em.flush();
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) throw userExists();
      throw err;
    }
    return { user: toUserMessage(user), workspace: toWorkspaceMessage(workspace) };
  }

  return {
    createUser: (req) => registerUser(req, null),

    async createWorkspace(req, ctx) {
      const name = req.name.trim();
      validateName("name", name);
      const plan = planFromProto(req.plan, false);
      const caller = callerOf(ctx);
      if (caller) {
        // A person makes free workspaces only; plans change by the operator.
        if (plan !== "free") throw new ConnectError("a workspace you create starts on the free plan", Code.PermissionDenied);
        const em = fork();
        const workspace = newWorkspace(em, await callerUser(em, caller), name, plan, false);
        await em.flush();
        return { workspace: toWorkspaceMessage(workspace) };
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
      const em = fork();
      const caller = callerOf(ctx);
      // A caller may add people only to a workspace they are a member of.
      const workspace = caller
        ? await memberWorkspace(em, caller, req.workspaceId)
        : req.workspaceId
          ? await em.findOne(WorkspaceEntity, { id: req.workspaceId })
          : null;
      if (!workspace) throw workspaceNotFound();
      const user = await findUserByEmail(em, req.email);
      const existing = await em.findOne(MembershipEntity, { workspaceId: workspace.id, userId: user.id });
      if (!existing) {
        em.create(MembershipEntity, {
          id: newId(),
          workspaceId: workspace.id,
          userId: user.id,
          role: "member",
          createdAt: now(),
        });
        try {
          await em.flush();
        } catch (err) {
          // Added by a concurrent call: the outcome is the same.
          if (!(err instanceof UniqueConstraintViolationException)) throw err;
        }
      }
      return { workspace: toWorkspaceMessage(workspace), user: toUserMessage(user) };
    },

    async listMembers(req, ctx) {
      const caller = requireCaller(ctx);
      const em = fork();
      const workspace = await memberWorkspace(em, caller, req.workspaceId);
      const memberships = await em.find(MembershipEntity, { workspaceId: workspace.id }, { orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
      const users = await em.find(UserEntity, { id: { $in: memberships.map((m) => m.userId) } });
      const byId = new Map(users.map((u) => [u.id, u]));
      const members = memberships
        .filter((m) => byId.has(m.userId))
        .sort((a, b) => Number(b.role === "owner") - Number(a.role === "owner"))
        .map((m) =>
          create(MemberSchema, {
            user: toUserMessage(byId.get(m.userId)!),
            role: m.role === "owner" ? Role.OWNER : Role.MEMBER,
            joinedAt: timestampFromDate(m.createdAt),
          }),
        );
      return { members };
    },

    // Whoever signs up starts on the free plan.
    signUp: (req) => registerUser({ ...req, plan: Plan.FREE }, req.password),

    async verifyPassword(req) {
      const email = normaliseEmail(req.email);
      const user = email && req.password ? await fork().findOne(UserEntity, { email }) : null;
      // A hash is checked whatever happens, so the time taken does not tell whether the email exists.
      const matches = await verifyPassword(req.password, user?.passwordHash ?? (await decoyPasswordHash()));
      if (!user || !user.passwordHash || !matches) throw wrongCredentials();
      return { user: toUserMessage(user) };
    },

    async setPassword(req, ctx) {
      if (callerOf(ctx)) throw new ConnectError("only the operator sets a password by email", Code.PermissionDenied);
      const problem = passwordProblem(req.password);
      if (problem) throw new ConnectError(problem, Code.InvalidArgument);
      if (!req.email.trim()) throw new ConnectError("email is required", Code.InvalidArgument);
      const em = fork();
      const user = await findUserByEmail(em, req.email);
      user.passwordHash = await hashPassword(req.password);
      await em.flush();
      return { user: toUserMessage(user) };
    },

    async setPlan(req, ctx) {
      if (callerOf(ctx)) throw new ConnectError("plans are changed by the operator", Code.PermissionDenied);
      const plan = planFromProto(req.plan, true);
      const em = fork();
      const workspace = req.workspaceId ? await em.findOne(WorkspaceEntity, { id: req.workspaceId }) : null;
      if (!workspace) throw workspaceNotFound();
      workspace.plan = plan;
      await em.flush();
      return { workspace: toWorkspaceMessage(workspace) };
    },

    async getCurrentUser(_req, ctx) {
      const user = await callerUser(fork(), requireCaller(ctx));
      return { user: toUserMessage(user) };
    },

    async listWorkspaces(req, ctx) {
      const caller = requireCaller(ctx);
      const em = fork();
      const memberships = await em.find(MembershipEntity, { userId: caller }, { fields: ["workspaceId"] });
      const ids = memberships.map((m) => m.workspaceId);
      const orderBy = [{ createdAt: "asc" }, { id: "asc" }] as const;
      if (req.limit === 0) {
        const page = req.page || 1;
        if (!Number.isInteger(page) || page < 1) {
          throw new ConnectError("page must be an integer of at least 1", Code.InvalidArgument);
        }
        // Every workspace is on page 1.
        const rows = page === 1 && ids.length ? await em.find(WorkspaceEntity, { id: { $in: ids } }, { orderBy: [...orderBy] }) : [];
        return { workspaces: rows.map(toWorkspaceMessage), hasMore: false };
      }
      const window = pageWindow(req.page, req.limit);
      const rows = ids.length
        ? await em.find(
            WorkspaceEntity,
            { id: { $in: ids } },
            { orderBy: [...orderBy], offset: window.offset, limit: window.fetch },
          )
        : [];
      const { items, hasMore } = pageOf(rows, window.limit);
      return { workspaces: items.map(toWorkspaceMessage), hasMore };
    },

    async getWorkspace(req, ctx) {
      const caller = requireCaller(ctx);
      if (!req.workspaceId) throw workspaceNotFound();
      // On every authenticated API request (forms checks membership through it): one read-only query,
      // the membership joined to its workspace, without the ORM's unit of work.
      const [row] = await fork().execute<WorkspaceRow[]>(
        `select w.id, w.name, w.plan, w.owner_id, w.personal, w.created_at
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
        } as Workspace),
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
      const caller = callerOf(ctx);
      // A caller may delete only their own keys; someone else's key is "not found".
      const where = caller ? { id: req.id, userId: caller } : { id: req.id };
      const deleted = await fork().nativeDelete(ApiKeyEntity, where);
      if (deleted === 0) throw apiKeyNotFound();
      return {};
    },

    async authenticateApiKey(req) {
      const key = req.key;
      if (!isWellFormedApiKey(key)) throw invalidApiKey();
      const em = fork();
      // Always read the database: a deleted key is refused on the next request, on every replica.
      // One read-only query (the keys with this prefix joined to their user), without the ORM's unit
      // of work: this runs on every API request.
      const candidates = await em.execute<ApiKeyUserRow[]>(
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
      const lastUsedAt = match.last_used_at === null ? null : new Date(match.last_used_at);
      const at = now();
      const staleBefore = new Date(at.getTime() - lastUsedResolutionMs);
      if (!lastUsedAt || lastUsedAt <= staleBefore) {
        // Conditional, so replicas racing on the same key write once.
        await em.nativeUpdate(
          ApiKeyEntity,
          { id: match.id, $or: [{ lastUsedAt: null }, { lastUsedAt: { $lte: staleBefore } }] },
          { lastUsedAt: at },
        );
      }
      return { user: toUserMessage(user), apiKeyId: match.id };
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
  };
}

/** Mounts the identity service on a Connect router. */
export function routes(router: ConnectRouter, handlers: IdentityHandlers): ConnectRouter {
  return router.service(IdentityService, handlers);
}

// --- validation -------------------------------------------------------------

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
}

export function toUserMessage(user: User): UserMessage {
  return create(UserSchema, {
    id: user.id,
    email: user.email,
    name: user.name,
    createdAt: timestampFromDate(user.createdAt),
  });
}

/** What a plan allows. */
export function entitlementsOf(plan: PlanName): Entitlements {
  return create(EntitlementsSchema, { removeBranding: plan === "pro" });
}

export function toWorkspaceMessage(workspace: Workspace): WorkspaceMessage {
  return create(WorkspaceSchema, {
    id: workspace.id,
    name: workspace.name,
    plan: planToProto(workspace.plan),
    entitlements: entitlementsOf(workspace.plan),
    ownerId: workspace.ownerId,
    personal: workspace.personal,
    createdAt: timestampFromDate(workspace.createdAt),
  });
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
