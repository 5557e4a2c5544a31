// Two-factor sign-in: a TOTP authenticator (RFC 6238 as every authenticator app reads it: SHA-1, 6 digits,
// 30 s) and ten single-use recovery codes. The secret is sealed (SECRET_KEY) in the users table; a code is
// good once (the last time step passed is kept); recovery codes are stored as hashes and deleted as used.
// A password sign-in of a person with a second factor leaves a challenge (5 minutes, 5 wrong codes) that
// only a code turns into a session; a workspace may require members to have one.
import { randomInt } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { LockMode } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import { Secret, TOTP } from "otpauth";
import { BadRequestSchema } from "@formsvc/proto/google/rpc/error_details_pb.js";
import { requireCaller } from "@formsvc/platform/caller.ts";
import { newId, randomToken } from "@formsvc/platform/ids.ts";
import { sealer } from "@formsvc/platform/sealing.ts";
import { hashSecret } from "../api-keys.ts";
import { UserEntity, type User } from "../entities/user.ts";
import { MembershipEntity } from "../entities/membership.ts";
import { WorkspaceEntity } from "../entities/workspace.ts";
import { toUserMessage, toWorkspaceMessage, userNotFound, type IdentityContext, type IdentityHandlers } from "./context.ts";
import { productName } from "@formsvc/platform/product.ts";

/** The authenticator's settings: what every app assumes (and Google Authenticator reads nothing else). */
const totpSettings = { issuer: productName, algorithm: "SHA1", digits: 6, period: 30 } as const;
/** Codes of the step before and after the current one pass too (a clock a little off, a code typed late). */
const stepWindow = 1;
export const recoveryCodeCount = 10;
/** Recovery codes: 12 characters of an alphabet without look-alikes (60 bits), shown as xxxx-xxxx-xxxx. */
const recoveryAlphabet = "abcdefghjkmnpqrstuvwxyz23456789";
const recoveryLength = 12;
export const secondFactorChallengeLifetimeMs = 5 * 60_000;
export const maxSecondFactorFailures = 5;

const wrongCode = () =>
  new ConnectError("that code is not right: enter the current code of your authenticator app, or an unused recovery code", Code.InvalidArgument);
const noSecondFactor = () => new ConnectError("two-factor sign-in is not on for this account", Code.FailedPrecondition);
const challengeEnded = () => new ConnectError("this sign-in has ended (too long or too many wrong codes): sign in again", Code.Unauthenticated);

type TwoFactorHandlers = Pick<
  IdentityHandlers,
  | "getTwoFactorStatus"
  | "beginTwoFactorEnrolment"
  | "confirmTwoFactorEnrolment"
  | "regenerateRecoveryCodes"
  | "disableTwoFactor"
  | "passSecondFactor"
  | "setWorkspaceTwoFactorRequirement"
>;

function newRecoveryCode(): string {
  let code = "";
  for (let i = 0; i < recoveryLength; i++) code += recoveryAlphabet[randomInt(recoveryAlphabet.length)];
  return `${code.slice(0, 4)}-${code.slice(4, 8)}-${code.slice(8)}`;
}

/** A recovery code as typed (any case, dashes or spaces) in its stored form; undefined when it cannot be one. */
function normaliseRecoveryCode(typed: string): string | undefined {
  const code = typed.toLowerCase().replace(/[\s-]/g, "");
  return code.length === recoveryLength && [...code].every((ch) => recoveryAlphabet.includes(ch)) ? code : undefined;
}

