// API keys: made, listed and deleted by their person; every API request authenticates one.
import { Code, ConnectError } from "@connectrpc/connect";
import { actorOf, maxApiKeysPerCall, operator } from "@formsvc/platform/caller.ts";
import { newId } from "@formsvc/platform/ids.ts";
import type { User as UserMessage } from "@formsvc/proto/identity/v1/identity_pb.js";
import { apiKeyMatches, apiKeyPrefix, digestsEqual, generateApiKey, hashSecret, isWellFormedApiKey, secretDigest } from "../api-keys.ts";
import type { ApiKeyCache, VerifiedApiKey } from "../api-key-cache.ts";
import { ApiKeyEntity } from "../entities/api-key.ts";
import { UserEntity, type User } from "../entities/user.ts";
import { apiKeyNotFound, invalidApiKey, toApiKeyMessage, toUserMessage, validateName, type IdentityContext, type IdentityHandlers } from "./context.ts";

/** last_used_at of a key is written at most this often. */
export const lastUsedResolutionMs = 60 * 1000;

type ApiKeyHandlers = Pick<IdentityHandlers, "createApiKey" | "listApiKeys" | "deleteApiKey" | "authenticateApiKey" | "authenticateApiKeys">;

export function apiKeyHandlers({ deps, now, fork, table, subjectUser }: IdentityContext): ApiKeyHandlers {
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
  };
}

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

