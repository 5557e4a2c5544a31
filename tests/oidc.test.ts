import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { Provider, type KoaContextWithOIDC } from "oidc-provider";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { freePort } from "@formsvc/launcher/ports.ts";
import { ensureAppBuilt } from "@formsvc/launcher/app-build.ts";
import { appClient } from "./support/app-client.ts";
import { launchBrowser, openAccountMenu, pageApi, screenshot } from "./support/browser.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";

// Signing in through an OpenID Connect provider, end to end: a real provider (oidc-provider, the certified
// server library, with its development login and consent pages) on loopback, the whole system with OIDC_ONLY, and
// Chromium going through the provider's pages. The first sign-in makes the account and later ones find it; a
// tampered state, a replayed callback, a wrong nonce and an unverified address sign nobody in; password sign-in is
// hidden and refused; a workspace's auto-join domain takes a new person of that domain in as a member.

const providerName = "Test SSO";
const clientSecret = randomBytes(24).toString("base64url");

/** The provider's people by login name (its login page takes any name and password): the claims it vouches for. */
const people = new Map<string, { email: string; email_verified: boolean; name: string }>();
/** While set, the provider is handed another nonce than the one the gateway sent: its ID token carries that one. */
let swapNonce = false;

let sys: TestSystem;
let browser: Browser;
let provider: { issuer: string; close(): Promise<void> };