/** The second factor's rules over identity's tables: what sign-in, password reset and sessions ask of it. */
export function secondFactor(c: IdentityContext) {
  const { deps, now, fork, table, schemaTable } = c;
  const secrets = deps.secretKey ? sealer(deps.secretKey, "formsvc totp secrets") : undefined;

  function sealed(): NonNullable<typeof secrets> {
    if (!secrets) throw new ConnectError("two-factor sign-in needs SECRET_KEY, which this identity service was not given", Code.FailedPrecondition);
    return secrets;
  }
  const sealSecret = (userId: string, base32: string) => sealed().seal(base32, userId).toString("base64");
  const openSecret = (userId: string, stored: string) => sealed().open(Buffer.from(stored, "base64"), userId).toString("utf8");
  const totpOf = (user: User, base32: string) => new TOTP({ ...totpSettings, label: user.email, secret: Secret.fromBase32(base32) });

  /**
   * Whether `code` passes for `user`, whose second factor is `base32` (theirs, or the one being enrolled): a
   * TOTP code of a step not passed before (the step is then kept), or an unused recovery code (then used up).
   */
  async function passes(em: EntityManager, user: User, code: string, base32 = user.totpSecret && openSecret(user.id, user.totpSecret)): Promise<boolean> {
    if (!base32) return false;
    const typed = code.replace(/\s/g, "");
    if (/^\d{6}$/.test(typed)) {
      const at = now().getTime();
      const delta = totpOf(user, base32).validate({ token: typed, timestamp: at, window: stepWindow });
      if (delta === null) return false;
      const step = Math.floor(at / 1000 / totpSettings.period) + delta;
      // Atomic: of two requests with one code, one passes.
      const kept = await em.execute<unknown[]>(
        `update ${table(UserEntity)} set "totp_last_step" = ? where "id" = ? and ("totp_last_step" is null or "totp_last_step" < ?) returning "id"`,
        [step, user.id, step],
      );
      return kept.length === 1;
    }
    const recovery = normaliseRecoveryCode(typed);
    if (!recovery || !user.totpSecret) return false;
    const used = await em.execute<unknown[]>(`delete from ${recoveryCodesTable} where "user_id" = ? and "code_hash" = ? returning "user_id"`, [user.id, hashSecret(recovery)]);
    return used.length === 1;
  }

  const recoveryCodesTable = schemaTable("recovery_codes");
  const challengesTable = schemaTable("second_factor_challenges");

  /** New recovery codes for `user`, replacing any they had; the codes themselves, to show once. */
  async function replaceRecoveryCodes(em: EntityManager, userId: string): Promise<string[]> {
    const codes = Array.from({ length: recoveryCodeCount }, newRecoveryCode);
    await em.execute(`delete from ${recoveryCodesTable} where "user_id" = ?`, [userId]);
    const createdAt = now();
    for (const code of codes) {
      await em.execute(`insert into ${recoveryCodesTable} ("user_id", "code_hash", "created_at") values (?, ?, ?)`, [userId, hashSecret(normaliseRecoveryCode(code)!), createdAt]);
    }
    return codes;
  }

  /** The workspaces of the user `userId` names (a parameter, or a column of an enclosing query) that require a second factor. */
  const workspacesRequiring = (userId: string) => `${table(WorkspaceEntity)} w join ${table(MembershipEntity)} m on m."workspace_id" = w."id"
    where m."user_id" = ${userId} and w."require_two_factor"`;
  const requiringWorkspaces = workspacesRequiring("?");
  /** SQL true when the user of the `users` row `alias` must enrol a second factor (mustEnrol, inside a query). */
  const mustEnrolOf = (alias: string) => `(${alias}."totp_secret" is null and exists (select 1 from ${workspacesRequiring(`${alias}."id"`)}))`;

  /** Names of the workspaces of `userId` that require a second factor. */
  async function requiredBy(em: EntityManager, userId: string): Promise<string[]> {
    const rows = await em.execute<{ name: string }[]>(`select w."name" from ${requiringWorkspaces} order by w."name"`, [userId]);
    return rows.map((r) => r.name);
  }

  /**
   * Whether `user` must turn a second factor on before using anything: a workspace of theirs requires it. Asked at
   * every session's resolution: one `exists` for a person without a second factor, nothing for one with.
   */
  async function mustEnrol(em: EntityManager, user: User): Promise<boolean> {
    if (user.totpSecret) return false;
    const [row] = await em.execute<{ required: boolean }[]>(`select exists (select 1 from ${requiringWorkspaces}) as "required"`, [user.id]);
    return Boolean(row?.required);
  }

  /** A challenge for a password sign-in of `user`, whose second factor is on: its token. */
  async function challenge(userId: string): Promise<string> {
    const token = randomToken(32);
    const expiresAt = new Date(now().getTime() + secondFactorChallengeLifetimeMs);
    await fork().execute(`insert into ${challengesTable} ("id", "user_id", "token_hash", "expires_at") values (?, ?, ?, ?)`, [newId(), userId, hashSecret(token), expiresAt]);
    return token;
  }

  /** INVALID_ARGUMENT on `field` unless `code` passes for `user` (used where a second factor is asked again). */
  async function requirePass(em: EntityManager, user: User, code: string, field: string): Promise<void> {
    if (!code.trim()) throw codeRequired(field);
    if (!(await passes(em, user, code))) throw codeRequired(field, wrongCode().rawMessage);
  }

  return { passes, mustEnrol, mustEnrolOf, requiredBy, challenge, requirePass, replaceRecoveryCodes, sealSecret, openSecret, totpOf, challengesTable, recoveryCodesTable };
}

/** INVALID_ARGUMENT naming the field a second factor's code goes in, so the app can ask for it there. */
export function codeRequired(field: string, message = "enter a code of your authenticator app, or a recovery code: this account signs in with two factors"): ConnectError {
  return new ConnectError(`${field}: ${message}`, Code.InvalidArgument, undefined, [
    { desc: BadRequestSchema, value: { fieldViolations: [{ field, description: message }] } },
  ]);
}

