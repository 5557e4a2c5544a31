import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { appClient } from "./support/app-client.ts";
import { linkToken, startSmtpSink, type SmtpSink } from "./support/smtp.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";

// Roles per workspace through the whole system: what an owner, an admin and a member may do over the
// app and the API, that removing a member refuses their very next call, and an invitation mailed to
// someone without an account (received by a real SMTP server on loopback) signing them up into it.
// Joining takes a verified address (issue 34): someone who signed up with another person's address and
// never verified it is not added by an invitation, and that person's password reset ends their key.

let sys: TestSystem;
let smtp: SmtpSink;

before(async () => {
  smtp = await startSmtpSink();
  // TRUST_PROXY: each browser has an address of its own (X-Forwarded-For), so sign-ups and mailed links
  // (10 a minute per address) are counted per browser.
  sys = await startTestSystem("roles", {
    SMTP_URL: smtp.url,
    MAIL_FROM: "Forms <forms@example.com>",
    PUBLIC_URL: "http://forms.example.com",
    TRUST_PROXY: "true",
  });
});
after(async () => {
  await sys?.stop();
  await smtp?.close();
});

const unique = (local: string) => `${local}.${Date.now()}.${Math.random().toString(36).slice(2, 8)}@example.com`;

let browsers = 0;
/** A browser of its own, from an address of its own. */
async function newBrowser() {
  const browser = appClient(sys.url, { address: `198.51.100.${++browsers}` });
  await browser.call("GET", "/session");
  return browser;
}

/** The newest mail to `to` about `subject`, arrived after `since` mails in all. */
const mailTo = (to: string, subject: string, since = 0) => smtp.waitFor((m) => smtp.mails.indexOf(m) >= since && m.to.includes(to) && m.subject === subject);

/**
 * A person signed up in their own browser, with an API key; their address verified by the mailed link
 * unless `verified` is false (only a verified address joins a workspace at once).
 */
