import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Secret, TOTP } from "otpauth";
import type { Browser, Page } from "playwright-core";
import { ensureAppBuilt } from "@formsvc/launcher/app-build.ts";
import { appClient } from "./support/app-client.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { launchBrowser, openAccountMenu, pageApi, screenshot, signedInContext, watchPage } from "./support/browser.ts";
import { linkToken, startSmtpSink, type SmtpSink } from "./support/smtp.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";

// Two-factor sign-in through the whole system (issue 34): a person turns it on in Chromium with a code their
// "authenticator" (otpauth, here) computes, signs in with the next code, is refused a used or wrong one,
// signs in once with a recovery code; an owner requires it of a workspace and a member who signs in can do
// nothing but turn it on; a password reset by mail asks for the code too.

let sys: TestSystem;
let browser: Browser;
let smtp: SmtpSink;

before(async () => {
  ensureAppBuilt(undefined, { quiet: true });
  smtp = await startSmtpSink();
  // TRUST_PROXY: the API clients come from addresses of their own (X-Forwarded-For); the browser is 127.0.0.1.
  [sys, browser] = await Promise.all([startTestSystem("two_factor", { SMTP_URL: smtp.url, MAIL_FROM: "Forms <forms@example.com>", TRUST_PROXY: "true" }), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await sys?.stop();
  await smtp?.close();
});

const unique = (local: string) => `${local}.${Date.now()}.${Math.random().toString(36).slice(2, 8)}@example.com`;
const password = "a long and unusual passphrase";
/** The code an authenticator shows for `secret` at `at`: the next 30-second step's is always one not used yet. */
const codeOf = (secret: string, at = Date.now()) => new TOTP({ algorithm: "SHA1", digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate({ timestamp: at });
const nextCode = (secret: string) => codeOf(secret, Date.now() + 30_000);
let addresses = 0;
async function newClient() {
  const client = appClient(sys.url, { address: `203.0.113.${++addresses}` });
  await client.call("GET", "/session");
  return client;
}

/** Turns two-factor sign-in on in the page (on Security): the secret, the code used and the recovery codes. */
async function enrolInPage(page: Page) {
  await page.getByRole("button", { name: "Turn on two-factor sign-in" }).click();
  const secret = (await page.getByTestId("totp-secret").innerText()).replace(/\s/g, "");
  assert.match(secret, /^[A-Z2-7]{32}$/);
  assert.equal(await page.locator(".qr-code svg").count(), 1);
  const code = codeOf(secret);
  await page.getByLabel("The 6-digit code it shows").fill(code);
  await page.getByRole("button", { name: "Turn two-factor sign-in on" }).click();
  const list = page.getByRole("list", { name: "Recovery codes" });
  await list.waitFor();
  const codes = await list.locator("code").allInnerTexts();
  assert.equal(codes.length, 10);
  await screenshot(page, "app-two-factor-recovery-codes");
  await page.getByRole("button", { name: "I have saved them" }).click();
  await page.getByRole("heading", { name: "Two-factor sign-in is on" }).waitFor();
  return { secret, usedCode: code, recoveryCodes: codes };
}

async function signInWithPassword(page: Page, email: string) {
  await page.goto(`${sys.url}/app/signin`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

async function signOut(page: Page) {
  await openAccountMenu(page);
  await page.getByRole("button", { name: "Sign out", exact: true }).click();
  await page.waitForURL(/\/app\/signin$/);
}

describe("two-factor sign-in in Chromium", () => {
  it("is turned on with an authenticator's code; sign-in then asks a fresh code, refuses a used or wrong one, and takes a recovery code once", async () => {
    const email = unique("tess");
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    // 400 for the wrong and used codes the test types.
    const problems = watchPage(page, [400, 401]);
    await page.goto(`${sys.url}/app/signup`);
    await page.getByLabel("Name").fill("Tess");
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Create account" }).click();
    await page.waitForURL(/\/app\/forms$/);
    await openAccountMenu(page);
    await page.getByRole("link", { name: "Security" }).click();
    const { secret, usedCode, recoveryCodes } = await enrolInPage(page);

    await signOut(page);
    await signInWithPassword(page, email);
    await page.getByRole("heading", { name: "Two-factor sign-in" }).waitFor();
    const code = page.getByLabel("Authentication code");
    await code.fill(usedCode);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText(/that code is not right/).waitFor();
    await code.fill(usedCode === "000000" ? "000001" : "000000");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText(/that code is not right/).waitFor();
    await code.fill(nextCode(secret));
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(/\/app\/forms$/);

    // A recovery code, typed as printed, works once.
    await signOut(page);
    await signInWithPassword(page, email);
    await page.getByLabel("Authentication code").fill(recoveryCodes[3]);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(/\/app\/forms$/);
    await signOut(page);
    await signInWithPassword(page, email);
    await page.getByLabel("Authentication code").fill(recoveryCodes[3]);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText(/that code is not right/).waitFor();
    assert.ok(!page.url().endsWith("/forms"));
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("an owner requires it of a workspace: a member who signs in lands on Security, gets 403 elsewhere until they turn it on", async () => {
    // Olga, the owner, turns it on for herself through the API, then requires it on the Workspaces page.
    const olga = await newClient();
    const olgaEmail = unique("olga");
    assert.equal((await olga.call("POST", "/auth/signup", { email: olgaEmail, name: "Olga", password })).status, 201);
    const begun = (await olga.call("POST", "/account/two-factor/enrolment")).body;
    assert.equal((await olga.call("POST", "/account/two-factor/confirm", { code: codeOf(begun.secret) })).status, 200);
    const workspace = (await olga.call("POST", "/workspaces", { name: "Careful team" })).body;
    const miaEmail = unique("mia");
    assert.equal((await olga.call("POST", `/workspaces/${workspace.id}/invites`, { email: miaEmail, role: "member" })).status, 201);
    const invitation = await smtp.waitFor((m) => m.to.includes(miaEmail));
    const mia = await newClient();
    const joined = await mia.call("POST", "/invitations/accept", { token: linkToken(invitation, "/app/accept-invite"), name: "Mia", password });
    assert.equal(joined.status, 201, JSON.stringify(joined.body));

    const olgasContext = await signedInContext(browser, sys.url, olga.cookies);
    const olgasPage = await olgasContext.newPage();
    await olgasPage.goto(`${sys.url}/app/workspaces`);
    await olgasPage.locator(".workspace").filter({ hasText: "Careful team" }).getByLabel("Require two-factor sign-in of every member").check();
    await olgasPage.getByText("Members of Careful team now sign in with two factors.").waitFor();
    await olgasContext.close();

    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    const problems = watchPage(page, [401, 403]);
    await signInWithPassword(page, miaEmail);
    await page.waitForURL(/\/app\/settings\/security$/);
    await page.getByText("Careful team requires two-factor sign-in of its members: turn it on to go on.").waitFor();
    const api = pageApi(page);
    const refused = await api("GET", "/workspaces");
    assert.equal(refused.status, 403);
    assert.match(refused.body.error, /requires two-factor sign-in/);
    // Going elsewhere brings her back.
    await page.goto(`${sys.url}/app/forms`);
    await page.waitForURL(/\/app\/settings\/security$/);
    await enrolInPage(page);
    assert.equal((await api("GET", "/workspaces")).status, 200);
    // The workspace's audit log has the requirement (Olga's, with its value) and Mia's second factor.
    const miaId = joined.body.user.id;
    const logged = async (action: string) => (await olga.call("GET", `/workspaces/${workspace.id}/audit-events?action=${action}`)).body.items;
    const [required] = await eventuallyPasses(() => logged("workspace.require_two_factor"), (items) => items.length > 0);
    const olgaId = (await olga.call("GET", "/session")).body.user.id;
    assert.deepEqual([required.actor.userId, required.changes], [olgaId, [{ field: "required", value: "true" }]]);
    const enabled = await eventuallyPasses(() => logged("two_factor.enable"), (items) => items.length > 0);
    assert.deepEqual(enabled.map((e: { actor: { userId: string } }) => e.actor.userId), [miaId]);
    await page.getByRole("link", { name: "Forms", exact: true }).click();
    await page.waitForURL(/\/app\/forms$/);
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("a password reset by mail asks for the code too: 400 on secondFactorCode, then the reset with it", async () => {
    const client = await newClient();
    const email = unique("rosa");
    assert.equal((await client.call("POST", "/auth/signup", { email, name: "Rosa", password })).status, 201);
    const { secret } = (await client.call("POST", "/account/two-factor/enrolment")).body;
    assert.equal((await client.call("POST", "/account/two-factor/confirm", { code: codeOf(secret) })).status, 200);
    const stranger = await newClient();
    assert.equal((await stranger.call("POST", "/auth/password-reset", { email })).status, 202);
    const mail = await smtp.waitFor((m) => m.to.includes(email) && m.subject === "Set a new password");
    const token = linkToken(mail, "/app/reset-password");
    const newPassword = "another long and unusual passphrase";
    const asked = await stranger.call("POST", "/auth/password-reset/complete", { token, password: newPassword });
    assert.equal(asked.status, 400);
    assert.deepEqual(asked.body.fields?.map((f: { key: string }) => f.key), ["second_factor_code"]);
    const reset = await stranger.call("POST", "/auth/password-reset/complete", { token, password: newPassword, secondFactorCode: nextCode(secret) });
    assert.equal(reset.status, 200, JSON.stringify(reset.body));
    // The new password, like the old one, is only the first factor.
    const signIn = await (await newClient()).call("POST", "/auth/signin", { email, password: newPassword });
    assert.deepEqual([signIn.status, signIn.body.twoFactorRequired, typeof signIn.body.challenge], [200, true, "string"]);
  });
});
