// Sessions and CSRF of /app/api.
// - The session is the opaque token identity issued, in the HttpOnly cookie `formsvc_session`; each
//   request resolves it with identity (nothing cached), so signing out ends it everywhere at once.
// - CSRF: a random token in the readable cookie `formsvc_csrf`, which every request that changes
//   something (any method but GET and HEAD) must send back in `X-CSRF-Token` (a double submit: another
//   site can make the browser send the cookie, but cannot read it to set the header). The Origin header,
//   when sent, must be the app's own.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { Request, RequestHandler, Response } from "express";
import type { IdentityService, User } from "@formsvc/proto/identity/v1/identity_pb.js";
import { HttpError } from "../http-errors.ts";
import { appendCookie, cookiesOf, csrfCookie, csrfHeader, serializeCookie, sessionCookie } from "./cookies.ts";

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"]);

interface CookiePolicy {
  /** Secure cookies: when PUBLIC_URL is https. */
  secure: boolean;
  /** Origins allowed to send requests that change something (PUBLIC_URL's, and the request's own host). */
  publicOrigin: string;
}

export function cookiePolicy(publicUrl: string): CookiePolicy {
  const url = new URL(publicUrl);
  return { secure: url.protocol === "https:", publicOrigin: url.origin };
}

function newCsrfToken(): string {
  return randomBytes(24).toString("base64url");
}

/** Sets a new CSRF cookie and remembers it for this response. */
export function issueCsrfToken(res: Response, policy: CookiePolicy): string {
  const token = newCsrfToken();
  appendCookie(res, serializeCookie(csrfCookie, token, { httpOnly: false, secure: policy.secure }));
  res.locals.csrfToken = token;
  return token;
}

/** Makes sure the browser holds a CSRF token: an existing one is kept. */
export function ensureCsrfCookie(policy: CookiePolicy): RequestHandler {
  return (req, res, next) => {
    const current = cookiesOf(req)[csrfCookie];
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
    const cookie = cookiesOf(req)[csrfCookie];
    const header = req.get(csrfHeader);
    if (!cookie || !header || !sameToken(cookie, header)) {
      throw new HttpError(403, "request refused: the CSRF token is missing or wrong; reload the page and try again");
    }
    next();
  };
}

export function setSessionCookie(res: Response, policy: CookiePolicy, token: string, expires: Date): void {
  appendCookie(res, serializeCookie(sessionCookie, token, { httpOnly: true, secure: policy.secure, expires }));
}

export function clearSessionCookie(res: Response, policy: CookiePolicy): void {
  appendCookie(res, serializeCookie(sessionCookie, "", { httpOnly: true, secure: policy.secure, expires: new Date(0) }));
}

export function sessionTokenOf(req: Request): string | undefined {
  const token = cookiesOf(req)[sessionCookie];
  return token && token.length <= 200 ? token : undefined;
}

/** The signed-in user, or undefined (an unknown or expired session cookie is cleared). */
export async function sessionUser(
  identity: Client<typeof IdentityService>,
  req: Request,
  res: Response,
  policy: CookiePolicy,
): Promise<User | undefined> {
  const token = sessionTokenOf(req);
  if (!token) return undefined;
  try {
    return (await identity.resolveSession({ token })).user;
  } catch (err) {
    if (ConnectError.from(err).code !== Code.Unauthenticated) throw err;
    clearSessionCookie(res, policy);
    return undefined;
  }
}

/** Lets only signed-in requests through: `res.locals.user`; 401 otherwise. */
export function requireSession(identity: Client<typeof IdentityService>, policy: CookiePolicy): RequestHandler {
  return async (req, res, next) => {
    const user = await sessionUser(identity, req, res, policy);
    if (!user) throw new HttpError(401, "sign in first: your session has ended or does not exist");
    res.locals.user = user;
    next();
  };
}