/** oidc-provider on a loopback port, with the gateway at `gatewayUrl` as its one client. */
async function startProvider(gatewayUrl: string) {
  let handle: RequestListener | undefined;
  const server = createServer((req, res) => handle!(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const oidc = new Provider(issuer, {
    clients: [
      {
        client_id: "formsvc",
        client_secret: clientSecret,
        redirect_uris: [`${gatewayUrl}/app/api/auth/oidc/callback`],
        token_endpoint_auth_method: "client_secret_post",
      },
    ],
    async findAccount(_ctx: KoaContextWithOIDC, id: string) {
      const person = people.get(id);
      return person && { accountId: id, claims: async () => ({ sub: id, ...person }) };
    },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    features: { devInteractions: { enabled: true } },
    // Every authorization request must carry a PKCE challenge, as the gateway's do.
    pkce: { required: () => true },
    cookies: { keys: [randomBytes(32).toString("base64url")] },
  });
  oidc.use(async (ctx, next) => {
    if (swapNonce && ctx.path === "/auth" && typeof ctx.query.nonce === "string") ctx.query = { ...ctx.query, nonce: "a-nonce-this-sign-in-never-sent" };
    await next();
  });
  handle = oidc.callback();
  return {
    issuer,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

before(async () => {
  ensureAppBuilt(undefined, { quiet: true });
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  provider = await startProvider(publicUrl);
  [sys, browser] = await Promise.all([
    startTestSystem("oidc", {
      PORT: String(port),
      PUBLIC_URL: publicUrl,
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: "formsvc",
      OIDC_CLIENT_SECRET: clientSecret,
      OIDC_NAME: providerName,
      OIDC_ONLY: "true",
    }),
    launchBrowser(),
  ]);
});
after(async () => {
  await browser?.close();
  await sys?.stop();
  await provider?.close();
});

const stamp = () => `${Date.now()}${Math.random().toString(36).slice(2, 6)}`;

/** A person at the provider, known by a fresh login name. */
function person(local: string, domain = "example.com", verified = true) {
  const login = `${local}-${stamp()}`;
  people.set(login, { email: `${login}@${domain}`, email_verified: verified, name: local[0]!.toUpperCase() + local.slice(1) });
  return { login, email: `${login}@${domain}` };
}

/** A browser of its own (cookies apart) that reaches nothing but this machine (the provider's pages name web fonts). */
async function newBrowser(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  await context.route((url) => !["127.0.0.1", "localhost"].includes(url.hostname), (route) => route.abort());
  return { context, page: await context.newPage() };
}

/**
 * From the app's sign-in page through the provider's login (`login`, any password) and consent pages, up to the
 * gateway's callback; a provider session of this browser skips its pages. Resolves with the callback's answer.
 */
async function signInThroughProvider(page: Page, login: string) {
  await page.goto(`${sys.url}/app/signin`);
  const callback = page.waitForResponse((res) => res.url().startsWith(`${sys.url}/app/api/auth/oidc/callback`));
  await page.getByRole("link", { name: `Sign in with ${providerName}` }).click();
  await page.waitForURL((url) => url.href.startsWith(`${provider.issuer}/interaction/`) || url.href.startsWith(`${sys.url}/app/api/auth/oidc/callback`) || url.href === `${sys.url}/app/forms`);
  if (page.url().startsWith(provider.issuer)) {
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill("anything");
    await page.getByRole("button", { name: "Sign-in" }).click();
    const consent = page.getByRole("button", { name: "Continue" });
    // Consent once per person; a returning one goes straight back.
    await Promise.race([consent.waitFor().then(() => consent.click(), () => undefined), callback]);
  }
  return callback;
}

/** Who the browser is signed in as, by /app/api/session (null: nobody). */
async function sessionUser(page: Page) {
  const session = await pageApi(page)("GET", "/session");
  assert.equal(session.status, 200);
  return session.body.user as { id: string; email: string; name: string; emailVerified: boolean } | null;
}

describe("signing in through an OpenID Connect provider", () => {
  it("makes the account on the first sign-in (the address verified) and finds the same account after signing out and in again", async () => {
    const ada = person("ada");
    const { context, page } = await newBrowser();
    const answer = await signInThroughProvider(page, ada.login);
    assert.equal(answer.status(), 302);
    await page.waitForURL(`${sys.url}/app/forms`);
    const first = await sessionUser(page);
    assert.deepEqual([first?.email, first?.name, first?.emailVerified], [ada.email, "Ada", true]);
    const workspaces = await pageApi(page)("GET", "/workspaces");
    assert.deepEqual(workspaces.body.items.map((w: { name: string; role: string }) => [w.name, w.role]), [["Ada's workspace", "owner"]]);
    await screenshot(page, "oidc-signed-in");

    await openAccountMenu(page);
    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await page.waitForURL(`${sys.url}/app/signin`);
    assert.equal(await sessionUser(page), null);
    // The callback that signed Ada in, replayed in this browser: its flow is finished, so nobody is signed in.
    const replayed = await page.goto(answer.url());
    assert.equal(replayed?.status(), 400);
    assert.equal(await sessionUser(page), null);
    // The provider still knows this browser (sign-out ends the local session only): back without its pages.
    assert.equal((await signInThroughProvider(page, ada.login)).status(), 302);
    await page.waitForURL(`${sys.url}/app/forms`);
    assert.equal((await sessionUser(page))?.id, first!.id);

    // Another browser, through the provider's login again: still the same account.
    const other = await newBrowser();
    await signInThroughProvider(other.page, ada.login);
    await other.page.waitForURL(`${sys.url}/app/forms`);
    assert.equal((await sessionUser(other.page))?.id, first!.id);
    await Promise.all([context.close(), other.context.close()]);
  });

  it("with OIDC_ONLY shows only the provider's button, and the server refuses password sign-in and sign-up", async () => {
    const { context, page } = await newBrowser();
    await page.goto(`${sys.url}/app/signin`);
    await page.getByRole("link", { name: `Sign in with ${providerName}` }).waitFor();
    assert.equal(await page.getByLabel("Password").count(), 0);
    assert.equal(await page.getByRole("link", { name: "Create an account" }).count(), 0);
    await screenshot(page, "oidc-only-sign-in");
    await page.goto(`${sys.url}/app/signup`);
    await page.getByRole("link", { name: `Sign in with ${providerName}` }).waitFor();
    assert.equal(await page.getByLabel("Password").count(), 0);
    await context.close();

    const api = appClient(sys.url);
    const session = await api.call("GET", "/session");
    assert.deepEqual(session.body.signIn, { oidc: { name: providerName }, passwordSignIn: false });
    const refusal = { error: `password sign-in is turned off here: sign in with ${providerName}` };
    const signIn = await api.call("POST", "/auth/signin", { email: `pat.${stamp()}@example.com`, password: "correct horse battery staple" });
    assert.deepEqual([signIn.status, signIn.body], [403, refusal]);
    const signUp = await api.call("POST", "/auth/signup", { email: `new.${stamp()}@example.com`, name: "New", password: "correct horse battery staple" });
    assert.deepEqual([signUp.status, signUp.body], [403, refusal]);
    const reset = await api.call("POST", "/auth/password-reset/complete", { token: "whatever", password: "correct horse battery staple" });
    assert.equal(reset.status, 403);
  });

  it("refuses a tampered state and a replayed callback, with a readable 400 and no session", async () => {
    const tess = person("tess");
    const { context, page } = await newBrowser();
    // The flow started as the button starts it (the context keeps its cookie), and its state changed on the way to
    // the provider, which hands it back as given.
    const started = await context.request.get(`${sys.url}/app/api/auth/oidc/start`, { maxRedirects: 0 });
    assert.equal(started.status(), 302);
    const toProvider = new URL(started.headers()["location"]!);
    const state = toProvider.searchParams.get("state")!;
    toProvider.searchParams.set("state", `${state}x`);
    const callback = page.waitForResponse((res) => res.url().startsWith(`${sys.url}/app/api/auth/oidc/callback`));
    await page.goto(toProvider.href);
    await page.locator('input[name="login"]').fill(tess.login);
    await page.locator('input[name="password"]').fill("anything");
    await page.getByRole("button", { name: "Sign-in" }).click();
    await page.getByRole("button", { name: "Continue" }).click();
    const refused = await callback;
    assert.equal(refused.status(), 400);
    await page.waitForURL(`${sys.url}/app/api/auth/oidc/callback?*`);
    assert.match(await page.locator("main").innerText(), /Sign-in failed\s+The answer from Test SSO does not match this sign-in \(unexpected "state" response parameter value\); sign in again\./);
    await screenshot(page, "oidc-refused-state");
    assert.equal(await sessionUser(page), null);

    // The same callback with the flow's own state, replayed: its flow is spent (the first callback deleted it).
    const held = new URL(refused.url());
    held.searchParams.set("state", state);
    const replayed = await page.goto(held.href);
    assert.equal(replayed?.status(), 400);
    assert.match(await page.locator("main").innerText(), /cannot be finished: it was finished already, took longer than 10 minutes, or began in another browser/);
    assert.equal(await sessionUser(page), null);

    // Without a browser's flow cookie at all, as JSON for a client that asks for it.
    const bare = await fetch(held.href, { headers: { accept: "application/json" }, redirect: "manual" });
    assert.equal(bare.status, 400);
    assert.match((await bare.json()).error, /^this sign-in with Test SSO cannot be finished/);
    assert.equal(bare.headers.getSetCookie().some((c) => c.startsWith("formsvc_session=") && !/Max-Age=0/.test(c)), false);
    await context.close();
  });

  it("refuses an ID token whose nonce is not this sign-in's, with no session", async () => {
    const nora = person("nora");
    const { context, page } = await newBrowser();
    swapNonce = true;
    try {
      const answer = await signInThroughProvider(page, nora.login);
      assert.equal(answer.status(), 400);
    } finally {
      swapNonce = false;
    }
    assert.match(await page.locator("main").innerText(), /does not match this sign-in \(.*"nonce".*\)/);
    assert.equal(await sessionUser(page), null);
    await context.close();
  });

  it("refuses an address the provider has not verified, saying so, and makes no account", async () => {
    const uma = person("uma", "example.com", false);
    const { context, page } = await newBrowser();
    const answer = await signInThroughProvider(page, uma.login);
    assert.equal(answer.status(), 403);
    assert.match(await page.locator("main").innerText(), new RegExp(`Test SSO signed you in, but the provider has not verified ${uma.email.replace(/\./g, "\\.")}`));
    assert.equal(await sessionUser(page), null);
    await context.close();
  });

  it("takes a new person of a workspace's auto-join domain in as a member on their first sign-in", async () => {
    const olga = person("olga");
    const owner = await newBrowser();
    await signInThroughProvider(owner.page, olga.login);
    await owner.page.waitForURL(`${sys.url}/app/forms`);
    const team = (await pageApi(owner.page)("POST", "/workspaces", { name: "Example Org team" })).body;
    // The owner sets the domain in the workspace's settings on the Workspaces page.
    await owner.page.goto(`${sys.url}/app/workspaces`);
    const card = owner.page.locator("li.workspace").filter({ hasText: "Example Org team" });
    await card.getByLabel("Email domains").fill("example.org");
    await card.getByRole("button", { name: "Save auto-join domains" }).click();
    await owner.page.locator(".notice, .inline").filter({ hasText: "People at example.org now join Example Org team" }).first().waitFor();
    await screenshot(owner.page, "oidc-auto-join-settings");
    assert.deepEqual((await pageApi(owner.page)("GET", `/workspaces/${team.id}/auto-join-domains`)).body, { domains: ["example.org"] });

    const nico = person("nico", "example.org");
    const newcomer = await newBrowser();
    await signInThroughProvider(newcomer.page, nico.login);
    await newcomer.page.waitForURL(`${sys.url}/app/forms`);
    const theirs = (await pageApi(newcomer.page)("GET", "/workspaces")).body.items;
    assert.deepEqual(
      theirs.map((w: { name: string; role: string }) => [w.name, w.role]).sort(),
      [["Example Org team", "member"], ["Nico's workspace", "owner"]],
    );
    const members = (await pageApi(owner.page)("GET", `/workspaces/${team.id}/members`)).body.items;
    assert.deepEqual(members.map((m: { user: { email: string }; role: string }) => [m.user.email, m.role]), [[olga.email, "owner"], [nico.email, "member"]]);
    // A member may not change them.
    const changed = await pageApi(newcomer.page)("PUT", `/workspaces/${team.id}/auto-join-domains`, { domains: ["example.net"] });
    assert.deepEqual([changed.status, changed.body], [403, { error: "only the workspace's owner sets its auto-join domains" }]);
    await Promise.all([owner.context.close(), newcomer.context.close()]);
  });
});
