// `npm start`: the whole system on one machine, with embedded defaults for what is not configured.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { delimiter, join, relative } from "node:path";
import { resolveSecretKey } from "@formsvc/platform/secret-key.ts";
import { ConfigError, loadConfig, type Config } from "@formsvc/platform/config.ts";
import { mailSettingsOf } from "@formsvc/platform/mail.ts";
import { version } from "@formsvc/platform/version.ts";
import { appNeedsBuild, buildApp } from "./app-build.ts";
import type { EmbeddedPostgres } from "./embedded-postgres.ts";
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

export function banner(config: Config, startedInSeconds: number, postgres?: EmbeddedPostgres): string {
  const url = config.publicUrl;
  const logDir = logDirOf(config);
  return [
    "",
    `formsvc is running at ${url} (version ${version}, started in ${startedInSeconds.toFixed(1)} s)`,
    `  the app:            ${url}/app`,
    `  the REST API:       ${url}/api/v1`,
    `  API reference:      ${url}/developers`,
    `  data:               ${config.dataDir}` + (postgres ? ` (embedded Postgres on 127.0.0.1:${postgres.port})` : ""),
    `  logs:               ${logDir ?? "JSON lines on stdout (LOG_FORMAT=json)"}`,
    `  mail:               ${config.smtpUrl ? `sent over SMTP to ${new URL(config.smtpUrl).host}` : `written to ${mailSettingsOf(config).dir} as .eml files (set SMTP_URL to send it)`}`,
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
export async function runLauncher(options: { root?: string } = {}): Promise<void> {
  const root = options.root ?? repoRoot;
  let config: Config;
  try {
    config = loadConfig();
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
    const env: Record<string, string> = {
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
    process.stdout.write(banner(config, seconds, postgres?.current()));
  })();

  await startup.catch((err: unknown) => {
    if (exiting !== undefined) return; // stopped while starting: not a failure
    fail(err instanceof ConfigError ? `configuration: ${err.message}` : (err as Error).message);
  });
}

if (import.meta.main) await runLauncher();
