import { randomBytes } from "node:crypto";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { freeSystemPorts } from "@formsvc/launcher/ports.ts";
import { repoRoot, startSystem, type RunningSystem } from "@formsvc/launcher/system.ts";
import { serviceNames } from "@formsvc/platform/config.ts";
import { createTestDatabase } from "@formsvc/platform/testing/database.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { forgetServedValidator, servedResponseValidator } from "./openapi-validator.ts";

export const testRedisUrl = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** The tree whose services and gateway the system runs, when not this one (scripts/bench-ab.ts --whole-tree). */
export const systemRootVariable = "FORMSVC_SYSTEM_ROOT";

export interface TestSystem {
  url: string;
  system: RunningSystem;
  env: Record<string, string>;
  databaseUrl: string;
  /** Runs the operator CLI against this system; resolves with its JSON, rejects with its error. */
  cli(...args: string[]): Promise<any>;
  stop(): Promise<void>;
}

/** How many times a system is started on fresh ports when a port it picked was taken before its process bound it. */
const portAttempts = 3;

/**
 * The whole system as `npm start` runs it, on free ports, over a fresh database on the machine's
 * real Postgres; dropped again by `stop()`.
 */
export async function startTestSystem(
  name: string,
  env: Record<string, string> = {},
  options: { replicas?: Partial<Record<string, number>> } = {},
): Promise<TestSystem> {
  const database = await createTestDatabase(`formsvc_e2e_${name.replace(/\W/g, "_")}`);
  // Ports are picked free, then bound by processes seconds later: another test's system may take one between. A
  // start refused for a port in use is tried again on fresh ports (unless the test chose them).
  const portVariables = ["PORT", ...serviceNames.map((service) => `${service.toUpperCase()}_URL`)];
  const portsChosen = Object.keys(env).some((key) => portVariables.includes(key));
  let fullEnv: Record<string, string>;
  let system: Awaited<ReturnType<typeof startSystem>>;
  for (let attempt = 1; ; attempt++) {
    fullEnv = {
      ...(await freeSystemPorts()),
      DATABASE_URL: database.databaseUrl,
      LOG_LEVEL: "warn",
      SECRET_KEY: randomBytes(32).toString("base64url"),
      DATA_DIR: join(repoRoot, "test-output", database.name, "data"),
      RATE_LIMIT_PER_IP: "100000",
      RATE_LIMIT_PER_KEY: "100000",
      RESPONSE_RATE_PER_IP: "100000",
      // Every test respondent is 127.0.0.1: the per-address upload budget would otherwise be shared by all.
      UPLOAD_RATE_PER_IP: "100000",
      UPLOAD_BYTES_PER_IP: String(100 * 1024 ** 3),
      // Calculated fields that expect a value get time enough on a loaded 2-core CI machine; the cost test
      // sets the production default (100 ms) to see the cut-off.
      CALCULATED_FIELD_TIMEOUT_MS: "2000",
      REDIS_URL: "",
      KAFKA_BROKERS: "",
      ...env,
    };
    try {
      system = await startSystem({
        env: fullEnv,
        logDir: join(repoRoot, "test-output", database.name),
        replicas: options.replicas,
        root: process.env[systemRootVariable] || undefined,
        // A bound, not a wait: with two test files at a time on two cores a service's start (migrations, its
        // first connections) took over the launcher's 30 s once in CI.
        readyTimeoutMs: 120_000,
      });
      break;
    } catch (err) {
      if (attempt < portAttempts && !portsChosen && /EADDRINUSE|already in use/.test(String((err as Error).message))) continue;
      await database.drop();
      throw err;
    }
  }
  return {
    url: system.gatewayUrl,
    system,
    env: fullEnv,
    databaseUrl: database.databaseUrl,
    cli: async (...args) => {
      try {
        const { stdout } = await promisify(execFile)(process.execPath, [join(repoRoot, "packages/cli/src/main.ts"), ...args], {
          env: { ...process.env, ...fullEnv },
        });
        return JSON.parse(stdout);
      } catch (err) {
        const stderr = (err as { stderr?: string }).stderr ?? "";
        throw new Error(stderr.trim() || String(err));
      }
    },
    stop: async () => {
      await system.stop();
      for (const url of system.gatewayUrls) forgetServedValidator(url);
      await database.drop();
    },
  };
}

export interface ApiAnswer {
  status: number;
  headers: Headers;
  body: any;
}

/** A small client of /api/v1 as an integrator would write it; every answer is checked against the served OpenAPI document. */
export function apiClient(baseUrl: string, key?: string) {
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiAnswer> => {
    const res = await fetch(`${baseUrl}/api/v1${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // Left as text: the assertion on content type will say what came back.
    }
    const problems = (await servedResponseValidator(baseUrl)).check(method, `/api/v1${path}`, res.status, parsed, res.headers.get("content-type"));
    if (problems.length > 0) throw new Error(`the answer differs from /developers/openapi.json:\n${problems.join("\n")}`);
    return { status: res.status, headers: res.headers, body: parsed };
  };
}

/**
 * Waits until a webhook's newest delivery reads `status`, through the app's or the public API (both have the
 * route): a receiver has its request before delivery records the attempt, so a page read then may not show it.
 */
export async function newestDeliveryReads(api: (method: string, path: string) => Promise<{ body: any }>, webhookId: string, status: string) {
  await eventuallyPasses(async () => (await api("GET", `/webhooks/${webhookId}/deliveries`)).body.items as { status: string }[], (items) => items[0]?.status === status);
}

/** A user with a personal workspace and an API key, made with the operator CLI. */
export async function createUserWithKey(sys: TestSystem, email: string, plan = "free") {
  const { user, workspace } = await sys.cli("user:create", "--email", email, "--plan", plan);
  const key = await sys.cli("key:create", "--email", email, "--name", "e2e");
  return { user, workspace, key: key.key as string, keyId: key.id as string, api: apiClient(sys.url, key.key) };
}

/** A form of `user`'s workspace with `blocks`, published: its id. */
export async function createPublishedForm(sys: TestSystem, user: Awaited<ReturnType<typeof createUserWithKey>>, name: string, blocks: unknown[]): Promise<string> {
  const form = await user.api("POST", "/forms", { workspaceId: user.workspace.id, name, document: { blocks } });
  if (form.status !== 201) throw new Error(`the form was not created: ${JSON.stringify(form.body)}`);
  await sys.cli("form:publish", "--id", form.body.id);
  return form.body.id;
}
