import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import type { Browser } from "playwright-core";
import type { AuditEvent } from "@formsvc/api-records/schemas";
import { eventually } from "@formsvc/platform/testing/eventually.ts";
import { appClient } from "./support/app-client.ts";
import { launchBrowser, screenshot, signedInContext, watchPage } from "./support/browser.ts";
import { mailedFileLinkToken } from "./support/mail-files.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";

// The audit log through the whole system: every listed change made in the app and with an API key is recorded
// once in the workspace's log with its actor, address and fields; sign-ins and failed sign-ins too; a plain
// member gets 404; no secret, password, key or answer is in any row; the app's Audit log page shows and
// filters it in Chromium; AUDIT_LOG_STDOUT writes JSON lines; retention and the append-only trigger.

let sys: TestSystem;
let db: pg.Client;
let browser: Browser;

before(async () => {
  [sys, browser] = await Promise.all([
    // RETENTION_INTERVAL_SECONDS: a day, so the only pruning after the first pass is the test's own (a periodic pass
    // would take the old event it plants first); LOG_LEVEL info, for the line that says the first pass is over.
    startTestSystem("audit_log", {
      LOG_LEVEL: "info",
      TRUST_PROXY: "true",
      AUDIT_LOG_STDOUT: "true",
      AUDIT_RETENTION_DAYS: "30",
      RETENTION_INTERVAL_SECONDS: "86400",
      WEBHOOK_ALLOW_PRIVATE_URLS: "true",
    }),
    launchBrowser(),
  ]);
  db = new pg.Client({ connectionString: sys.databaseUrl });
  await db.connect();
});
after(async () => {
  await db?.end();
  await browser?.close();
  await sys?.stop();
});

const unique = (local: string) => `${local}.${Date.now()}.${Math.random().toString(36).slice(2, 8)}@example.com`;
const ownerAddress = "198.51.100.10";
const memberAddress = "198.51.100.20";
const keyAddress = "203.0.113.50";

/** A browser of its own at `address`, with its CSRF cookie. */
async function newBrowser(address: string) {
  const client = appClient(sys.url, { address });
  await client.call("GET", "/session");
  return client;
}

/** /api/v1 with `key`, from `address`. */
function apiWith(key: string, address: string) {
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${sys.url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "x-forwarded-for": address, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: res.status === 204 ? undefined : await res.json() };
  };
}

