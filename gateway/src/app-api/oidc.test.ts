import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import express from "express";
import { createLogger } from "@formsvc/platform/logger.ts";
import { FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { IdentityService, UserSchema } from "@formsvc/proto/identity/v1/identity_pb.js";
import { errorHandler, HttpError } from "../http-errors.ts";
import { MemorySlidingWindow } from "../rate-limit/sliding-window.ts";
import { appDoor } from "../routes/app-door.ts";
import { parseCookies } from "./cookies.ts";
import { openTransaction, sealTransaction, type OidcClaims, type OidcProvider, type OidcTransaction } from "./oidc-client.ts";

// The gateway's side of OpenID Connect sign-in over a fake provider and a fake identity: the flow's sealed cookie,
// taken once; the callback's answers (302 with a session, or a 400/403 page or JSON and no session); OIDC_ONLY's
// refusal of password routes; what /session tells the app. The real provider, end to end: tests/oidc.test.ts.

const secretKey = "a test secret key";
const logger = createLogger("oidc-test", "silent");
const transaction = (over: Partial<OidcTransaction> = {}): OidcTransaction => ({ state: "s1", nonce: "n1", codeVerifier: "v1", expiresAt: Date.now() + 60_000, ...over });

describe("the flow's transaction cookie", () => {
  it("opens to what was sealed, and to nothing once changed, under another key, or expired", () => {
    // Values long enough that the sealed text (random base64url) cannot hold them by chance, as it did "s1" once.
    const sealed = sealTransaction(transaction({ state: "state-kept-secret", nonce: "nonce-kept-secret", codeVerifier: "verifier-kept-secret" }), secretKey);
    assert.deepEqual(openTransaction(sealed, secretKey)?.state, "state-kept-secret");
    assert.doesNotMatch(sealed, /kept-secret/, "nobody reads it");
    const flipped = sealed.slice(0, 30) + (sealed[30] === "A" ? "B" : "A") + sealed.slice(31);
    assert.equal(openTransaction(flipped, secretKey), undefined);
    assert.equal(openTransaction(sealed, "another key"), undefined);
    assert.equal(openTransaction(sealed, secretKey, Date.now() + 120_000), undefined);
    assert.equal(openTransaction("not sealed at all", secretKey), undefined);
  });
});

/** A provider whose `code` says whether the address is verified; another state is refused as openid-client's check would. */
function fakeProvider(only: boolean): OidcProvider {
  let flows = 0;
  const person = (emailVerified: boolean): OidcClaims => ({ issuer: "https://sso.example.com", subject: "sub-1", email: "ada@example.com", emailVerified, name: "Ada" });
  return {
    settings: { issuer: "https://sso.example.com", clientId: "formsvc", clientSecret: "s", name: "Example <SSO>", only },
    logger,
    seal: (t) => sealTransaction(t, secretKey),
    open: (sealed) => openTransaction(sealed, secretKey),
    async start() {
      const started = transaction({ state: `state-${++flows}` });
      return { url: new URL(`https://sso.example.com/auth?state=${started.state}`), transaction: started };
    },
    async finish(currentUrl, started) {
      if (currentUrl.searchParams.get("state") !== started.state) {
        throw new HttpError(400, 'the answer from Example <SSO> does not match this sign-in (unexpected "state" response parameter value); sign in again');
      }
      return person(currentUrl.searchParams.get("code") === "verified");
    },
  };
}

const sessions = new Map<string, string>();
const ada = create(UserSchema, { id: "u1", email: "ada@example.com", name: "Ada", emailVerified: true });
const transport = createRouterTransport((router) => {
  router.service(IdentityService, {
    signInWithOidc: (req) => {
      if (!req.emailVerified) throw new ConnectError(`the provider has not verified ${req.email}`, Code.FailedPrecondition);
      return { user: ada, created: true };
    },
    createSession: (req) => {
      const token = `token-${sessions.size + 1}`;
      sessions.set(token, req.userId);
      return { token, expiresAt: timestampFromDate(new Date(Date.now() + 86_400_000)) };
    },
    resolveSession: (req) => {
      if (!sessions.has(req.token)) throw new ConnectError("invalid or expired session", Code.Unauthenticated);
      return { user: ada };
    },
  });
});

/** /app/api with `oidc` (none: not configured), on a port; its base URL. */
async function serve(oidc: OidcProvider | undefined): Promise<{ url: string; close(): void }> {
  const app = express();
  const deps = {
    identity: createClient(IdentityService, transport),
    forms: createClient(FormsService, transport),
    rateLimits: { store: new MemorySlidingWindow(), perIp: 1000 },
    publicUrl: "http://127.0.0.1",
    brandingUrl: "http://127.0.0.1/app/signup",
    oidc,
  };
  app.use("/app/api", appDoor(deps, []));
  app.use(errorHandler(logger));
  const server = app.listen(0);
  await new Promise((resolve) => server.once("listening", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/app/api`, close: () => server.close() };
}

const setCookie = (res: Response, name: string) => res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));

describe("/app/api/auth/oidc", () => {
  let api: Awaited<ReturnType<typeof serve>>;
  before(async () => {
    api = await serve(fakeProvider(false));
  });
  after(() => api.close());

  /** Starts a flow: the provider's state and the flow's cookie. */
  async function start() {
    const res = await fetch(`${api.url}/auth/oidc/start`, { redirect: "manual" });
    assert.equal(res.status, 302);
    assert.equal(res.headers.get("cache-control"), "no-store");
    const state = new URL(res.headers.get("location")!).searchParams.get("state")!;
    const cookie = setCookie(res, "formsvc_oidc")!;
    assert.match(cookie, /; HttpOnly/);
    assert.match(cookie, /; SameSite=Lax/);
    assert.match(cookie, /; Expires=/);
    return { state, cookie: cookie.split(";")[0]! };
  }
  const callback = (query: string, cookie?: string, accept = "application/json") =>
    fetch(`${api.url}/auth/oidc/callback?${query}`, { redirect: "manual", headers: { accept, ...(cookie ? { cookie } : {}) } });

  it("sends the browser to the provider and, back with the flow's cookie, signs the person in and deletes the cookie", async () => {
    const { state, cookie } = await start();
    const res = await callback(`code=verified&state=${state}`, cookie);
    assert.deepEqual([res.status, res.headers.get("location")], [302, "/app"]);
    assert.match(setCookie(res, "formsvc_oidc")!, /Max-Age=0/);
    const session = parseCookies(setCookie(res, "formsvc_session")!.split(";")[0])["formsvc_session"]!;
    assert.equal(sessions.get(session), "u1");
    assert.ok(setCookie(res, "formsvc_csrf"), "a new CSRF token with the new session");
  });

  it("refuses a callback without its flow, with a changed flow cookie, or with another state: 400, no session", async () => {
    const { state, cookie } = await start();
    for (const [query, jar] of [
      [`code=verified&state=${state}`, undefined],
      [`code=verified&state=${state}`, `${cookie.slice(0, -3)}abc`],
      [`code=verified&state=${state}x`, cookie],
      [`code=verified&state=${state}`, `${cookie}; ${cookie}`],
    ] as const) {
      const res = await callback(query, jar);
      assert.equal(res.status, 400, `${query} ${jar}`);
      assert.equal(setCookie(res, "formsvc_session"), undefined);
      assert.match((await res.json()).error, /^(this sign-in with Example <SSO> cannot be finished|the answer from Example <SSO> does not match this sign-in \(unexpected "state" response parameter value\))/);
    }
  });

  it("answers a browser with a page: the refusal of an unverified address is a 403 saying why, escaped", async () => {
    const { state, cookie } = await start();
    const res = await callback(`code=unverified&state=${state}`, cookie, "text/html,application/xhtml+xml");
    assert.equal(res.status, 403);
    assert.match(res.headers.get("content-type")!, /^text\/html/);
    const page = await res.text();
    assert.match(page, /<h1>Sign-in failed<\/h1><p>Example &lt;SSO&gt; signed you in, but the provider has not verified ada@example\.com\.<\/p>/);
    assert.match(page, /<a href="\/app\/signin">Back to sign in<\/a>/);
  });

  it("tells the app its name; password sign-in stays while OIDC_ONLY is off", async () => {
    const session = await (await fetch(`${api.url}/session`)).json();
    assert.deepEqual(session.signIn, { oidc: { name: "Example <SSO>" }, passwordSignIn: true });
  });
});

describe("OIDC_ONLY", () => {
  it("refuses the password routes (403) before they run, and says so in /session", async () => {
    const api = await serve(fakeProvider(true));
    try {
      const first = await fetch(`${api.url}/session`);
      assert.deepEqual((await first.json()).signIn, { oidc: { name: "Example <SSO>" }, passwordSignIn: false });
      const csrf = setCookie(first, "formsvc_csrf")!.split(";")[0]!;
      const post = (path: string, body: unknown) =>
        fetch(`${api.url}${path}`, { method: "POST", headers: { "content-type": "application/json", cookie: csrf, "x-csrf-token": csrf.split("=")[1]! }, body: JSON.stringify(body) });
      for (const [path, body] of [
        ["/auth/signin", { email: "ada@example.com", password: "correct horse battery" }],
        ["/auth/signup", { email: "bob@example.com", password: "correct horse battery" }],
        ["/auth/password-reset", { email: "ada@example.com" }],
        ["/auth/password-reset/complete", { token: "t", password: "correct horse battery" }],
        ["/invitations/accept", { token: "t", password: "correct horse battery" }],
      ] as const) {
        const res = await post(path, body);
        assert.deepEqual([res.status, await res.json()], [403, { error: "password sign-in is turned off here: sign in with Example <SSO>" }], path);
      }
    } finally {
      api.close();
    }
  });

  it("without a provider, the flow's routes are a 404 saying what is missing", async () => {
    const api = await serve(undefined);
    try {
      const res = await fetch(`${api.url}/auth/oidc/start`, { redirect: "manual" });
      assert.deepEqual([res.status, await res.json()], [404, { error: "sign-in through OpenID Connect is not configured here (OIDC_ISSUER)" }]);
      assert.deepEqual((await (await fetch(`${api.url}/session`)).json()).signIn, { oidc: null, passwordSignIn: true });
    } finally {
      api.close();
    }
  });
});
