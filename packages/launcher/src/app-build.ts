// The web app (app/) is built by Vite into app/dist, which the gateway serves at /app. `npm start` and
// the tests build it when it is missing.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import { repoRoot } from "./system.ts";

/** Where the built app's entry page is. */
export function appIndexFile(root = repoRoot): string {
  return join(root, "app/dist/index.html");
}

/** Whether the app has sources but no build. */
export function appNeedsBuild(root = repoRoot): boolean {
  return existsSync(join(root, "app/index.html")) && !existsSync(appIndexFile(root));
}

/** Runs `vite build` in app/ (a few seconds); throws when it fails. */
export function buildApp(root = repoRoot, options: { quiet?: boolean } = {}): void {
  const vite = join(root, "node_modules/.bin/vite");
  if (!existsSync(vite)) throw new Error("vite is not installed: run npm ci first");
  const result = spawnSync(vite, ["build", "--logLevel", options.quiet ? "error" : "warn"], {
    cwd: join(root, "app"),
    stdio: options.quiet ? ["ignore", "ignore", "inherit"] : "inherit",
    env: { ...process.env, PATH: [join(root, "node_modules/.bin"), process.env.PATH].join(delimiter) },
  });
  if (result.status !== 0) throw new Error(`building the app failed (${result.error?.message ?? `code ${result.status}`})`);
}

/** Builds the app when its build is missing; says whether it built. */
export function ensureAppBuilt(root = repoRoot, options: { quiet?: boolean } = {}): boolean {
  if (!appNeedsBuild(root)) return false;
  buildApp(root, options);
  return true;
}
