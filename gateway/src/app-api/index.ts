// Everything under /app: the app's API at /app/api, then the built app itself.
import express, { type Router } from "express";
import { appRouter, type AppApiDeps } from "./routes.ts";
import { appStaticRoutes } from "./static.ts";

export function appRoutes(deps: AppApiDeps, options: { distDir?: string } = {}): Router {
  const router = express.Router();
  router.use("/api", appRouter(deps));
  router.use(appStaticRoutes(options.distDir));
  return router;
}
