// Backup and restore of the whole system, as an operator does it: `npm run -s cli -- backup` while the
// system runs (forms, responses with an uploaded file, a webhook with its deliveries), the system stopped,
// `restore --from FILE --yes` into a fresh DATA_DIR and a new database, the system started on them: the
// API answers the same bytes for forms, submissions, webhooks, deliveries and attempts, and the file.
// (packages/cli/src/backup.test.ts covers the embedded Postgres's base backup and what restore refuses.)
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { after, test } from "node:test";
import { repoRoot, startSystem, type RunningSystem } from "@formsvc/launcher/system.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { version } from "@formsvc/platform/version.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { startReceiver } from "./support/receiver.ts";
import { createUserWithKey, startTestSystem, type TestSystem } from "./support/system.ts";

let source: TestSystem | undefined;
let restored: RunningSystem | undefined;
let restoredDb: TestDatabase | undefined;
let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
after(async () => {
  await source?.stop();
  await restored?.stop();
  await restoredDb?.drop();
  await receiver?.close();
});

/** `npm run -s cli -- ...` with `env`: its JSON, and its exit code. */
async function cli(env: Record<string, string>, ...args: string[]): Promise<{ code: number; json: any }> {
  try {
    const { stdout } = await promisify(execFile)("npm", ["run", "-s", "cli", "--", ...args], { cwd: repoRoot, env: { ...process.env, ...env } });
    return { code: 0, json: JSON.parse(stdout) };
  } catch (err) {
    const e = err as { code: number; stderr: string };
    return { code: e.code, json: JSON.parse(e.stderr || "{}") };
  }
}

