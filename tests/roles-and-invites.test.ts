import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { appClient } from "./support/app-client.ts";
import { linkToken, startSmtpSink, type SmtpSink } from "./support/smtp.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";

// Roles per workspace through the whole system: what an owner, an admin and a member may do over the
// app and the API, that removing a member refuses their very next call, and an invitation mailed to
// someone without an account (received by a real SMTP server on loopback) signing them up into it.

let sys: TestSystem;
let smtp: SmtpSink;

before(async () => {
  smtp = await startSmtpSink();
  sys = await startTestSystem("roles", { SMTP_URL: smtp.url, MAIL_FROM: "Forms <forms@example.com>", PUBLIC_URL: "http://forms.example.com" });
});
after(async () => {
  await sys?.stop();
  await smtp?.close();
});

const unique = (local: string) => `${local}.${Date.now()}.${Math.random().toString(36).slice(2, 8)}@example.com`;

/** A person signed up in their own browser, with an API key. */
async function person(name: string) {
  const email = unique(name.toLowerCase());
  const browser = appClient(sys.url);
  await browser.call("GET", "/session");
  const signedUp = await browser.call("POST", "/auth/signup", { email, name, password: `${name} keeps a long passphrase` });
  assert.equal(signedUp.status, 201, JSON.stringify(signedUp.body));
  const key = await browser.call("POST", "/api-keys", { name: `${name}'s key` });
  assert.equal(key.status, 201);
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${sys.url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key.body.key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: res.status === 204 ? undefined : await res.json() };
  };
  return { email, id: signedUp.body.user.id as string, app: browser.call, api, keyId: key.body.id as string };
}

describe("roles per workspace", () => {
  let owner: Awaited<ReturnType<typeof person>>;
  let admin: Awaited<ReturnType<typeof person>>;
  let member: Awaited<ReturnType<typeof person>>;
  let workspaceId: string;

  before(async () => {
    [owner, admin, member] = await Promise.all([person("Olga"), person("Adam"), person("Mia")]);
    const made = await owner.app("POST", "/workspaces", { name: "Team" });
    assert.deepEqual([made.status, made.body.role], [201, "owner"]);
    workspaceId = made.body.id;
    assert.equal((await owner.app("POST", `/workspaces/${workspaceId}/members`, { email: admin.email, role: "admin" })).status, 201);
    assert.equal((await admin.app("POST", `/workspaces/${workspaceId}/members`, { email: member.email })).status, 201);
  });

  it("the members list and each person's workspaces show the roles", async () => {
    const members = await member.app("GET", `/workspaces/${workspaceId}/members`);
    assert.deepEqual(
      members.body.items.map((m: { user: { email: string }; role: string }) => [m.user.email, m.role]),
      [[owner.email, "owner"], [admin.email, "admin"], [member.email, "member"]],
    );
    for (const [who, role] of [[owner, "owner"], [admin, "admin"], [member, "member"]] as const) {
      const mine = await who.app("GET", "/workspaces");
      assert.equal(mine.body.items.find((w: { id: string }) => w.id === workspaceId).role, role);
    }
  });

  it("a member cannot delete a form nor manage members or others' keys; an admin can; only the owner changes the plan", async () => {
    const form = await member.api("POST", "/forms", { workspaceId, name: "Member's survey" });
    assert.equal(form.status, 201, JSON.stringify(form.body));
    const refused = await member.api("DELETE", `/forms/${form.body.id}`);
    assert.deepEqual([refused.status, refused.body.error], [403, "only the workspace's owner or an admin may delete its forms"]);
    assert.equal((await member.app("POST", `/forms/${form.body.id}/trash`)).status, 403);
    assert.equal((await member.api("GET", `/forms/${form.body.id}`)).status, 200, "the form is still there");

    const stranger = await person("Sam");
    assert.equal((await member.app("POST", `/workspaces/${workspaceId}/members`, { email: stranger.email })).status, 403);
    assert.equal((await member.app("POST", `/workspaces/${workspaceId}/invites`, { email: unique("nobody") })).status, 403);
    assert.equal((await member.app("PATCH", `/workspaces/${workspaceId}/members/${admin.id}`, { role: "member" })).status, 403);
    assert.equal((await member.app("DELETE", `/workspaces/${workspaceId}/members/${admin.id}`)).status, 403);
    assert.equal((await member.app("DELETE", `/api-keys/${admin.keyId}`)).status, 404, "another person's key is not theirs to delete");
    assert.equal((await admin.api("GET", "/users/me")).status, 200, "the admin's key still works");
    const badRole = await admin.app("PATCH", `/workspaces/${workspaceId}/members/${member.id}`, { role: "owner" });
    assert.equal(badRole.status, 400);

    assert.equal((await admin.api("DELETE", `/forms/${form.body.id}`)).status, 204);
    assert.equal((await member.api("GET", `/forms/${form.body.id}`)).status, 404, "deleted: in the Trash");

    assert.deepEqual((await admin.app("PUT", `/workspaces/${workspaceId}/plan`, { plan: "pro" })).status, 403);
    assert.deepEqual((await member.app("PUT", `/workspaces/${workspaceId}/plan`, { plan: "pro" })).status, 403);
    const upgraded = await owner.app("PUT", `/workspaces/${workspaceId}/plan`, { plan: "pro" });
    assert.deepEqual([upgraded.status, upgraded.body.plan], [200, "pro"]);
    assert.equal((await member.api("GET", `/workspaces/${workspaceId}`)).body.plan, "pro");

    const promoted = await admin.app("PATCH", `/workspaces/${workspaceId}/members/${stranger.id}`, { role: "admin" });
    assert.equal(promoted.status, 404, "not a member yet");
    assert.equal((await admin.app("POST", `/workspaces/${workspaceId}/members`, { email: stranger.email })).status, 201);
    const made = await admin.app("PATCH", `/workspaces/${workspaceId}/members/${stranger.id}`, { role: "admin" });
    assert.deepEqual([made.status, made.body.role], [200, "admin"]);
    assert.equal((await stranger.api("DELETE", `/forms/${(await member.api("POST", "/forms", { workspaceId })).body.id}`)).status, 204);
  });

  it("removing a member refuses their next API call and app request on the workspace, and nothing else of theirs", async () => {
    const form = await member.api("POST", "/forms", { workspaceId, name: "Before removal" });
    assert.equal(form.status, 201);
    assert.equal((await member.api("GET", `/workspaces/${workspaceId}`)).status, 200);
    assert.equal((await owner.app("DELETE", `/workspaces/${workspaceId}/members/${owner.id}`)).status, 409, "the owner stays");

    assert.equal((await admin.app("DELETE", `/workspaces/${workspaceId}/members/${member.id}`)).status, 204);
    assert.equal((await member.api("GET", `/workspaces/${workspaceId}`)).status, 404);
    assert.equal((await member.api("GET", `/forms/${form.body.id}`)).status, 404);
    assert.equal((await member.api("POST", "/forms", { workspaceId })).status, 404);
    assert.equal((await member.app("GET", `/forms?workspaceId=${workspaceId}`)).status, 404);
    assert.equal((await member.app("GET", `/forms/${form.body.id}`)).status, 404);
    // Their key and session still serve them elsewhere: their own workspace is untouched.
    const theirs = await member.api("GET", "/workspaces");
    assert.deepEqual(theirs.body.items.map((w: { id: string }) => w.id).includes(workspaceId), false);
    assert.equal((await member.api("POST", "/forms", { workspaceId: theirs.body.items[0].id })).status, 201);
    assert.equal((await member.app("GET", "/session")).body.user.email, member.email);
  });
});