async function person(name: string, { email = unique(name.toLowerCase()), verified = true } = {}) {
  const browser = await newBrowser();
  const signedUp = await browser.call("POST", "/auth/signup", { email, name, password: `${name} keeps a long passphrase` });
  assert.equal(signedUp.status, 201, JSON.stringify(signedUp.body));
  if (verified) {
    const token = linkToken(await mailTo(email, "Confirm your email address"), "/app/verify-email");
    const confirmed = await browser.call("POST", "/auth/verify-email", { token });
    assert.deepEqual([confirmed.status, confirmed.body.user?.emailVerified], [200, true], JSON.stringify(confirmed.body));
  }
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

type Person = Awaited<ReturnType<typeof person>>;

/** `manager` invites `who` (verified) to the workspace, who accepts it from their own list of invitations. */
async function join(manager: Person, who: Person, workspaceId: string, role: "admin" | "member" = "member") {
  const invited = await manager.app("POST", `/workspaces/${workspaceId}/invites`, { email: who.email, role });
  assert.equal(invited.status, 201, JSON.stringify(invited.body));
  const mine = await who.app("GET", "/invitations");
  assert.ok(mine.body.items.some((i: { id: string }) => i.id === invited.body.id), JSON.stringify(mine.body));
  const accepted = await who.app("POST", `/invitations/${invited.body.id}/accept`);
  assert.deepEqual([accepted.status, accepted.body.workspace?.role], [200, role], JSON.stringify(accepted.body));
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
    await join(owner, admin, workspaceId, "admin");
    await join(admin, member, workspaceId);
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
    assert.equal((await member.app("GET", `/workspaces/${workspaceId}/invites`)).status, 403);
    assert.equal((await member.app("POST", `/workspaces/${workspaceId}/invites`, { email: unique("nobody") })).status, 403);
    assert.equal((await member.app("PATCH", `/workspaces/${workspaceId}/members/${admin.id}`, { role: "member" })).status, 403);
    assert.equal((await member.app("DELETE", `/workspaces/${workspaceId}/members/${admin.id}`)).status, 403);
    assert.equal((await member.app("DELETE", `/api-keys/${admin.keyId}`)).status, 404, "another person's key is not theirs to delete");
    assert.equal((await admin.api("GET", "/users/me")).status, 200, "the admin's key still works");
    const badRole = await admin.app("PATCH", `/workspaces/${workspaceId}/members/${member.id}`, { role: "owner" });
    assert.equal(badRole.status, 400);

    assert.equal((await admin.api("DELETE", `/forms/${form.body.id}`)).status, 204);
    assert.equal((await member.api("GET", `/forms/${form.body.id}`)).status, 404, "deleted: in the Trash");

    // Plans are the operator's: nobody in the workspace, its owner included, can give it Pro (branding removal).
    for (const person of [owner, admin, member]) assert.equal((await person.app("PUT", `/workspaces/${workspaceId}/plan`, { plan: "pro" })).status, 404);
    assert.equal((await member.api("GET", `/workspaces/${workspaceId}`)).body.plan, "free");
    await sys.cli("workspace:set-plan", "--workspace", workspaceId, "--plan", "pro");
    assert.equal((await member.api("GET", `/workspaces/${workspaceId}`)).body.plan, "pro");

    const promoted = await admin.app("PATCH", `/workspaces/${workspaceId}/members/${stranger.id}`, { role: "admin" });
    assert.equal(promoted.status, 404, "not a member yet");
    await join(admin, stranger, workspaceId);
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
    assert.equal(invited.status, 201, JSON.stringify(invited.body));
    assert.deepEqual(
      { ...invited.body, id: typeof invited.body.id, createdAt: typeof invited.body.createdAt, expiresAt: typeof invited.body.expiresAt },
      { id: "string", email, workspaceId, workspaceName: "Invited team", role: "admin", inviterName: "Ines", createdAt: "string", expiresAt: "string" },
    );
    const pending = await owner.app("GET", `/workspaces/${workspaceId}/invites`);
    assert.deepEqual(pending.body.items.map((i: { id: string }) => i.id), [invited.body.id]);
    const mail = await smtp.waitFor((m) => m.to.includes(email));
    assert.equal(mail.subject, "Ines invited you to Invited team");
    assert.equal(mail.from, "forms@example.com");
    const token = linkToken(mail, "/app/accept-invite");
    assert.ok(mail.text.includes("http://forms.example.com/app/accept-invite?token="), "the link is at PUBLIC_URL");
    assert.ok(mail.html.includes(`/app/accept-invite?token=${encodeURIComponent(token)}`));

    const newcomer = await newBrowser();
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

    const other = await newBrowser();
    const twice = await other.call("POST", "/invitations/accept", { token, name: "Eve", password: "another long passphrase here" });
    assert.deepEqual([twice.status, twice.body.error], [400, "this link is not valid: it was used already, has expired or is unknown; ask for a new one"]);

    assert.deepEqual((await owner.app("GET", `/workspaces/${workspaceId}/invites`)).body.items, [], "accepted, it is no longer pending");

    // Someone with an account is invited the same way, not added: they accept from their list of invitations.
    const existing = await person("Erik");
    const forErik = await owner.app("POST", `/workspaces/${workspaceId}/invites`, { email: existing.email });
    assert.deepEqual([forErik.status, forErik.body.email, forErik.body.role], [201, existing.email, "member"]);
    assert.equal((await existing.app("GET", `/forms?workspaceId=${workspaceId}`)).status, 404, "not a member before accepting");
    assert.equal((await smtp.waitFor((m) => m.to.includes(existing.email) && m.subject === "Ines invited you to Invited team")).subject, "Ines invited you to Invited team");
    const erikSees = await existing.app("GET", "/invitations");
    assert.deepEqual(erikSees.body.items.map((i: { id: string; workspaceName: string; inviterName: string }) => [i.id, i.workspaceName, i.inviterName]), [
      [forErik.body.id, "Invited team", "Ines"],
    ]);
    const erikJoins = await existing.app("POST", `/invitations/${forErik.body.id}/accept`);
    assert.deepEqual([erikJoins.status, erikJoins.body.workspace.id, erikJoins.body.workspace.role], [200, workspaceId, "member"]);
    assert.equal((await owner.app("POST", `/workspaces/${workspaceId}/invites`, { email: existing.email })).status, 409, "a member already");

    // The CLI invites the same way; an invitation is revoked, and its link stops working.
    const cliEmail = unique("by-cli");
    const byCli = await sys.cli("user:invite", "--workspace", workspaceId, "--email", cliEmail);
    assert.deepEqual([byCli.email, byCli.inviterName, byCli.role], [cliEmail, "The formsvc administrator", "member"]);
    const cliMail = await smtp.waitFor((m) => m.to.includes(cliEmail));
    assert.equal(cliMail.subject, "The formsvc administrator invited you to Invited team");
    assert.equal((await owner.app("DELETE", `/workspaces/${workspaceId}/invites/${byCli.id}`)).status, 204);
    const revoked = await newBrowser().then((b) => b.call("POST", "/invitations/lookup", { token: linkToken(cliMail, "/app/accept-invite") }));
    assert.deepEqual([revoked.status, revoked.body.error], [400, "this link is not valid: it was used already, has expired or is unknown; ask for a new one"]);
    assert.equal((await owner.app("DELETE", `/workspaces/${workspaceId}/invites/${byCli.id}`)).status, 404);
  });

  it("one email gets at most 3 invitations an hour from a workspace: the next is a 429 JSON error, and no mail", async () => {
    const owner = await person("Rita");
    const workspaceId = (await owner.app("POST", "/workspaces", { name: "Flood" })).body.id;
    const email = unique("flooded");
    for (let i = 0; i < 3; i++) assert.equal((await owner.app("POST", `/workspaces/${workspaceId}/invites`, { email })).status, 201);
    const refused = await owner.app("POST", `/workspaces/${workspaceId}/invites`, { email });
    assert.deepEqual([refused.status, refused.body.error], [429, "too many invitations: at most 3 an hour to one email from this workspace; try again later"]);
    await smtp.waitFor((m) => m.to.includes(email) && smtp.mails.filter((x) => x.to.includes(email)).length === 3);
    assert.deepEqual((await owner.app("GET", `/workspaces/${workspaceId}/invites`)).body.items.length, 1, "each newer one replaced the older");
  });
});