/** Every answer of the API about the form, as the bytes it sent: file links aside (their expiry is the time they were made). */
async function answers(baseUrl: string, key: string, formId: string, webhookId: string): Promise<Record<string, string>> {
  const get = async (path: string) => {
    const res = await fetch(`${baseUrl}/api/v1${path}`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(res.status, 200, `GET ${path}`);
    return res.text();
  };
  const unsigned = (text: string) => text.replace(/\?expires=\d+&signature=[\w-]+/g, "?expires=…&signature=…");
  const out: Record<string, string> = {};
  const paths = [`/forms/${formId}`, `/forms/${formId}/questions`, `/forms/${formId}/submissions?filter=all`, `/webhooks?formId=${formId}`, `/webhooks/${webhookId}`, `/webhooks/${webhookId}/deliveries`];
  for (const path of paths) out[path] = unsigned(await get(path));
  for (const s of JSON.parse(out[`/forms/${formId}/submissions?filter=all`]).items) {
    out[`/forms/${formId}/submissions/${s.id}`] = unsigned(await get(`/forms/${formId}/submissions/${s.id}`));
  }
  for (const d of JSON.parse(out[`/webhooks/${webhookId}/deliveries`]).items) {
    out[`/webhooks/${webhookId}/deliveries/${d.id}/attempts`] = await get(`/webhooks/${webhookId}/deliveries/${d.id}/attempts`);
  }
  return out;
}

test("a backup of the running system, restored into a fresh DATA_DIR and database, answers the same", { timeout: 300_000 }, async (t) => {
  receiver = await startReceiver();
  source = await startTestSystem("backup_source", { WEBHOOK_ALLOW_PRIVATE_URLS: "true" });
  const ada = await createUserWithKey(source, "ada@example.com");
  const document = {
    title: "Sign-up",
    blocks: [
      { id: "name", key: "name", type: "SHORT_TEXT", question: "Your name", required: true },
      { id: "cv", key: "cv", type: "FILE", question: "CV" },
    ],
  };
  const form = (await ada.api("POST", "/forms", { workspaceId: ada.workspace.id, name: "Sign-up", document })).body;
  await source.cli("form:publish", "--id", form.id);
  const hook = (await ada.api("POST", "/webhooks", { formId: form.id, url: receiver.url })).body;

  const bytes = randomBytes(256 * 1024);
  const upload = new FormData();
  upload.set("file", new Blob([bytes], { type: "application/pdf" }), "cv.pdf");
  const uploaded = await (await fetch(`${source.url}/f/${form.id}/uploads`, { method: "POST", body: upload })).json();
  const respond = async (body: object) => {
    const res = await fetch(`${source!.url}/f/${form.id}/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    assert.equal(res.status, 200, await res.clone().text());
    return res.json();
  };
  await respond({ answers: { name: "Ada", cv: [uploaded.uploadId] }, completed: true });
  await respond({ answers: { name: "Grace" }, completed: true });
  await respond({ answers: { name: "Partial Pete" } });
  // Both completions delivered and recorded, and the form's count caught up: nothing is left moving.
  await receiver.waitFor(2);
  await eventuallyPasses(
    async () => (await ada.api("GET", `/webhooks/${hook.id}/deliveries`)).body.items,
    (items: { status: string }[]) => items.length === 2 && items.every((d) => d.status === "succeeded"),
  );
  await eventuallyPasses(async () => (await ada.api("GET", `/forms/${form.id}`)).body.responseCount, (n) => n === 2);

  const before = await answers(source.url, ada.key, form.id, hook.id);
  const completed = (await ada.api("GET", `/forms/${form.id}/submissions?filter=completed`)).body.items;
  const link: string = completed.find((s: any) => s.answers?.cv?.files?.length).answers.cv.files[0].url;
  assert.ok(Buffer.from(await (await fetch(link)).arrayBuffer()).equals(bytes), "the file, before");

  // The backup, while the system runs.
  const file = join(repoRoot, "test-output", `backup-${randomBytes(4).toString("hex")}.tar.gz`);
  t.after(() => rmSync(file, { force: true }));
  const began = performance.now();
  const backup = await cli(source.env, "backup", "--out", file);
  const seconds = (performance.now() - began) / 1000;
  assert.equal(backup.code, 0, JSON.stringify(backup.json));
  assert.equal(backup.json.file, file);
  assert.ok(backup.json.bytes > bytes.length, `the file holds the upload: ${backup.json.bytes} bytes`);
  assert.equal(backup.json.version, version);
  assert.deepEqual(backup.json.schemas, ["delivery", "forms", "identity", "submissions", "webhooks"]);
  t.diagnostic(`backup: ${backup.json.bytes} bytes, ${backup.json.files} file(s), ${seconds.toFixed(2)} s with npm's start (${backup.json.seconds} s in the CLI)`);

  // Restore refuses while the system runs, and without --yes.
  const running = await cli(source.env, "restore", "--from", file, "--yes");
  assert.equal(running.code, 1);
  assert.match(running.json.error, /other sessions are connected .* stop every process/);
  const env = { ...source.env };
  await source.stop(); // the system stopped (its database dropped)
  source = undefined;

  restoredDb = await createTestDatabase("formsvc_e2e_backup_restored");
  const restoredEnv = { ...env, DATABASE_URL: restoredDb.databaseUrl, DATA_DIR: join(repoRoot, "test-output", restoredDb.name, "data") };
  assert.match((await cli(restoredEnv, "restore", "--from", file)).json.error, /add --yes/);
  const back = await cli(restoredEnv, "restore", "--from", file, "--yes");
  assert.equal(back.code, 0, JSON.stringify(back.json));
  assert.equal(back.json.files, 1);
  t.diagnostic(`restore: ${back.json.seconds} s in the CLI`);

  // The same configuration (ports, PUBLIC_URL, SECRET_KEY) on the restored database and DATA_DIR.
  restored = await startSystem({ env: restoredEnv, logDir: join(repoRoot, "test-output", restoredDb.name) });
  const after = await answers(restored.gatewayUrl, ada.key, form.id, hook.id);
  assert.deepEqual(Object.keys(after), Object.keys(before));
  for (const path of Object.keys(before)) assert.equal(after[path], before[path], `GET ${path} answers the same bytes`);
  t.diagnostic(`${Object.keys(before).length} API answers the same, byte for byte`);
  const readyz = await (await fetch(`${restored.gatewayUrl}/readyz`)).json();
  assert.equal(readyz.version, version, "/readyz names the release");
  // A link made before the backup still works (the key that signs it is the same) and serves the same bytes.
  const served = await fetch(link.replace(/^https?:\/\/[^/]+/, restored.gatewayUrl));
  assert.equal(served.status, 200);
  assert.ok(Buffer.from(await served.arrayBuffer()).equals(bytes), "the file, after: byte for byte");
});
