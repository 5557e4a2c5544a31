// `npm start`: the whole system on one machine, with embedded defaults for what is not configured.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { delimiter, join, relative } from "node:path";
import { resolveSecretKey } from "@formsvc/platform/secret-key.ts";
import { ConfigError, loadConfig, type Config } from "@formsvc/platform/config.ts";
import { mailSettingsOf } from "@formsvc/platform/mail.ts";
import { version } from "@formsvc/platform/version.ts";
import { appNeedsBuild, buildApp } from "./app-build.ts";
import { passwordFileOf, type EmbeddedPostgres } from "./embedded-postgres.ts";
import { startSupervisedPostgres, type SupervisedPostgres } from "./supervised-postgres.ts";
import { launcherLogger, logDirOf } from "./launcher-log.ts";
import { busyPortMessage } from "./ports.ts";
import { repoRoot, startSystem, type RunningSystem } from "./system.ts";

/** The database the services share (each in its own schema) in the embedded Postgres. */
const embeddedDatabase = "formsvc";

/** The .proto files whose generated code (proto/gen/**\/*_pb.js) is missing. */
export function protosWithoutCode(root = repoRoot): string[] {
  const missing: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".proto")) {
        const generated = join(root, "proto/gen", relative(join(root, "proto"), path).replace(/\.proto$/, "_pb.js"));
        if (!existsSync(generated)) missing.push(relative(root, path));
      }
    }
  };
  walk(join(root, "proto/formsvc"));
  return missing;
}

function generateCode(root: string): void {
  const result = spawnSync(join(root, "node_modules/.bin/buf"), ["generate"], {
    cwd: root,
    stdio: "inherit",
    // buf runs protoc-gen-es, a Node script, from PATH.
    env: { ...process.env, PATH: [join(root, "node_modules/.bin"), process.env.PATH].join(delimiter) },
  });
  if (result.status !== 0) throw new Error(`buf generate failed (${result.error?.message ?? `code ${result.status}`})`);
}

/** `npm run dev` (`npm start -- --dev`): for a developer's machine, where receivers listen on loopback. */
export const devFlag = "--dev";

/**
 * The environment `npm start` adds for dev mode: webhooks may reach local receivers, unless the operator
 * said otherwise (WEBHOOK_ALLOW_PRIVATE_URLS given, even false, wins).
 */
export function devModeEnv(dev: boolean, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return dev && !env.WEBHOOK_ALLOW_PRIVATE_URLS ? { WEBHOOK_ALLOW_PRIVATE_URLS: "true" } : {};
}

/** What webhooks may reach, and how to let them reach a receiver on this machine. */
function webhooksLine(config: Config, dev: boolean): string {
  if (config.webhookAllowPrivateUrls) {
    return `private and loopback addresses allowed (WEBHOOK_ALLOW_PRIVATE_URLS=true${dev ? ", dev mode" : ""}): fine for local receivers, not for a shared server`;
  }
  const ranges = config.webhookAllowedCidrs.map(([address, bits]) => `${address.toString()}/${bits}`);
  return (
    `public addresses only${ranges.length ? ` and ${ranges.join(", ")} (WEBHOOK_ALLOWED_CIDRS)` : ""}; ` +
    "for a receiver on this machine: npm run dev (or WEBHOOK_ALLOW_PRIVATE_URLS=true npm start)"
  );
}

export function banner(config: Config, startedInSeconds: number, postgres?: EmbeddedPostgres, options: { dev?: boolean } = {}): string {
  const url = config.publicUrl;
  const logDir = logDirOf(config);
  // The password is never printed: the file holding it is named instead.
  const database = postgres
    ? [
        `  database:           embedded Postgres on 127.0.0.1:${postgres.port}, database ${embeddedDatabase}, user postgres, password in ${passwordFileOf(config.dataDir)}`,
        `                      psql "postgres://postgres:$(cat ${passwordFileOf(config.dataDir)})@127.0.0.1:${postgres.port}/${embeddedDatabase}"`,
      ]
    : [`  database:           DATABASE_URL`];
  return [
    "",
    `formsvc is running at ${url} (version ${version}, started in ${startedInSeconds.toFixed(1)} s)`,
    `  the app:            ${url}/app`,
    `  the REST API:       ${url}/api/v1`,
    `  API reference:      ${url}/developers`,
    `  data:               ${config.dataDir}`,
    ...database,
    `  logs:               ${logDir ?? "JSON lines on stdout (LOG_FORMAT=json)"}`,
    `  mail:               ${config.smtpUrl ? `sent over SMTP to ${new URL(config.smtpUrl).host}` : `written to ${mailSettingsOf(config).dir} as .eml files (set SMTP_URL to send it)`}`,
    `  webhooks:           ${webhooksLine(config, options.dev ?? false)}`,
    "",
    "What to do first: sign up at the app's address, or make a first user with a password and an API key:",
    "  npm run -s cli -- user:create --email you@example.com --password-stdin   (type the password, then Ctrl-D)",
    "  npm run -s cli -- key:create --email you@example.com --name first",
    "Then sign in to the app with that email and password, or call the API with the key:",
    `  curl -H "Authorization: Bearer <key>" ${url}/api/v1/users/me`,
    "",
    "Press Ctrl-C to stop.",
    "",
  ].join("\n");
}

