import assert from "node:assert/strict";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { repoRoot } from "@formsvc/launcher/system.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";

let sys: TestSystem;
before(async () => {
  sys = await startTestSystem("cli");
});
after(() => sys?.stop());

/** `npm run -s cli -- ...` as an operator types it. */
async function npmCli(...args: string[]) {
  try {
    const { stdout, stderr } = await promisify(execFile)("npm", ["run", "-s", "cli", "--", ...args], {
      cwd: repoRoot,
      env: { ...process.env, ...sys.env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe("operator CLI", () => {
  it("prints exactly one JSON object and exits 0", async () => {
    const res = await npmCli("user:create", "--email", "op@example.com", "--name", "Op", "--plan", "pro");
    assert.equal(res.code, 0);
    const out = JSON.parse(res.stdout);
    assert.equal(out.user.email, "op@example.com");
    assert.equal(out.user.name, "Op");
    assert.equal(out.workspace.plan, "pro");
    const key = JSON.parse((await npmCli("key:create", "--email", "op@example.com", "--name", "ci")).stdout);
    assert.deepEqual(Object.keys(key).filter((k) => ["id", "name", "key"].includes(k)).sort(), ["id", "key", "name"]);
    const ws = JSON.parse((await npmCli("workspace:create", "--owner", "op@example.com", "--name", "Ops")).stdout);
    assert.equal(ws.workspace.name, "Ops");
    const plan = JSON.parse((await npmCli("workspace:set-plan", "--workspace", ws.workspace.id, "--plan", "pro")).stdout);
    assert.equal(plan.workspace.plan, "pro");
  });

  it("version prints {version}, the root package.json's, and needs no service", async () => {
    const { stdout } = await promisify(execFile)("npm", ["run", "-s", "cli", "--", "version"], {
      cwd: repoRoot,
      // Every service's address unreachable: version asks none of them.
      env: { ...process.env, ...sys.env, IDENTITY_URL: "http://127.0.0.1:1", FORMS_URL: "http://127.0.0.1:1" },
    });
    const root = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8"));
    assert.equal(stdout, `{"version":"${root.version}"}\n`);
  });

  it("fails with {error} on stderr and exit 1", async () => {
    for (const args of [["user:create"], ["no:such-command"], ["user:create", "--email", "x@example.com", "--plan", "gold"], ["form:publish", "--id", "nope"]]) {
      const res = await npmCli(...args);
      assert.equal(res.code, 1, args.join(" "));
      assert.equal(res.stdout, "");
      assert.equal(typeof JSON.parse(res.stderr).error, "string");
    }
    const dup = await npmCli("user:create", "--email", "op@example.com");
    assert.equal(dup.code, 1);
    assert.match(JSON.parse(dup.stderr).error, /exists/);
  });

  it("prune --dry-run counts, by table, what prune then removes, and changes nothing", async () => {
    const owner = JSON.parse((await npmCli("user:create", "--email", "pruner@example.com")).stdout);
    // An invitation to someone without an account: a mail that is sent at once (to a file here) and then may go.
    await npmCli("user:invite", "--workspace", owner.workspace.id, "--email", "invitee@example.com");
    const everythingTill = new Date(Date.now() + 24 * 60 * 60 * 1000).toISOString();
    const dryRun = async () => {
      const res = await npmCli("prune", "--older-than", everythingTill, "--dry-run");
      assert.equal(res.code, 0, res.stderr);
      return JSON.parse(res.stdout) as Record<string, number>;
    };
    // The invitation's mail is counted once the mail worker has sent it.
    const counted = await eventuallyPasses(dryRun, (c) => c["identity.mail_outbox"] > 0, 20_000);
    for (const what of ["identity.sessions", "identity.email_links", "identity.idempotency_keys", "identity.mail_outbox"]) assert.ok(what in counted, what);
    for (const [what, rows] of Object.entries(counted)) assert.ok(Number.isInteger(rows) && rows >= 0, `${what}: ${rows}`);
    assert.equal(counted["identity.mail_outbox"], 1, "the invitation, sent");
    assert.equal(counted["identity.email_links"], 0, "the invitation's link is still good");
    assert.deepEqual(await dryRun(), counted, "a dry run removes nothing");

    const pruned = await npmCli("prune", "--older-than", everythingTill);
    assert.equal(pruned.code, 0, pruned.stderr);
    assert.equal(JSON.parse(pruned.stdout)["identity.mail_outbox"], 1);
    assert.equal((await dryRun())["identity.mail_outbox"], 0);
  });

  it("says so when the services are not running", async () => {
    const res = await promisify(execFile)(process.execPath, [join(repoRoot, "packages/cli/src/main.ts"), "key:list", "--email", "a@b.c"], {
      env: { ...process.env, IDENTITY_URL: "http://127.0.0.1:9" },
    }).catch((e) => e);
    assert.equal(res.code, 1);
    assert.match(JSON.parse(res.stderr).error, /127\.0\.0\.1:9/);
  });
});