describe("invites by email", () => {
  it("an invitation mailed to someone without an account signs them up into the workspace, once", async () => {
    const owner = await person("Ines");
    const made = await owner.app("POST", "/workspaces", { name: "Invited team" });
    const workspaceId = made.body.id;
    const email = unique("newcomer");

    const invited = await owner.app("POST", `/workspaces/${workspaceId}/invites`, { email: email.toUpperCase(), role: "admin" });
    assert.deepEqual([invited.status, invited.body], [202, { invited: true, email }]);
    const mail = await smtp.waitFor((m) => m.to.includes(email));
    assert.equal(mail.subject, "Ines invited you to Invited team");
    assert.equal(mail.from, "forms@example.com");
    const token = linkToken(mail, "/app/accept-invite");
    assert.ok(mail.text.includes("http://forms.example.com/app/accept-invite?token="), "the link is at PUBLIC_URL");
    assert.ok(mail.html.includes(`/app/accept-invite?token=${encodeURIComponent(token)}`));

    const newcomer = appClient(sys.url);
    await newcomer.call("GET", "/session");
    const lookup = await newcomer.call("POST", "/invitations/lookup", { token });
    assert.deepEqual(lookup.body, { email, workspaceName: "Invited team", inviterName: "Ines", role: "admin", accountExists: false });
    const weak = await newcomer.call("POST", "/invitations/accept", { token, name: "Nora", password: "password1" });
    assert.equal(weak.status, 400);
    const accepted = await newcomer.call("POST", "/invitations/accept", { token, name: "Nora", password: "invited and glad to be here" });
    assert.equal(accepted.status, 201, JSON.stringify(accepted.body));
    assert.deepEqual([accepted.body.user.email, accepted.body.workspace.id, accepted.body.workspace.role], [email, workspaceId, "admin"]);
    const session = await newcomer.call("GET", "/session");
    assert.deepEqual([session.body.user.email, session.body.user.emailVerified], [email, true]);
    const theirs = await newcomer.call("GET", "/workspaces");
    assert.equal(theirs.body.items.find((w: { id: string }) => w.id === workspaceId).role, "admin");
    assert.equal((await newcomer.call("GET", `/forms?workspaceId=${workspaceId}`)).status, 200);

    const other = appClient(sys.url);
    await other.call("GET", "/session");
    const twice = await other.call("POST", "/invitations/accept", { token, name: "Eve", password: "another long passphrase here" });
    assert.deepEqual([twice.status, twice.body.error], [400, "this link is not valid: it was used already, has expired or is unknown; ask for a new one"]);

    // An email with an account is added at once, without a mail; the CLI invites the same way.
    const existing = await person("Erik");
    const added = await owner.app("POST", `/workspaces/${workspaceId}/invites`, { email: existing.email });
    assert.deepEqual([added.status, added.body.invited, added.body.user.email], [201, false, existing.email]);
    const cliEmail = unique("by-cli");
    assert.deepEqual(await sys.cli("user:invite", "--workspace", workspaceId, "--email", cliEmail), { invited: true, email: cliEmail });
    const cliMail = await smtp.waitFor((m) => m.to.includes(cliEmail));
    assert.equal(cliMail.subject, "The formsvc administrator invited you to Invited team");
    const byCli = await sys.cli("user:invite", "--workspace", workspaceId, "--email", existing.email);
    assert.deepEqual([byCli.invited, byCli.user.id], [false, existing.id]);
  });
});