describe("the audit log", () => {
  const ownerEmail = unique("owner");
  const ownerPassword = `owner keeps ${randomBytes(6).toString("hex")} private`;
  const memberEmail = unique("member");
  const answerText = `the respondent's answer ${randomBytes(6).toString("hex")}`;
  const webhookSecret = `whsec_${randomBytes(32).toString("base64")}`;
  const receiverToken = `receiver-token-${randomBytes(6).toString("hex")}`;
  const secrets: string[] = [ownerPassword, answerText, webhookSecret, receiverToken];
  let owner: Awaited<ReturnType<typeof newBrowser>>;
  let ownerId: string;
  let memberId: string;
  let teamId: string;
  let keyId: string;
  let api: ReturnType<typeof apiWith>;
  const ids: Record<string, string> = {};

  before(async () => {
    owner = await newBrowser(ownerAddress);
    const signedUp = await owner.call("POST", "/auth/signup", { email: ownerEmail, name: "Olga", password: ownerPassword });
    assert.equal(signedUp.status, 201, JSON.stringify(signedUp.body));
    ownerId = signedUp.body.user.id;
    const team = await owner.call("POST", "/workspaces", { name: "Team" });
    teamId = team.body.id;

    // Sign-ins, once the team exists: a wrong password, then the right one (this browser from now on).
    const signIn = await newBrowser(ownerAddress);
    assert.equal((await signIn.call("POST", "/auth/signin", { email: ownerEmail, password: "not the password at all" })).status, 401);
    assert.equal((await signIn.call("POST", "/auth/signin", { email: ownerEmail, password: ownerPassword })).status, 200);
    owner = signIn;

    // A member joins by the mailed link; another invitation is revoked.
    const member = await newBrowser(memberAddress);
    const memberSignUp = await member.call("POST", "/auth/signup", { email: memberEmail, name: "Mo", password: `member keeps ${randomBytes(6).toString("hex")} too` });
    memberId = memberSignUp.body.user.id;
    secrets.push(memberSignUp.body.csrfToken);
    const invited = await owner.call("POST", `/workspaces/${teamId}/invites`, { email: memberEmail, role: "member" });
    assert.equal(invited.status, 201, JSON.stringify(invited.body));
    ids.invitation = invited.body.id;
    const token = await mailedFileLinkToken(sys.env.DATA_DIR, memberEmail, "/app/accept-invite");
    secrets.push(token);
    assert.equal((await member.call("POST", "/invitations/accept", { token })).status, 200);
    const other = await owner.call("POST", `/workspaces/${teamId}/invites`, { email: unique("other") });
    ids.revoked = other.body.id;
    assert.equal((await owner.call("DELETE", `/workspaces/${teamId}/invites/${other.body.id}`)).status, 204);

    // The member's key: a plain member is told nothing of the log.
    const memberKey = await member.call("POST", "/api-keys", { name: "Mo's key" });
    secrets.push(memberKey.body.key);
    const memberApi = apiWith(memberKey.body.key, memberAddress);
    assert.deepEqual(await memberApi("GET", `/workspaces/${teamId}/audit-events`), { status: 404, body: { error: "workspace not found" } });
    assert.equal((await member.call("GET", `/workspaces/${teamId}/audit-events`)).status, 404);

    // An API key, and changes through the API with it.
    const key = await owner.call("POST", "/api-keys", { name: "CI key" });
    assert.equal(key.status, 201);
    keyId = key.body.id;
    secrets.push(key.body.key);
    api = apiWith(key.body.key, keyAddress);
    const apiForm = await api("POST", "/forms", { workspaceId: teamId, name: "By the API" });
    assert.equal(apiForm.status, 201, JSON.stringify(apiForm.body));
    ids.apiForm = apiForm.body.id;
    assert.equal((await api("PATCH", `/forms/${ids.apiForm}`, { name: "Renamed by the API" })).status, 200);
    const hook = await api("POST", "/webhooks", { formId: ids.apiForm, url: `http://127.0.0.1:9/hook/${receiverToken}?token=${receiverToken}`, secret: webhookSecret, headers: { Authorization: `Bearer ${receiverToken}` } });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    ids.apiHook = hook.body.id;
    assert.equal((await api("PATCH", `/webhooks/${ids.apiHook}`, { enabled: false, secret: webhookSecret })).status, 200);
    const rotated = await api("POST", `/webhooks/${ids.apiHook}/rotate-secret`);
    assert.equal(rotated.status, 200);
    secrets.push(rotated.body.secret);
    assert.equal((await api("DELETE", `/webhooks/${ids.apiHook}`)).status, 204);
    assert.equal((await api("DELETE", `/forms/${ids.apiForm}`)).status, 204);

    // Changes in the app.
    const document = { title: "Survey", blocks: [{ id: "q", key: "q", type: "SHORT_TEXT", question: "Tell us" }] };
    const appForm = await owner.call("POST", "/forms", { workspaceId: teamId, name: "In the app", document });
    ids.appForm = appForm.body.id;
    assert.equal((await owner.call("PATCH", `/forms/${ids.appForm}`, { name: "Renamed in the app", settings: { responseLimit: 100 } })).status, 200);
    assert.equal((await owner.call("POST", `/forms/${ids.appForm}/publish`, {})).status, 200);
    const answered = await fetch(`${sys.url}/f/${ids.appForm}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ answers: { q: answerText }, completed: true }),
    });
    assert.equal(answered.status, 200, await answered.text());
    const csv = await fetch(`${sys.url}/app/api/forms/${ids.appForm}/submissions.csv?filter=completed`, { headers: { cookie: owner.cookies.header(), "x-forwarded-for": ownerAddress } });
    assert.equal(csv.status, 200);
    assert.match(await csv.text(), new RegExp(answerText));
    const appHook = await owner.call("POST", `/forms/${ids.appForm}/webhooks`, { url: "http://127.0.0.1:9/app-hook" });
    assert.equal(appHook.status, 201, JSON.stringify(appHook.body));
    ids.appHook = appHook.body.id;
    if (typeof appHook.body.secret === "string" && !appHook.body.secret.includes("…")) secrets.push(appHook.body.secret);
    assert.equal((await owner.call("POST", `/forms/${ids.appForm}/close`, {})).status, 200);
    assert.equal((await owner.call("POST", `/forms/${ids.appForm}/trash`, {})).status, 204);
    assert.equal((await owner.call("POST", `/forms/${ids.appForm}/restore`, {})).status, 200);
    assert.equal((await owner.call("DELETE", `/forms/${ids.apiForm}/purge`)).status, 200);
    assert.equal((await owner.call("PATCH", `/workspaces/${teamId}/members/${memberId}`, { role: "admin" })).status, 200);
    assert.equal((await owner.call("DELETE", `/workspaces/${teamId}/members/${memberId}`)).status, 204);
    assert.equal((await owner.call("PATCH", `/workspaces/${teamId}`, { name: "Team renamed" })).status, 200);
    // The first account administers the installation, and sets plans.
    assert.equal((await owner.call("PUT", `/admin/workspaces/${teamId}/plan`, { plan: "pro" })).status, 200);
    assert.equal((await owner.call("DELETE", `/api-keys/${keyId}`)).status, 204);
  });

  /** Every event of the team's log, as its owner reads it in the app (the key is gone). */
  async function teamLog(query = ""): Promise<AuditEvent[]> {
    const page = await owner.call("GET", `/workspaces/${teamId}/audit-events?limit=500${query}`);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    return page.body.items;
  }

  it("records each change once, with its actor (a person in the app, the key's id on the API), address and fields", async () => {
    const asOwner = { type: "user", userId: ownerId, apiKeyId: null };
    const asKey = { type: "api_key", userId: ownerId, apiKeyId: keyId };
    const expected: [string, string, string | null, object, string][] = [
      ["workspace.create", "workspace", teamId, asOwner, ownerAddress],
      ["session.sign_in_failed", "user", ownerId, { type: "anonymous", userId: null, apiKeyId: null }, ownerAddress],
      ["session.sign_in", "user", ownerId, asOwner, ownerAddress],
      ["member.invite", "invitation", ids.invitation, asOwner, ownerAddress],
      ["member.accept", "member", memberId, { type: "user", userId: memberId, apiKeyId: null }, memberAddress],
      ["member.invite", "invitation", ids.revoked, asOwner, ownerAddress],
      ["member.revoke_invitation", "invitation", ids.revoked, asOwner, ownerAddress],
      ["api_key.create", "api_key", keyId, asOwner, ownerAddress],
      ["form.create", "form", ids.apiForm, asKey, keyAddress],
      ["form.update", "form", ids.apiForm, asKey, keyAddress],
      ["webhook.create", "webhook", ids.apiHook, asKey, keyAddress],
      ["webhook.update", "webhook", ids.apiHook, asKey, keyAddress],
      ["webhook.rotate_secret", "webhook", ids.apiHook, asKey, keyAddress],
      ["webhook.delete", "webhook", ids.apiHook, asKey, keyAddress],
      ["form.trash", "form", ids.apiForm, asKey, keyAddress],
      ["form.create", "form", ids.appForm, asOwner, ownerAddress],
      ["form.update", "form", ids.appForm, asOwner, ownerAddress],
      ["form.publish", "form", ids.appForm, asOwner, ownerAddress],
      ["responses.export", "form", ids.appForm, asOwner, ownerAddress],
      ["webhook.create", "webhook", ids.appHook, asOwner, ownerAddress],
      ["form.close", "form", ids.appForm, asOwner, ownerAddress],
      ["form.trash", "form", ids.appForm, asOwner, ownerAddress],
      ["form.restore", "form", ids.appForm, asOwner, ownerAddress],
      ["form.purge", "form", ids.apiForm, asOwner, ownerAddress],
      ["member.role_change", "member", memberId, asOwner, ownerAddress],
      ["member.remove", "member", memberId, asOwner, ownerAddress],
      ["workspace.rename", "workspace", teamId, asOwner, ownerAddress],
      ["workspace.set_plan", "workspace", teamId, asOwner, ownerAddress],
      ["api_key.delete", "api_key", keyId, asOwner, ownerAddress],
    ];
    // Recording is on its way once each answer is sent: wait for the last change's event.
    await eventually(async () => (await teamLog()).some((e) => e.action === "api_key.delete"), 15_000, "the last event");
    const log = await teamLog();
    for (const [action, targetType, targetId, actor, address] of expected) {
      const found = log.filter((e) => e.action === action && e.target.id === targetId);
      assert.equal(found.length, 1, `${action} ${targetId}: ${JSON.stringify(found)}`);
      assert.deepEqual([found[0].target.type, found[0].actor, found[0].address], [targetType, actor, address], action);
    }
    const changes = (action: string, targetId: string) => log.find((e) => e.action === action && e.target.id === targetId)!.changes;
    assert.deepEqual(changes("form.update", ids.apiForm), [{ field: "name", value: "Renamed by the API" }]);
    assert.deepEqual(changes("form.update", ids.appForm), [{ field: "name", value: "Renamed in the app" }, { field: "settings.responseLimit", value: "100" }]);
    assert.deepEqual(changes("webhook.create", ids.apiHook), [
      { field: "formId" },
      { field: "url", value: "127.0.0.1:9" },
      { field: "secret" },
      { field: "headers" },
    ]);
    assert.deepEqual(changes("member.role_change", memberId), [{ field: "role", value: "admin" }]);
    assert.deepEqual(changes("workspace.set_plan", teamId), [{ field: "plan", value: "pro" }]);
    assert.deepEqual(changes("workspace.rename", teamId), [{ field: "name", value: "Team renamed" }]);
    assert.deepEqual(changes("responses.export", ids.appForm), [{ field: "format", value: "csv" }, { field: "filter", value: "completed" }]);
    assert.deepEqual(changes("member.invite", ids.invitation), [{ field: "email", value: memberEmail }, { field: "role", value: "member" }]);
  });

  it("filters by action, actor and date, and pages by cursor, at /api/v1 as in the app", async () => {
    const key = await owner.call("POST", "/api-keys", { name: "reader" });
    secrets.push(key.body.key);
    const reader = apiWith(key.body.key, keyAddress);
    // The key's own api_key.create is written after its answer: the whole log is read once it is in.
    await eventually(
      async () => (await reader("GET", `/workspaces/${teamId}/audit-events?action=api_key.create&limit=500`)).body.items?.some((e: AuditEvent) => e.target.id === key.body.id),
      10_000,
      "the reader key's api_key.create in the log",
    );
    const published = await reader("GET", `/workspaces/${teamId}/audit-events?action=form.publish`);
    assert.equal(published.status, 200);
    assert.deepEqual(published.body.items.map((e: AuditEvent) => e.target.id), [ids.appForm]);
    const byKey = await reader("GET", `/workspaces/${teamId}/audit-events?actor=${keyId}&limit=500`);
    assert.deepEqual([...new Set(byKey.body.items.map((e: AuditEvent) => e.actor.apiKeyId))], [keyId]);
    assert.equal(byKey.body.items.length, 7);
    const forms = await reader("GET", `/workspaces/${teamId}/audit-events?action=form.*&limit=500`);
    assert.ok(forms.body.items.every((e: AuditEvent) => e.action.startsWith("form.")));
    const future = await reader("GET", `/workspaces/${teamId}/audit-events?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`);
    assert.deepEqual(future.body.items, []);
    const all = (await reader("GET", `/workspaces/${teamId}/audit-events?limit=500`)).body.items.map((e: AuditEvent) => e.id);
    const walked: string[] = [];
    let cursor = "";
    do {
      const page = await reader("GET", `/workspaces/${teamId}/audit-events?limit=7${cursor ? `&cursor=${cursor}` : ""}`);
      assert.equal(page.status, 200, JSON.stringify(page.body));
      walked.push(...page.body.items.map((e: AuditEvent) => e.id));
      cursor = page.body.nextCursor ?? "";
    } while (cursor);
    assert.deepEqual(walked, all);
    assert.equal((await reader("GET", `/workspaces/${teamId}/audit-events?action=DROP TABLE`)).status, 400);
  });

  it("holds no secret, password, token, key or answer in any row (searched as text)", async () => {
    const { rows } = await db.query<{ row: string }>(`select e::text as "row" from "identity"."audit_events" e`);
    assert.ok(rows.length > 25);
    for (const secret of secrets) {
      assert.ok(secret.length >= 16, "each secret searched for is long enough to be told apart");
      const holding = rows.filter((r) => r.row.includes(secret));
      assert.deepEqual(holding, [], `a row holds ${secret.slice(0, 8)}…`);
    }
  });

  it("writes each event as one JSON line on identity's stdout (AUDIT_LOG_STDOUT)", async () => {
    const logFile = join(dirname(sys.env.DATA_DIR), "identity.log");
    const lines = await eventually(() => {
      const events = readFileSync(logFile, "utf8")
        .split("\n")
        .filter((line) => line.startsWith('{"auditEvent"'))
        .map((line) => JSON.parse(line).auditEvent);
      return events.some((e) => e.action === "api_key.delete") ? events : undefined;
    });
    const signIn = lines.filter((e) => e.action === "session.sign_in" && e.actor.userId === ownerId);
    assert.equal(signIn.length, 1);
    assert.deepEqual([...signIn[0].workspaceIds].sort(), [teamId, (await owner.call("GET", "/workspaces")).body.items.find((w: { personal: boolean }) => w.personal).id].sort());
    const raw = readFileSync(logFile, "utf8");
    for (const secret of secrets) assert.ok(!raw.includes(secret), `identity's output holds ${secret.slice(0, 8)}…`);
  });

  it("refuses UPDATE and DELETE in the database; prune removes events older than AUDIT_RETENTION_DAYS, and only those", async () => {
    await assert.rejects(db.query(`update "identity"."audit_events" set "action" = 'form.create'`), /append-only/);
    await assert.rejects(db.query(`delete from "identity"."audit_events"`), /append-only/);
    // The one periodic pass of the run (5 s after start, then a day later) is over, so the prune below is the
    // only one that can take the old event.
    const logFile = join(dirname(sys.env.DATA_DIR), "identity.log");
    await eventually(() => readFileSync(logFile, "utf8").includes('"msg":"retention pass"'));
    // An event from 40 days ago (inserts are how events arrive).
    await db.query(
      `insert into "identity"."audit_events" ("id", "workspace_id", "occurred_at", "actor_type", "action", "target_type") values ('old-event', $1, now() - interval '40 days', 'system', 'form.close', 'form')`,
      [teamId],
    );
    const before = (await db.query(`select count(*)::int as n from "identity"."audit_events"`)).rows[0].n;
    const pruned = await sys.cli("prune", "--older-than", new Date(Date.now() + 60_000).toISOString());
    assert.equal(pruned["identity.audit_events"], 1);
    const { rows } = await db.query(`select "id" from "identity"."audit_events"`);
    assert.equal(rows.length, before - 1);
    assert.ok(!rows.some((r) => r.id === "old-event"));
  });

  it("shows the owner the Audit log page in Chromium, filtered by action", async () => {
    const context = await signedInContext(browser, sys.url, owner.cookies);
    const page = await context.newPage();
    const problems = watchPage(page, []);
    try {
      await page.goto(`${sys.url}/app/forms`);
      await page.getByLabel("Workspace", { exact: true }).selectOption(teamId);
      await page.getByRole("link", { name: "Audit log" }).click();
      const rows = page.getByRole("table", { name: "Audit events" }).locator("tbody tr");
      await rows.first().waitFor();
      assert.ok((await rows.count()) > 20);
      await page.getByRole("row").filter({ hasText: "Signed in" }).first().waitFor();
      await page.getByLabel("Action").selectOption("form.publish");
      await eventually(async () => (await rows.count()) === 1, 10_000, "one published form");
      assert.match(await rows.first().innerText(), /Form published/);
      assert.match(await rows.first().innerText(), new RegExp(ids.appForm));
      await screenshot(page, "audit-log-filtered");
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
});
