// The app's own routes for signing in and out: sessions, sign-up, password reset, e-mail verification and
// invitations. They set and clear the session cookie, so they are not resource routes of the table;
// every one but sign-out-all works without a session, behind per-address and per-email attempt limits.
//
//   GET  /session                      {user|null, csrfToken, signUp, signIn} (signUp: SIGNUP, for the sign-up page;
//                                      signIn: {oidc: {name}|null, passwordSignIn}, see oidc.ts)
//   POST /auth/signup | /auth/signin   sets the session cookie       POST /auth/signout
//                                      (signin: or {twoFactorRequired, challenge}, then POST /auth/signin/second-factor {challenge, code})
//   POST /auth/password-reset          mails a link                  POST /auth/password-reset/complete {token, password, deleteApiKeys?}
//   (complete: secondFactorCode too for a person with a second factor)
//   POST /auth/verify-email            POST /session/sign-out-all (ends every session of the person)
//   PUT  /session/locale {locale}      the person's app language (a BCP 47 tag, null for the browser's): {user}
//   POST /invitations/lookup {token}   POST /invitations/accept {token, name?, password?}: signs up (or adds the signed-in person)
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { type Request, type Response, type Router } from "express";
import { z } from "zod";
import { appWorkspaceJson, invitationJson, sessionUserJson, userJson } from "@formsvc/api-records";
import { asCaller } from "@formsvc/platform/caller.ts";
import type { SignUpPolicy } from "@formsvc/platform/config.ts";
import type { User } from "@formsvc/proto/identity/v1/identity_pb.js";
import { sessionActions } from "../audit/actions.ts";
import { recordAppEvent, signInEvent, type AuditTrail } from "../audit/trail.ts";
import type { GatewayDeps } from "../deps.ts";
import { HttpError } from "../http-errors.ts";
import type { RateLimitStore } from "../rate-limit/sliding-window.ts";
import { parse } from "../routes/route.ts";
import { emailSchema } from "../routes/workspaces.ts";
import { admitAttempt, passwordResetLimits, signInLimits, signUpLimits } from "./attempt-limits.ts";
import { signInOptions } from "./oidc.ts";
import {
  clearSessionCookie,
  issueCsrfToken,
  requireSession,
  sessionTokenOf,
  sessionUser,
  setSessionCookie,
  signedInSession,
  type CookiePolicy,
} from "./security.ts";
import { newRouter } from "../routing.ts";

const wrongCredentials = "email or password is wrong";

const password = z.string().min(1, "is required").max(1000);
const token = z.string().trim().min(1, "is required").max(200);
const signUpSchema = z.strictObject({ email: emailSchema, name: z.string().max(100).optional(), password });
const signInSchema = z.strictObject({ email: emailSchema, password });
// A code of the authenticator (6 digits) or a recovery code (xxxx-xxxx-xxxx), as typed.
const secondFactorCode = z.string().trim().min(1, "is required").max(40);
const secondFactorSchema = z.strictObject({ challenge: token, code: secondFactorCode });
const passwordResetRequestSchema = z.strictObject({ email: emailSchema });
// deleteApiKeys (default true, as the page's box): also delete the person's API keys. A never-verified
// address's keys are deleted whatever it says.
// secondFactorCode: asked of a person with a second factor (a 400 on that field without it).
const passwordResetSchema = z.strictObject({ token, password, deleteApiKeys: z.boolean().optional(), secondFactorCode: secondFactorCode.optional() });
const tokenSchema = z.strictObject({ token });
const localeSchema = z.strictObject({ locale: z.string().max(35).nullable() });
const acceptInvitationSchema = z.strictObject({ token, name: z.string().max(100).optional(), password: z.string().max(1000).optional() });

