import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { appClient } from "./support/app-client.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";

// Who may have an account, through the whole system (issue 34): the installation's first account administers
// it (every user and workspace, plans); SIGNUP=domains admits sign-ups and invitations of its own domain only,
// says so to the app's sign-up page, and the operator's CLI makes anyone. SIGNUP's other modes (open,
// invite-only) are driven at identity's handlers.

let sys: TestSystem;
before(async () => {
  sys = await startTestSystem("signup_modes", { SIGNUP: "domains:example.com", TRUST_PROXY: "true" });
});
after(async () => {
  await sys?.stop();
});

const unique = (local: string, domain = "example.com") => `${local}.${Date.now()}.${Math.random().toString(36).slice(2, 8)}@${domain}`;
let browsers = 0;
/** A browser of its own, from an address of its own, with its CSRF cookie. */
async function newBrowser() {
  const browser = appClient(sys.url, { address: `198.51.100.${++browsers}` });
  await browser.call("GET", "/session");
  return browser;
}

describe("the installation's administrator", () => {
  it("is the first account: /session says so, it lists every user and workspace and sets plans; the next account gets 403", async () => {
    const first = await newBrowser();
    const signedUp = await first.call("POST", "/auth/signup", { email: unique("first"), name: "Fiona", password: "the very first account here" });
    assert.deepEqual([signedUp.status, signedUp.body.user.administrator], [201, true], JSON.stringify(signedUp.body));
    assert.equal((await first.call("GET", "/session")).body.user.administrator, true);
    const second = await newBrowser();
    const other = await second.call("POST", "/auth/signup", { email: unique("second"), name: "Sami", password: "the second account made" });
    assert.equal(other.body.user.administrator, false);
    const samisTeam = (await second.call("POST", "/workspaces", { name: "Sami's team" })).body;

    const users = await first.call("GET", "/admin/users?limit=100");
    assert.equal(users.status, 200);
    assert.deepEqual(
      users.body.items.map((u: { name: string; administrator: boolean; workspaceCount: number }) => [u.name, u.administrator, u.workspaceCount]),
      [["Fiona", true, 1], ["Sami", false, 2]],
    );
    const workspaces = await first.call("GET", "/admin/workspaces");
    const row = workspaces.body.items.find((w: { id: string }) => w.id === samisTeam.id);
    assert.deepEqual([row.ownerEmail, row.memberCount, row.plan], [other.body.user.email, 1, "free"]);
    const pro = await first.call("PUT", `/admin/workspaces/${samisTeam.id}/plan`, { plan: "pro" });
    assert.deepEqual([pro.status, pro.body.plan, pro.body.entitlements.removeBranding], [200, "pro", true]);

    for (const [method, path, body] of [["GET", "/admin/users"], ["GET", "/admin/workspaces"], ["PUT", `/admin/workspaces/${samisTeam.id}/plan`, { plan: "free" }]] as const) {
      const refused = await second.call(method, path, body);
      assert.equal(refused.status, 403, `${method} ${path}`);
    }
    assert.equal((await second.call("GET", `/workspaces`)).body.items.find((w: { id: string }) => w.id === samisTeam.id).plan, "pro");
  });
});

describe("SIGNUP=domains:example.com", () => {
  it("tells the app, refuses an outside address's sign-up with a 403 naming the domain, and admits the company's", async () => {
    const browser = await newBrowser();
    const session = await browser.call("GET", "/session");
    assert.deepEqual(session.body.signUp, { mode: "domains", domains: ["example.com"] });
    const outside = await browser.call("POST", "/auth/signup", { email: unique("out", "elsewhere.test"), name: "Out", password: "a long enough passphrase here" });
    assert.deepEqual([outside.status, outside.body], [403, { error: "sign-up is open to addresses at example.com only" }]);
    const inside = await (await newBrowser()).call("POST", "/auth/signup", { email: unique("staff"), name: "Staff", password: "a long enough passphrase here" });
    assert.equal(inside.status, 201, JSON.stringify(inside.body));
  });

  it("invites only the company's addresses; the operator makes an outside account all the same", async () => {
    const owner = await newBrowser();
    assert.equal((await owner.call("POST", "/auth/signup", { email: unique("owner"), name: "Olga", password: "the owner's own passphrase" })).status, 201);
    const workspaceId = (await owner.call("POST", "/workspaces", { name: "Company" })).body.id;
    const outside = await owner.call("POST", `/workspaces/${workspaceId}/invites`, { email: unique("guest", "elsewhere.test") });
    assert.deepEqual([outside.status, outside.body], [403, { error: "invitations go to addresses at example.com only" }]);
    assert.equal((await owner.call("POST", `/workspaces/${workspaceId}/invites`, { email: unique("colleague") })).status, 201);
    const contractor = unique("contractor", "elsewhere.test");
    const made = await sys.cli("user:create", "--email", contractor, "--name", "Contractor");
    assert.equal(made.user.email, contractor);
  });
});
