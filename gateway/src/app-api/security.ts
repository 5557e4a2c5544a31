// Sessions and CSRF of /app/api.
// - The session is the opaque token identity issued, in the HttpOnly cookie `formsvc_session`
//   (`__Host-formsvc_session` on https); each request resolves it with identity (nothing cached), so
//   signing out ends it everywhere at once.
// - CSRF: a random token in the readable cookie `formsvc_csrf` (`__Host-formsvc_csrf`), which every
//   request that changes something (any method but GET and HEAD) must send back in `X-CSRF-Token` (a
//   double submit: another site can make the browser send the cookie, but cannot read it to set the
//   header). The Origin header, when sent, must be the app's own.
// - A request carrying either cookie twice was sent a tossed cookie (cookies.ts): it is refused, and
//   both names are deleted on every path a copy may live on.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { Request, RequestHandler, Response } from "express";
import type { IdentityService, User } from "@formsvc/proto/identity/v1/identity_pb.js";
import { HttpError } from "../http-errors.ts";
import {
  appendCookie,
  cookieNames,
  cookiePathsFor,
  csrfHeader,
  expiredCookie,
  parseCookies,
  repeatedCookies,
  serializeCookie,
  type CookieNames,
} from "./cookies.ts";

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"]);

export interface CookiePolicy {
  /** Secure cookies with `__Host-` names: when PUBLIC_URL is https. */
  secure: boolean;
  names: CookieNames;
  /** Origins allowed to send requests that change something (PUBLIC_URL's, and the request's own host). */
  publicOrigin: string;
}

export function cookiePolicy(publicUrl: string): CookiePolicy {
  const url = new URL(publicUrl);
  const secure = url.protocol === "https:";
  return { secure, names: cookieNames(secure), publicOrigin: url.origin };
}

const cookiesOf = (req: Request) => parseCookies(req.get("cookie"));

function newCsrfToken(): string {
  return randomBytes(24).toString("base64url");
}

/** Sets a new CSRF cookie and remembers it for this response. */
export function issueCsrfToken(res: Response, policy: CookiePolicy): string {
  const token = newCsrfToken();
  appendCookie(res, serializeCookie(policy.names.csrf, token, { httpOnly: false, secure: policy.secure }));
  res.locals.csrfToken = token;
  return token;
}

/** Makes sure the browser holds a CSRF token: an existing one is kept. */
export function ensureCsrfCookie(policy: CookiePolicy): RequestHandler {
  return (req, res, next) => {
    const current = cookiesOf(req)[policy.names.csrf];
    if (current && /^[A-Za-z0-9_-]{16,100}$/.test(current)) res.locals.csrfToken = current;
    else issueCsrfToken(res, policy);
    next();
  };
}

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The origin a browser at this request's own host would send. */
function ownOrigin(req: Request): string | undefined {
  const host = req.get("host");
  return host ? `${req.protocol}://${host}` : undefined;
}

/** Refuses (403) a request that changes something without the CSRF token, or from another origin. */
export function requireCsrf(policy: CookiePolicy): RequestHandler {
  return (req, _res, next) => {
    if (safeMethods.has(req.method)) return next();
    const origin = req.get("origin");
    if (origin && origin !== policy.publicOrigin && origin !== ownOrigin(req)) {
      throw new HttpError(403, "request refused: it comes from another site");
    }
    const cookie = cookiesOf(req)[policy.names.csrf];
    const header = req.get(csrfHeader);
    if (!cookie || !header || !sameToken(cookie, header)) {
      throw new HttpError(403, "request refused: the CSRF token is missing or wrong; reload the page and try again");
    }
    next();
  };
}

/**
 * Refuses (401) a request that carries the session or the CSRF cookie more than once, deleting both
 * names on `/` and on every path a tossed copy may live on (see cookiePathsFor), so the browser sends
 * neither again and the person signs in afresh; the CSRF cookie on `/` is replaced by a new one (the
 * sign-in form needs it). `__Host-` names can only live on `/`.
 */
export function refuseRepeatedCookies(policy: CookiePolicy): RequestHandler {
  const { session, csrf } = policy.names;
  return (req, res, next) => {
    if (repeatedCookies(req.get("cookie"), [session, csrf]).length === 0) return next();
    const paths = policy.secure ? ["/"] : cookiePathsFor(req.originalUrl);
    for (const path of paths) {
      appendCookie(res, expiredCookie(session, { httpOnly: true, secure: policy.secure, path }));
      if (path !== "/") appendCookie(res, expiredCookie(csrf, { httpOnly: false, secure: policy.secure, path }));
    }
    issueCsrfToken(res, policy);
    res.setHeader("Cache-Control", "no-store");
    throw new HttpError(401, "request refused: it carried two session or CSRF cookies (one was set by another site); sign in again");
  };
}

export function setSessionCookie(res: Response, policy: CookiePolicy, token: string, expires: Date): void {
  appendCookie(res, serializeCookie(policy.names.session, token, { httpOnly: true, secure: policy.secure, expires }));
}

export function clearSessionCookie(res: Response, policy: CookiePolicy): void {
  appendCookie(res, expiredCookie(policy.names.session, { httpOnly: true, secure: policy.secure }));
}

export function sessionTokenOf(req: Request, policy: CookiePolicy): string | undefined {
  const token = cookiesOf(req)[policy.names.session];
  return token && token.length <= 200 ? token : undefined;
}

/**
 * The signed-in user, and whether they must turn a second factor on before anything else (a workspace of
 * theirs requires one); undefined when nobody is signed in (an unknown or expired session cookie is cleared).
 */
export async function signedInSession(
  identity: Client<typeof IdentityService>,
  req: Request,
  res: Response,
  policy: CookiePolicy,
): Promise<{ user: User; twoFactorRequired: boolean } | undefined> {
  const token = sessionTokenOf(req, policy);
  if (!token) return undefined;
  try {
    const { user, twoFactorRequired } = await identity.resolveSession({ token });
    return { user: user!, twoFactorRequired };
  } catch (err) {
    if (ConnectError.from(err).code !== Code.Unauthenticated) throw err;
    clearSessionCookie(res, policy);
    return undefined;
  }
}

/** The signed-in user, or undefined (see signedInSession). */
export async function sessionUser(identity: Client<typeof IdentityService>, req: Request, res: Response, policy: CookiePolicy): Promise<User | undefined> {
  return (await signedInSession(identity, req, res, policy))?.user;
}

/** Lets only signed-in requests through: `res.locals.user` (and `twoFactorRequired`); 401 otherwise. */
export function requireSession(identity: Client<typeof IdentityService>, policy: CookiePolicy): RequestHandler {
  return async (req, res, next) => {
    const session = await signedInSession(identity, req, res, policy);
    if (!session) throw new HttpError(401, "sign in first: your session has ended or does not exist");
    res.locals.user = session.user;
    res.locals.twoFactorRequired = session.twoFactorRequired;
    next();
  };
}

/** Refuses every request of a person who must turn a second factor on first (a workspace of theirs requires it). */
export const refuseUntilSecondFactor: RequestHandler = (_req, res, next) => {
  if (res.locals.twoFactorRequired) {
    throw new HttpError(403, "a workspace you belong to requires two-factor sign-in: turn it on under Account security first");
  }
  next();
};