export function sessionRoutes(
  identity: GatewayDeps["identity"],
  store: RateLimitStore,
  policy: CookiePolicy,
  signUp: SignUpPolicy,
  signIn: ReturnType<typeof signInOptions> = signInOptions(undefined),
  audit?: AuditTrail,
): Router {
  const router = newRouter();
  const address = (req: Request) => req.ip ?? "unknown";
  /** Records a sign-in or a joining in the audit log (a person's sign-ins go to each of their workspaces). */
  const record = (req: Request, res: Response, event: Parameters<typeof recordAppEvent>[3]) => recordAppEvent(audit, req, res, event);
  const body = <T extends z.ZodType>(schema: T, req: Request) => parse(schema, req.body ?? {}, "body");
  /** Counts an attempt of the sign-up family (one limit per address). */
  const signUpAttempt = (req: Request) => admitAttempt(store, signUpLimits, { address: address(req), email: "" });

  router.get("/session", async (req, res) => {
    const session = await signedInSession(identity, req, res, policy);
    res.setHeader("Cache-Control", "no-store");
    res.json({
      user: session ? sessionUserJson(session.user) : null,
      twoFactorRequired: session?.twoFactorRequired ?? false,
      csrfToken: res.locals.csrfToken,
      signUp,
      signIn,
    });
  });

  async function startSession(res: Response, user: User) {
    const { token, expiresAt, twoFactorRequired } = await identity.createSession({ userId: user.id });
    setSessionCookie(res, policy, token, expiresAt ? timestampDate(expiresAt) : new Date(Date.now() + 30 * 86400_000));
    // A new CSRF token with every new session.
    const csrfToken = issueCsrfToken(res, policy);
    res.setHeader("Cache-Control", "no-store");
    // Whether the person must turn a second factor on before anything else, as /session tells.
    return { user: sessionUserJson(user), csrfToken, twoFactorRequired };
  }

  router.post("/auth/signup", async (req, res) => {
    const { email, name, password } = body(signUpSchema, req);
    await signUpAttempt(req);
    const { user } = await identity.signUp({ email, name: name ?? "", password });
    res.status(201).json(await startSession(res, user!));
  });

  router.post("/auth/signin", async (req, res) => {
    const { email, password } = body(signInSchema, req);
    await admitAttempt(store, signInLimits, { address: address(req), email: email.toLowerCase() });
    let verified;
    try {
      verified = await identity.verifyPassword({ email, password });
    } catch (err) {
      if (ConnectError.from(err).code === Code.Unauthenticated) {
        // The email is only sent for identity to find its account (kept as the target, never as text).
        record(req, res, { actor: { type: "anonymous" }, action: sessionActions.signInFailed, targetType: "user", targetId: "", scope: { personal: true }, subjectEmail: email });
        throw new HttpError(401, wrongCredentials);
      }
      throw err;
    }
    // A person with a second factor gets a challenge, not a session: the code comes next (and the sign-in is
    // recorded then).
    if (verified.secondFactorChallenge) {
      res.setHeader("Cache-Control", "no-store");
      res.json({ twoFactorRequired: true, challenge: verified.secondFactorChallenge });
      return;
    }
    const session = await startSession(res, verified.user!);
    record(req, res, signInEvent(verified.user!.id));
    res.json(session);
  });

  // The second step of a sign-in with two factors: the challenge and a code (5 wrong ones end it).
  router.post("/auth/signin/second-factor", async (req, res) => {
    const { challenge, code } = body(secondFactorSchema, req);
    await signUpAttempt(req);
    const { user } = await identity.passSecondFactor({ challenge, code });
    const session = await startSession(res, user!);
    record(req, res, signInEvent(user!.id));
    res.json(session);
  });

  // Always the same 202: whether anyone has this email is not told (the mail tells its owner).
  router.post("/auth/password-reset", async (req, res) => {
    const { email } = body(passwordResetRequestSchema, req);
    await admitAttempt(store, passwordResetLimits, { address: address(req), email: email.toLowerCase() });
    await identity.requestPasswordReset({ email });
    res.status(202).json({ message: "if an account has this email, a link to set a new password is on its way" });
  });

  // The mailed link's page sends its token, the new password and whether to delete the API keys too; the
  // person is signed in with it.
  router.post("/auth/password-reset/complete", async (req, res) => {
    const { token, password, deleteApiKeys, secondFactorCode } = body(passwordResetSchema, req);
    await signUpAttempt(req);
    const { user } = await identity.resetPassword({ token, password, keepApiKeys: deleteApiKeys === false, secondFactorCode });
    res.json(await startSession(res, user!));
  });

  router.post("/auth/verify-email", async (req, res) => {
    const { token } = body(tokenSchema, req);
    await signUpAttempt(req);
    const { user } = await identity.verifyEmail({ token });
    res.setHeader("Cache-Control", "no-store");
    res.json({ user: sessionUserJson(user!) });
  });

  router.post("/auth/signout", async (req, res) => {
    const token = sessionTokenOf(req, policy);
    if (token) await identity.deleteSession({ token });
    clearSessionCookie(res, policy);
    issueCsrfToken(res, policy);
    res.status(204).end();
  });

  // Signs out everywhere: every session of the person ends, this browser's too.
  router.post("/session/sign-out-all", requireSession(identity, policy), async (_req, res) => {
    const { deleted } = await identity.deleteUserSessions({}, asCaller((res.locals.user as User).id));
    clearSessionCookie(res, policy);
    issueCsrfToken(res, policy);
    res.setHeader("Cache-Control", "no-store");
    res.json({ signedOutSessions: deleted });
  });

  // The language the app speaks to the person, kept with their account so it follows them to every browser.
  router.put("/session/locale", requireSession(identity, policy), async (req, res) => {
    const { locale } = body(localeSchema, req);
    const { user } = await identity.setUserLocale({ locale: locale ?? "" }, asCaller((res.locals.user as User).id));
    res.setHeader("Cache-Control", "no-store");
    res.json({ user: sessionUserJson(user!) });
  });

  // The mailed invitation's page: what it invites to, then accepting it (signed in as the invited email,
  // or signing up with a name and password, which starts a session). Tokens travel in bodies, never URLs
  // the gateway logs.
  router.post("/invitations/lookup", async (req, res) => {
    const { token } = body(tokenSchema, req);
    await signUpAttempt(req);
    const invitation = await identity.getInvitation({ token });
    res.setHeader("Cache-Control", "no-store");
    res.json(invitationJson(invitation));
  });

  router.post("/invitations/accept", async (req, res) => {
    const { token, name, password } = body(acceptInvitationSchema, req);
    await signUpAttempt(req);
    const user = await sessionUser(identity, req, res, policy);
    const joined = (userId: string, workspaceId: string) =>
      record(req, res, { actor: { type: "user", userId }, action: sessionActions.acceptInvitation, targetType: "member", targetId: userId, scope: { workspaceId } });
    if (user) {
      const { workspace } = await identity.acceptInvitation({ token }, asCaller(user.id));
      joined(user.id, workspace!.id);
      res.json({ user: userJson(user), workspace: appWorkspaceJson(workspace!, user.id) });
      return;
    }
    if (!password) throw new HttpError(400, "body.password: is required");
    const accepted = await identity.acceptInvitation({ token, name: name ?? "", password });
    joined(accepted.user!.id, accepted.workspace!.id);
    res.status(201).json({ ...(await startSession(res, accepted.user!)), workspace: appWorkspaceJson(accepted.workspace!, accepted.user!.id) });
  });

  return router;
}
