import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { test } from "node:test";
import { simpleParser, type AddressObject } from "mailparser";
import { freeSystemPorts } from "@formsvc/launcher/ports.ts";
import { repoRoot } from "@formsvc/launcher/system.ts";
import { version } from "@formsvc/platform/version.ts";
import { killLauncher, launch, stopAndCheck, type Launched } from "@formsvc/launcher/testing/launched.ts";
import { appClient } from "./support/app-client.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";

// A newcomer after `npm ci`, doing only what the README and the banner say: `npm start` (its entry, on a
// fresh DATA_DIR and free ports, embedded Postgres), the first user made with the CLI and a password,
// then signing in to the app's API and publishing a form.

/** `npm run -s cli -- ...` as the banner prints it, with `input` on standard input. */
function npmCli(env: Record<string, string>, input: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile("npm", ["run", "-s", "cli", "--", ...args], { cwd: repoRoot, env }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(input);
  });
}

test("a newcomer starts the system, makes the first user with a password by CLI, signs in and publishes a form", { timeout: 600_000 }, async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), "formsvc-newcomer-"));
  let launched: Launched | undefined;
  try {
    const ports = await freeSystemPorts();
    const env: Record<string, string> = { ...(process.env as Record<string, string>), ...ports, DATA_DIR: dataDir };
    // A fresh machine: nothing configured beyond the ports.
    for (const name of ["DATABASE_URL", "SECRET_KEY", "PUBLIC_URL", "LOG_FORMAT", "LOG_LEVEL", "KAFKA_BROKERS", "REDIS_URL", "SMTP_URL", "MAIL_FROM", "NODE_TEST_CONTEXT"]) delete env[name];
    launched = await launch(env);
    t.diagnostic(`npm start printed its URL after ${launched.seconds.toFixed(1)} s`);
    const url = launched.url;
    const local = `http://127.0.0.1:${ports.PORT}`;

    // The banner says where everything is and what to do first; nothing else clutters the terminal.
    const output = launched.output();
    for (const line of [`(version ${version}, started in`, `${url}/app`, `${url}/api/v1`, `${url}/developers`, join(dataDir, "logs"), `written to ${join(dataDir, "mail")} as .eml files (set SMTP_URL to send it)`, "npm run -s cli -- user:create --email you@example.com --password-stdin"]) {
      assert.ok(output.includes(line), `the banner names ${line}:\n${output}`);
    }
    assert.doesNotMatch(output, /^\{"level"/m, "no JSON log lines in the terminal");
    assert.doesNotMatch(output, /warn|error|ECONNREFUSED/i, "a clean start warns about nothing");
    for (const name of ["launcher", "identity", "forms", "submissions", "webhooks", "delivery", "gateway"]) {
      assert.ok(existsSync(join(dataDir, "logs", `${name}.log`)), `${name}'s JSON log is under DATA_DIR/logs`);
    }
    // The launcher copies each process's output to its file as it arrives, so the gateway's first line may
    // land just after the banner.
    const gatewayLog = await eventuallyPasses(async () => readFileSync(join(dataDir, "logs", "gateway.log"), "utf8"), (text) => text.includes('"msg":"gateway listening"'), 10_000, 100);
    assert.match(gatewayLog, /"msg":"gateway listening"/);

    // The printed address leads to the app.
    const root = await fetch(`${local}/`, { redirect: "manual" });
    assert.equal(root.status, 302);
    assert.equal(root.headers.get("location"), "/app");

    // The first user, by the CLI, with a password on standard input.
    const email = "you@example.com";
    const password = "newcomer's first long passphrase";
    const cliEnv = { ...env };
    const created = await npmCli(cliEnv, `${password}\n`, "user:create", "--email", email, "--password-stdin");
    assert.equal(created.code, 0, created.stderr);
    const { user, workspace } = JSON.parse(created.stdout);
    assert.equal(user.email, email);
    assert.doesNotMatch(created.stdout + created.stderr, /passphrase/, "the password is never echoed");

    // Signing in to the app's API, as the browser does: a CSRF cookie first, then the session.
    const { call } = appClient(local);
    assert.equal((await call("GET", "/session")).body.user, null);
    const wrong = await call("POST", "/auth/signin", { email, password: "not the password at all" });
    assert.equal(wrong.status, 401);
    const signedIn = await call("POST", "/auth/signin", { email, password });
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
    assert.equal(signedIn.body.user.id, user.id);
    assert.equal((await call("GET", "/session")).body.user.email, email);

    // A form in the personal workspace, published, and served to respondents.
    const workspaces = await call("GET", "/workspaces");
    assert.deepEqual(workspaces.body.items.map((w: { id: string }) => w.id), [workspace.id]);
    const form = await call("POST", "/forms", { workspaceId: workspace.id, name: "First form" });
    assert.equal(form.status, 201, JSON.stringify(form.body));
    const published = await call("POST", `/forms/${form.body.id}/publish`);
    assert.equal(published.status, 200, JSON.stringify(published.body));
    assert.equal(published.body.status, "published");
    const page = await fetch(`${local}/f/${form.body.id}`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /First form/);

    // Later: a forgotten password is set again by the operator.
    const reset = await npmCli(cliEnv, "another long passphrase, typed\n", "user:set-password", "--email", email, "--password-stdin");
    assert.equal(reset.code, 0, reset.stderr);
    assert.equal((await call("POST", "/auth/signin", { email, password })).status, 401);
    assert.equal((await call("POST", "/auth/signin", { email, password: "another long passphrase, typed" })).status, 200);

    // Without SMTP_URL, mail (here a password reset) is written under DATA_DIR/mail, not lost.
    assert.equal((await call("POST", "/auth/password-reset", { email })).status, 202);
    const mailDir = join(dataDir, "mail");
    for (let i = 0; i < 100 && !(existsSync(mailDir) && readdirSync(mailDir).length > 0); i++) await new Promise((r) => setTimeout(r, 100));
    const [eml] = readdirSync(mailDir);
    const written = await simpleParser(readFileSync(join(mailDir, eml)));
    assert.deepEqual([written.subject, (written.to as AddressObject).text], ["Set a new password", email]);
    assert.match(written.text ?? "", new RegExp(`${url}/app/reset-password\\?token=\\S+`));

    t.diagnostic(`stopped in ${(await stopAndCheck(launched, dataDir)).toFixed(1)} s`);
  } finally {
    if (launched) killLauncher(launched.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
});
