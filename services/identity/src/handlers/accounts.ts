// Accounts: sign-up (and the operator's users), passwords and their reset by mail, email verification.
import { Code, ConnectError } from "@connectrpc/connect";
import { UniqueConstraintViolationException } from "@mikro-orm/core";
import { actorOf, operator, requireCaller } from "@formsvc/platform/caller.ts";
import { Plan } from "@formsvc/proto/identity/v1/identity_pb.js";
import { decoyPasswordHash, hashPassword, passwordProblem, verifyPassword } from "../passwords.ts";
import { passwordResetMail, verificationMail } from "../mails.ts";
import { ApiKeyEntity } from "../entities/api-key.ts";
import { SessionEntity } from "../entities/session.ts";
import { UserEntity } from "../entities/user.ts";
import {
  emailPattern,
  invalidLink,
  maxEmailLength,
  normaliseEmail,
  planFromProto,
  toUserMessage,
  toWorkspaceMessage,
  userExists,
  validateEmail,
  validateName,
  wrongCredentials,
  type IdentityContext,
  type IdentityHandlers,
} from "./context.ts";
import { secondFactor } from "./two-factor.ts";

type AccountHandlers = Pick<
  IdentityHandlers,
  "createUser" | "signUp" | "requestPasswordReset" | "resetPassword" | "verifyEmail" | "verifyPassword" | "setPassword" | "getCurrentUser" | "setUserLocale"
>;

export function accountHandlers(c: IdentityContext): AccountHandlers {
  const { deps, now, fork, inTransaction, newUser, mailLink, useLink, peekLink, spendLinks, findUserByEmail, callerUser, admitAccount, firstAccountAdministers } = c;
  const factor = secondFactor(c);

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
        await firstAccountAdministers(em, user);
        // Whoever signs up is asked to confirm the address; the operator's users are not mailed.
        if (options.verifyEmail) await mailLink(em, "email-verification", { email, userId: user.id }, (url) => verificationMail(email, name, url));
        return { user: toUserMessage(user), workspace: toWorkspaceMessage(workspace) };
      }, options.verifyEmail);
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) throw userExists();
      throw err;
    }
  }

  return {
    createUser: (req) => registerUser(req, req.password || null, { verifyEmail: false }),

    // Whoever signs up starts on the free plan, when SIGNUP lets them.
    signUp: async (req) => {
      admitAccount(normaliseEmail(req.email), "sign-up");
      return registerUser({ ...req, plan: Plan.FREE }, req.password, { verifyEmail: true });
    },

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
      const link = await peekLink(fork(), "password-reset", { token: req.token });
      const user = link?.user_id ? await fork().findOne(UserEntity, { id: link.user_id }) : null;
      if (!link || !user) throw invalidLink();
      // A refused password leaves the link usable, so the person can try another.
      const problem = await passwordProblem(req.password, [user.email, user.name]);
      if (problem) throw new ConnectError(problem, Code.InvalidArgument);
      // So is a missing or wrong second factor: a mailed link alone does not sign its reader in.
      if (user.totpSecret) await factor.requirePass(fork(), user, req.secondFactorCode, "second_factor_code");
      const passwordHash = await hashPassword(req.password);
      const reset = await inTransaction(async (em) => {
        if (!(await useLink(em, "password-reset", { token: req.token }))) throw invalidLink();
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
        const link = await useLink(em, "email-verification", { token: req.token });
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
      // With a second factor, the password alone starts no session: the gateway asks for a code.
      return { user: toUserMessage(user), secondFactorChallenge: user.totpSecret ? await factor.challenge(user.id) : "" };
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


    async getCurrentUser(_req, ctx) {
      const user = await callerUser(fork(), requireCaller(ctx));
      return { user: toUserMessage(user) };
    },

    async setUserLocale(req, ctx) {
      const locale = canonicalLocale(req.locale);
      const em = fork();
      const user = await callerUser(em, requireCaller(ctx));
      user.locale = locale;
      await em.flush();
      return { user: toUserMessage(user) };
    },
  };
}

/** A BCP 47 tag as Intl writes it, null for none; INVALID_ARGUMENT for what is no tag. */
function canonicalLocale(tag: string): string | null {
  if (!tag.trim()) return null;
  const invalid = () => new ConnectError("locale must be a BCP 47 language tag, such as de or pt-BR", Code.InvalidArgument);
  if (tag.length > 35) throw invalid();
  try {
    return Intl.getCanonicalLocales(tag.trim())[0] ?? null;
  } catch {
    throw invalid();
  }
}