describe("issue 34: someone else's address, signed up and never verified", () => {
  it("is invited but does not join; the address's owner resets the password by mail and the stranger's key is refused", async () => {
    const owner = await person("Owen");
    const workspaceId = (await owner.app("POST", "/workspaces", { name: "Payroll" })).body.id;
    const form = await owner.api("POST", "/forms", { workspaceId, name: "Salaries" });
    assert.equal(form.status, 201, JSON.stringify(form.body));

    // The stranger signs up with the victim's address, never verifies it, and makes an API key.
    const victim = unique("victim");
    const stranger = await person("Mallory", { email: victim, verified: false });
    assert.equal((await stranger.app("GET", "/session")).body.user.emailVerified, false);

    // The owner invites the address as an admin: the answer is the one for an address without an account.
    const nobody = unique("nobody");
    const invited = await owner.app("POST", `/workspaces/${workspaceId}/invites`, { email: victim, role: "admin" });
    const forNobody = await owner.app("POST", `/workspaces/${workspaceId}/invites`, { email: nobody, role: "admin" });
    /** An answer without what differs by email and time. */
    const shape = (res: typeof invited) => [res.status, { ...res.body, id: "", email: "", createdAt: "", expiresAt: "" }];
    assert.deepEqual(shape(invited), shape(forNobody));
    assert.deepEqual([invited.status, invited.body.email, invited.body.role], [201, victim, "admin"]);
    // The stranger's account does not see it: its address was never proven, so the invitation may not be theirs.
    assert.deepEqual((await stranger.app("GET", "/invitations")).body.items, []);
    assert.equal((await stranger.app("POST", `/invitations/${invited.body.id}/accept`)).status, 400);

    // Not a member: the stranger's key does not reach the workspace or its forms.
    assert.equal((await stranger.api("GET", `/workspaces/${workspaceId}`)).status, 404);
    assert.equal((await stranger.api("GET", `/forms/${form.body.id}`)).status, 404);
    assert.equal((await stranger.api("POST", "/forms", { workspaceId })).status, 404);
    assert.equal((await stranger.api("GET", "/users/me")).status, 200, "the key works, for the account's own things");
    const members = await owner.app("GET", `/workspaces/${workspaceId}/members`);
    assert.deepEqual(members.body.items.map((m: { user: { email: string } }) => m.user.email), [owner.email]);

    // The address's owner, in a browser of their own, gets the invitation and sets a password by mail;
    // asking to keep the keys does not keep the ones made before the address was proven.
    const invitation = linkToken(await mailTo(victim, "Owen invited you to Payroll"), "/app/accept-invite");
    const real = await newBrowser();
    assert.equal((await real.call("POST", "/auth/password-reset", { email: victim })).status, 202);
    const resetToken = linkToken(await mailTo(victim, "Set a new password"), "/app/reset-password");
    const reset = await real.call("POST", "/auth/password-reset/complete", { token: resetToken, password: "this address is mine, truly", deleteApiKeys: false });
    assert.equal(reset.status, 200, JSON.stringify(reset.body));
    assert.equal((await real.call("GET", "/session")).body.user.emailVerified, true, "the mailed link proved the address");
    assert.equal((await stranger.api("GET", "/users/me")).status, 401, "the stranger's key is refused");
    assert.equal((await stranger.api("GET", `/forms/${form.body.id}`)).status, 401);
    assert.equal((await stranger.app("GET", "/session")).body.user, null, "the stranger's session ended");
    assert.equal((await owner.api("GET", `/forms/${form.body.id}`)).status, 200, "nobody else's key");

    // Signed in now, they follow the invitation and join as the admin they were invited as.
    assert.equal((await real.call("POST", "/invitations/lookup", { token: invitation })).body.accountExists, true);
    const joined = await real.call("POST", "/invitations/accept", { token: invitation });
    assert.deepEqual([joined.status, joined.body.workspace?.id, joined.body.workspace?.role], [200, workspaceId, "admin"], JSON.stringify(joined.body));
    assert.equal((await real.call("GET", `/forms/${form.body.id}`)).status, 200);
  });

  it("a verified person's password reset keeps their API keys when asked, and deletes them by default", async () => {
    const kim = await person("Kim");
    const other = await person("Ola");
    const resetTo = async (password: string, deleteApiKeys?: boolean) => {
      const since = smtp.mails.length;
      assert.equal((await kim.app("POST", "/auth/password-reset", { email: kim.email })).status, 202);
      const token = linkToken(await mailTo(kim.email, "Set a new password", since), "/app/reset-password");
      const res = await kim.app("POST", "/auth/password-reset/complete", { token, password, ...(deleteApiKeys === undefined ? {} : { deleteApiKeys }) });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    };
    await resetTo("Kim's second long passphrase", false);
    assert.equal((await kim.api("GET", "/users/me")).status, 200, "kept, as asked");
    await resetTo("Kim's third long passphrase");
    assert.equal((await kim.api("GET", "/users/me")).status, 401, "deleted: the default, as the page's box");
    assert.equal((await other.api("GET", "/users/me")).status, 200, "nobody else's");
  });
});