export function twoFactorHandlers(c: IdentityContext): TwoFactorHandlers {
  const { fork, inTransaction, callerUser, workspaceAs } = c;
  const factor = secondFactor(c);

  return {
    async getTwoFactorStatus(_req, ctx) {
      const em = fork();
      const user = await callerUser(em, requireCaller(ctx));
      const [{ left }] = await em.execute<{ left: number }[]>(`select count(*)::int as "left" from ${factor.recoveryCodesTable} where "user_id" = ?`, [user.id]);
      return { enabled: Boolean(user.totpSecret), recoveryCodesLeft: user.totpSecret ? left : 0, requiredBy: await factor.requiredBy(em, user.id) };
    },

    async beginTwoFactorEnrolment(_req, ctx) {
      const em = fork();
      const user = await callerUser(em, requireCaller(ctx));
      if (user.totpSecret) throw new ConnectError("two-factor sign-in is on already: turn it off first to enrol another authenticator", Code.AlreadyExists);
      const secret = new Secret({ size: 20 });
      user.totpPendingSecret = factor.sealSecret(user.id, secret.base32);
      await em.flush();
      return { secret: secret.base32, uri: factor.totpOf(user, secret.base32).toString() };
    },

    async confirmTwoFactorEnrolment(req, ctx) {
      const caller = requireCaller(ctx);
      return inTransaction(async (em) => {
        const user = await em.findOne(UserEntity, { id: caller }, { lockMode: LockMode.PESSIMISTIC_WRITE });
        if (!user) throw userNotFound();
        if (user.totpSecret) throw new ConnectError("two-factor sign-in is on already", Code.AlreadyExists);
        if (!user.totpPendingSecret) throw new ConnectError("begin enrolment first: no authenticator is being set up", Code.FailedPrecondition);
        if (!(await factor.passes(em, user, req.code, factor.openSecret(user.id, user.totpPendingSecret)))) throw codeRequired("code", wrongCode().rawMessage);
        await em.nativeUpdate(UserEntity, { id: user.id }, { totpSecret: user.totpPendingSecret, totpPendingSecret: null });
        return { recoveryCodes: await factor.replaceRecoveryCodes(em, user.id) };
      }, false);
    },

    async regenerateRecoveryCodes(req, ctx) {
      const caller = requireCaller(ctx);
      return inTransaction(async (em) => {
        const user = await callerUser(em, caller);
        if (!user.totpSecret) throw noSecondFactor();
        await factor.requirePass(em, user, req.code, "code");
        return { recoveryCodes: await factor.replaceRecoveryCodes(em, user.id) };
      }, false);
    },

    async disableTwoFactor(req, ctx) {
      const caller = requireCaller(ctx);
      return inTransaction(async (em) => {
        const user = await callerUser(em, caller);
        if (!user.totpSecret) throw noSecondFactor();
        const requiring = await factor.requiredBy(em, user.id);
        if (requiring.length) throw new ConnectError(`two-factor sign-in stays on: ${requiring.join(", ")} requires it of its members`, Code.FailedPrecondition);
        await factor.requirePass(em, user, req.code, "code");
        await em.nativeUpdate(UserEntity, { id: user.id }, { totpSecret: null, totpPendingSecret: null, totpLastStep: null });
        await em.execute(`delete from ${factor.recoveryCodesTable} where "user_id" = ?`, [user.id]);
        return {};
      }, false);
    },

    async passSecondFactor(req) {
      if (!req.challenge) throw challengeEnded();
      // A wrong code is counted (and the challenge ends at the fifth) in its own commit: the refusal follows it.
      const outcome = await inTransaction(async (em) => {
        const [row] = await em.execute<{ id: string; user_id: string; failures: number }[]>(
          `select "id", "user_id", "failures" from ${factor.challengesTable} where "token_hash" = ? and "expires_at" > ? for update`,
          [hashSecret(req.challenge), c.now()],
        );
        if (!row) return { ended: true as const };
        const user = await em.findOne(UserEntity, { id: row.user_id });
        if (user && user.totpSecret && (await factor.passes(em, user, req.code))) {
          await em.execute(`delete from ${factor.challengesTable} where "id" = ?`, [row.id]);
          return { user };
        }
        if (!user || !user.totpSecret || row.failures + 1 >= maxSecondFactorFailures) {
          await em.execute(`delete from ${factor.challengesTable} where "id" = ?`, [row.id]);
          return { ended: true as const };
        }
        await em.execute(`update ${factor.challengesTable} set "failures" = "failures" + 1 where "id" = ?`, [row.id]);
        return { wrong: true as const };
      }, false);
      if ("user" in outcome && outcome.user) return { user: toUserMessage(outcome.user) };
      if ("wrong" in outcome) throw wrongCode();
      throw challengeEnded();
    },

    async setWorkspaceTwoFactorRequirement(req, ctx) {
      return inTransaction(async (em) => {
        const workspace = await workspaceAs(em, ctx, req.workspaceId, ["owner"], () => new ConnectError("only the workspace's owner may require two-factor sign-in", Code.PermissionDenied));
        if (req.required && !workspace.requireTwoFactor) {
          const owner = await em.findOne(UserEntity, { id: workspace.ownerId });
          if (!owner?.totpSecret) throw new ConnectError("turn on two-factor sign-in for yourself first: the owner is a member too", Code.FailedPrecondition);
        }
        workspace.requireTwoFactor = req.required;
        await em.flush();
        return { workspace: toWorkspaceMessage(workspace, "owner") };
      }, false);
    },
  };
}
