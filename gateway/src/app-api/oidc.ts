// Sign-in through an OpenID Connect provider: the browser's side of the flow (oidc-client.ts talks to the
// provider), what /session tells the app about signing in, and OIDC_ONLY's refusal of passwords.
//
//   GET /auth/oidc/start      302 to the provider; the flow's state, nonce and PKCE verifier go into the sealed,
//                             HttpOnly, SameSite=Lax cookie `formsvc_oidc` (`__Host-` on https), for 10 minutes
//   GET /auth/oidc/callback   takes that cookie once (it is deleted whatever happens), has the provider's answer
//                             checked and its code redeemed, signs the person in as identity says, 302s to /app.
//                             A refusal signs nobody in: 400 (a broken, stale or foreign flow), 403 (the account is
//                             refused) or 502, as a page for a browser and `{"error"}` for anyone else.
//
// The provider owns the second factor: a sign-in through it asks for no local one.
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { Request, RequestHandler, Response, Router } from "express";
import type { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { escapeHtml } from "../hosted/html-text.ts";
import { recordAppEvent, signInEvent, type AuditTrail } from "../audit/trail.ts";
import { errorAnswer, HttpError } from "../http-errors.ts";
import { newRouter } from "../routing.ts";
import { appCookieName, appendCookie, expiredCookie, parseCookies, repeatedCookies, serializeCookie } from "./cookies.ts";
import type { OidcProvider } from "./oidc-client.ts";
import { issueCsrfToken, setSessionCookie, type CookiePolicy } from "./security.ts";

/** What /app/api/session tells the app about signing in: the provider's name, and whether passwords are offered. */
export function signInOptions(provider: OidcProvider | undefined) {
  return { oidc: provider ? { name: provider.settings.name } : null, passwordSignIn: !provider?.settings.only };
}

/** With OIDC_ONLY, the routes that sign in or up with a password (or reset one): refused before they run. */
export function refusePasswordSignIn(provider: OidcProvider | undefined): RequestHandler {
  const passwordRoutes = new Set(["/auth/signin", "/auth/signup", "/auth/password-reset", "/auth/password-reset/complete"]);
  return (req, _res, next) => {
    const withPassword = passwordRoutes.has(req.path) || (req.path === "/invitations/accept" && req.body?.password !== undefined);
    if (provider?.settings.only && req.method === "POST" && withPassword) {
      throw new HttpError(403, `password sign-in is turned off here: sign in with ${provider.settings.name}`);
    }
    next();
  };
}

export function oidcRoutes(identity: Client<typeof IdentityService>, provider: OidcProvider | undefined, policy: CookiePolicy, audit?: AuditTrail): Router {
  const router = newRouter();
  if (!provider) {
    router.get(["/auth/oidc/start", "/auth/oidc/callback"], () => {
      throw new HttpError(404, "sign-in through OpenID Connect is not configured here (OIDC_ISSUER)");
    });
    return router;
  }
  const { name } = provider.settings;
  const cookieName = appCookieName("formsvc_oidc", policy.secure);

  /** A refused step of the flow: a page for a browser (it came by a link or a redirect), `{"error"}` for others. */
  function refuse(req: Request, res: Response, err: unknown): void {
    const answer = errorAnswer(err);
    if (answer.status >= 500 && !(err instanceof HttpError)) provider!.logger.error({ err }, "an OpenID Connect sign-in failed");
    res.status(answer.status);
    if (req.accepts(["json", "html"]) === "html") res.type("html").send(failurePage(answer.message));
    else res.json({ error: answer.message });
  }

  router.get("/auth/oidc/start", async (req, res) => {
    res.setHeader("Cache-Control", "no-store");
    try {
      const { url, transaction } = await provider.start();
      const cookie = serializeCookie(cookieName, provider.seal(transaction), { httpOnly: true, secure: policy.secure, expires: new Date(transaction.expiresAt) });
      appendCookie(res, cookie);
      res.redirect(302, url.href);
    } catch (err) {
      refuse(req, res, err);
    }
  });

  router.get("/auth/oidc/callback", async (req, res) => {
    res.setHeader("Cache-Control", "no-store");
    // Single use: whatever follows, this flow's cookie goes.
    appendCookie(res, expiredCookie(cookieName, { httpOnly: true, secure: policy.secure }));
    try {
      // Two of them: one was planted by another page of this host; neither is trusted.
      const sealed = repeatedCookies(req.get("cookie"), [cookieName]).length ? undefined : parseCookies(req.get("cookie"))[cookieName];
      const transaction = sealed ? provider.open(sealed) : undefined;
      if (!transaction) {
        throw new HttpError(400, `this sign-in with ${name} cannot be finished: it was finished already, took longer than 10 minutes, or began in another browser; sign in again`);
      }
      const claims = await provider.finish(new URL(req.originalUrl, policy.publicOrigin), transaction);
      const { user } = await identity.signInWithOidc(claims).catch((err: unknown) => {
        const refused = ConnectError.from(err);
        if (refused.code === Code.FailedPrecondition || refused.code === Code.PermissionDenied) throw new HttpError(403, `${name} signed you in, but ${refused.rawMessage}`);
        throw err;
      });
      const session = await identity.createSession({ userId: user!.id });
      setSessionCookie(res, policy, session.token, timestampDate(session.expiresAt!));
      issueCsrfToken(res, policy);
      recordAppEvent(audit, req, res, signInEvent(user!.id));
      res.redirect(302, "/app");
    } catch (err) {
      refuse(req, res, err);
    }
  });

  return router;
}

/** The page a browser gets when a sign-in through the provider is refused: what happened, and the way back. */
function failurePage(message: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign-in failed</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#1f2328}</style></head>
<body><main><h1>Sign-in failed</h1><p>${escapeHtml(message[0]!.toUpperCase() + message.slice(1))}.</p><p><a href="/app/signin">Back to sign in</a></p></main></body></html>`;
}