/**
 * Runs the launcher until a signal or a failure; never returns. `root` is where the services'
 * and the gateway's entry files are (the repository by default).
 */
export async function runLauncher(options: { root?: string; dev?: boolean } = {}): Promise<void> {
  const root = options.root ?? repoRoot;
  const dev = options.dev ?? process.argv.includes(devFlag);
  const devEnv = devModeEnv(dev);
  let config: Config;
  try {
    config = loadConfig({ ...process.env, ...devEnv });
  } catch (err) {
    process.stderr.write(`formsvc: ${err instanceof ConfigError ? `configuration: ${err.message}` : (err as Error).message}\n`);
    process.exit(1);
  }
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const logger = launcherLogger(config);
  const aborter = new AbortController();
  let postgres: SupervisedPostgres | undefined;
  let system: RunningSystem | undefined;
  let startup: Promise<void> = Promise.resolve();
  let exiting: number | undefined;

  const shutdown = (code: number, reason: string) => {
    if (exiting !== undefined) {
      if (reason === "SIGINT" || reason === "SIGTERM") {
        // Asked twice: stop waiting for a clean shutdown.
        logger.warn({ reason }, "stopping at once");
        for (const child of system?.processes.values() ?? []) child.kill("SIGKILL");
        postgres?.current().process.kill("SIGQUIT");
        process.exit(1);
      }
      return;
    }
    exiting = code;
    logger.info({ reason }, "stopping");
    aborter.abort();
    void (async () => {
      await startup.catch(() => {});
      await system?.stop();
      await postgres?.stop();
      logger.info("stopped");
      process.exit(exiting);
    })();
  };
  process.on("SIGINT", () => shutdown(0, "SIGINT"));
  process.on("SIGTERM", () => shutdown(0, "SIGTERM"));
  process.on("SIGHUP", () => shutdown(0, "SIGHUP"));

  const fail = (message: string) => {
    process.stderr.write(`formsvc: ${message}\n`);
    shutdown(1, "failure");
  };

  startup = (async () => {
    // A port taken by something else is one line naming the variable, before anything starts.
    const busy = await busyPortMessage(config);
    if (busy) {
      process.stderr.write(`formsvc: ${busy}\n`);
      process.exit(1);
    }
    const missing = protosWithoutCode(root);
    if (missing.length > 0) {
      logger.info({ protos: missing }, "generating the code of the protos (buf generate)");
      generateCode(root);
    }
    if (appNeedsBuild(root)) {
      logger.info("building the web app (vite build into app/dist)");
      buildApp(root);
    }
    if (devEnv.WEBHOOK_ALLOW_PRIVATE_URLS) logger.warn("dev mode: webhooks may reach loopback and private addresses (WEBHOOK_ALLOW_PRIVATE_URLS=true)");
    const env: Record<string, string> = {
      ...devEnv,
      DATA_DIR: config.dataDir,
      SECRET_KEY: resolveSecretKey(config),
    };
    if (config.databaseUrl) {
      env.DATABASE_URL = config.databaseUrl;
    } else {
      // Supervised like the other processes: restarted when it dies, while the services wait for it.
      postgres = await startSupervisedPostgres({
        dataDir: config.dataDir,
        database: embeddedDatabase,
        signal: aborter.signal,
        log: (message) => logger.info(message),
        logger,
        onCrashLoop: (error) => fail(error.message),
      });
      logger.info({ port: postgres.port, created: postgres.created, seconds: Number((performance.now() / 1000).toFixed(1)) }, "embedded Postgres ready");
      env.DATABASE_URL = postgres.databaseUrl;
    }
    system = await startSystem({
      env,
      root,
      signal: aborter.signal,
      logger,
      logDir: logDirOf(config),
      // A crashed process is restarted with backoff; only one that crash-loops ends `npm start` (code 1).
      onCrashLoop: (error) => fail(error.message),
    });
    // performance.now() counts from the start of this process, Node's own start included.
    const seconds = performance.now() / 1000;
    logger.info({ seconds: Number(seconds.toFixed(2)), url: config.publicUrl }, "formsvc started");
    process.stdout.write(banner(config, seconds, postgres?.current(), { dev }));
  })();

  await startup.catch((err: unknown) => {
    if (exiting !== undefined) return; // stopped while starting: not a failure
    fail(err instanceof ConfigError ? `configuration: ${err.message}` : (err as Error).message);
  });
}

if (import.meta.main) await runLauncher();
