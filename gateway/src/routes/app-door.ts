// /app/api: the web app's door. The session is a cookie and every request that changes something carries
// the CSRF token (see app-api/security.ts); the app never calls /api/v1 or holds a key. Before the session
// check: the preview's sink and the routes that sign in and out; behind it, the table's routes the app is
// served and the form preview. Errors are `{"error"}` with the one status table.
import express, { type Router } from "express";
import { openSignUp } from "@formsvc/platform/config.ts";
import type { User } from "@formsvc/proto/identity/v1/identity_pb.js";
import { auditAtDoor } from "../audit/trail.ts";
import { cookiePolicy, ensureCsrfCookie, refuseRepeatedCookies, refuseUntilSecondFactor, requireCsrf, requireSession } from "../app-api/security.ts";
import { oidcRoutes, refusePasswordSignIn, signInOptions } from "../app-api/oidc.ts";
import { sessionRoutes } from "../app-api/sessions.ts";
import { twoFactorRoutes } from "../app-api/two-factor.ts";
import type { GatewayDeps } from "../deps.ts";
import { draftPreview, formPreview, previewSink } from "../hosted/preview.ts";
import { HttpError, jsonNotFound } from "../http-errors.ts";
import { unsafeInputGuard } from "../input-safety.ts";
import { rateLimit } from "../rate-limit/rate-limit-middleware.ts";
import { send, type ServedRoute } from "./route.ts";
import { newRouter } from "../routing.ts";

export type AppDoorDeps = Pick<GatewayDeps, "identity" | "forms" | "publicUrl" | "brandingUrl" | "signUp" | "oidc" | "audit"> & {
  rateLimits: Pick<GatewayDeps["rateLimits"], "store" | "perIp">;
};

export function appDoor(deps: AppDoorDeps, routes: ServedRoute[]): Router {
  const router = newRouter();
  const policy = cookiePolicy(deps.publicUrl);
  const { store, perIp } = deps.rateLimits;

  router.use(rateLimit(store, "address", perIp, (_res, req) => req.ip ?? "unknown"));
  router.use(refuseRepeatedCookies(policy));
  router.use("/preview", previewSink());

  router.use(ensureCsrfCookie(policy), requireCsrf(policy));
  router.use((req, _res, next) => {
    if (req.method !== "GET" && req.method !== "HEAD" && Number(req.get("content-length") ?? 0) > 0 && !req.is("application/json")) {
      throw new HttpError(415, "Content-Type must be application/json");
    }
    next();
  });
  router.use(express.json({ limit: "1mb" }), unsafeInputGuard);
  // Through the provider, and with OIDC_ONLY by the provider alone.
  router.use(oidcRoutes(deps.identity, deps.oidc, policy, deps.audit));
  router.use(refusePasswordSignIn(deps.oidc));
  router.use(sessionRoutes(deps.identity, store, policy, deps.signUp ?? openSignUp, signInOptions(deps.oidc), deps.audit));

  // Everything below needs a session; all but turning a second factor on, one that has it where it is required.
  router.use(requireSession(deps.identity, policy));
  router.use(twoFactorRoutes(deps.identity, deps.audit));
  router.use(refuseUntilSecondFactor);
  for (const route of routes) {
    router[route.method](route.path, async (req, res) => {
      const userId = (res.locals.user as User).id;
      const { input, answer } = route.accept(req, userId);
      const audited = await auditAtDoor(deps.audit, route.key, input, { actor: { type: "user", userId }, address: req.ip ?? "", requestId: res.locals.requestId });
      const reply = await answer();
      audited(reply);
      send(res, reply);
    });
  }
  router.get("/forms/:id/preview", formPreview(deps.forms, deps.brandingUrl));
  router.post("/forms/:id/preview", draftPreview(deps.forms, deps.brandingUrl));
  // The installation's public address (PUBLIC_URL), which the Share tab's links, embed codes and QR codes name.
  router.get("/public-url", (_req, res) => {
    res.json({ publicUrl: deps.publicUrl });
  });
  router.use(jsonNotFound);
  return router;
}
