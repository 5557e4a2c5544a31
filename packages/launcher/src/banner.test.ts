import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { loadConfig } from "@formsvc/platform/config.ts";
import type { EmbeddedPostgres } from "./embedded-postgres.ts";
import { banner, devModeEnv } from "./start.ts";

// The banner `npm start` prints: how to reach the embedded database, and what webhooks may reach.

const config = (env: Record<string, string> = {}) => loadConfig({ DATA_DIR: "/srv/formsvc-data", ...env });
const postgres = { port: 54329, databaseUrl: "postgres://postgres:s3cret-never-shown@127.0.0.1:54329/formsvc" } as EmbeddedPostgres;

describe("the launcher's banner", () => {
  it("says how to reach the embedded database: port, database, user and the file that holds the password, never the password", () => {
    const text = banner(config(), 1.5, postgres);
    assert.match(text, /database: +embedded Postgres on 127\.0\.0\.1:54329, database formsvc, user postgres, password in \/srv\/formsvc-data\/postgres-password/);
    assert.match(text, /psql "postgres:\/\/postgres:\$\(cat \/srv\/formsvc-data\/postgres-password\)@127\.0\.0\.1:54329\/formsvc"/);
    assert.doesNotMatch(text, /s3cret-never-shown/);
    assert.match(banner(config(), 1.5), /database: +DATABASE_URL/);
  });

  it("says webhooks reach public addresses only, and how to allow a receiver on this machine", () => {
    const text = banner(config(), 1.5, postgres);
    assert.match(text, /webhooks: +public addresses only; for a receiver on this machine: npm run dev \(or WEBHOOK_ALLOW_PRIVATE_URLS=true npm start\)/);
    assert.match(banner(config({ WEBHOOK_ALLOWED_CIDRS: "192.168.10.0/24" }), 1), /public addresses only and 192\.168\.10\.0\/24 \(WEBHOOK_ALLOWED_CIDRS\)/);
  });

  it("in dev mode, says loopback receivers are allowed", () => {
    const env = devModeEnv(true, {});
    assert.deepEqual(env, { WEBHOOK_ALLOW_PRIVATE_URLS: "true" });
    const text = banner(config(env), 1.5, postgres, { dev: true });
    assert.match(text, /webhooks: +private and loopback addresses allowed \(WEBHOOK_ALLOW_PRIVATE_URLS=true, dev mode\)/);
  });

  it("dev mode leaves an explicit WEBHOOK_ALLOW_PRIVATE_URLS alone, and plain npm start adds nothing", () => {
    assert.deepEqual(devModeEnv(true, { WEBHOOK_ALLOW_PRIVATE_URLS: "false" }), {});
    assert.deepEqual(devModeEnv(false, {}), {});
  });
});
