import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate, timestampNow } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import express from "express";
import { callerOf } from "@formsvc/platform/caller.ts";
import { createLogger } from "@formsvc/platform/logger.ts";
import { DeliveryService } from "@formsvc/proto/delivery/v1/delivery_pb.js";
import { FormSchema, FormStatus, FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { IdentityService, Plan, UserSchema, WorkspaceSchema, type User } from "@formsvc/proto/identity/v1/identity_pb.js";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { idempotentRequests } from "../idempotency.ts";
import { createApp } from "../app.ts";
import { fileLinks } from "@formsvc/platform/file-links.ts";
import { errorHandler } from "../http-errors.ts";
import { MemorySlidingWindow } from "../rate-limit/sliding-window.ts";
import { appDoor } from "../routes/app-door.ts";
import { appRoutes } from "../routes/index.ts";
import { parseCookies } from "./cookies.ts";
import { appStaticRoutes } from "./static.ts";

// /app/api over fake services: sessions in cookies, CSRF, the sign-in limit, sign out, the preview,
// and the built app's static files.

interface FakeUser {
  user: User;
  password: string;
}
const users = new Map<string, FakeUser>();
const sessions = new Map<string, string>();
const calls: string[] = [];
let tokenCounter = 0;

const transport = createRouterTransport((router) => {
  router.service(IdentityService, {
    signUp: (req) => {
      // Identity judges passwords; the gateway passes its reason on.
      if (req.password === "12345678") {
        throw new ConnectError("password is too easy to guess: This is one of the ten most used passwords.", Code.InvalidArgument);
      }
      const email = req.email.trim().toLowerCase();
      if (users.has(email)) throw new ConnectError("a user with this email already exists", Code.AlreadyExists);
      const user = create(UserSchema, { id: `u${users.size + 1}`, email, name: req.name || email, createdAt: timestampNow() });
      users.set(email, { user, password: req.password });
      return { user, workspace: create(WorkspaceSchema, { id: `ws-${user.id}`, name: "Personal", plan: Plan.FREE, ownerId: user.id, personal: true }) };
    },
    verifyPassword: (req) => {
      calls.push(`verify:${req.email}`);
      const found = users.get(req.email.trim().toLowerCase());
      if (!found || found.password !== req.password) throw new ConnectError("email or password is wrong", Code.Unauthenticated);
      return { user: found.user };
    },
    createSession: (req) => {
      const token = `token-${++tokenCounter}-${req.userId}`;
      sessions.set(token, req.userId);
      return { token, expiresAt: timestampFromDate(new Date(Date.now() + 86_400_000)) };
    },
    resolveSession: (req) => {
      const userId = sessions.get(req.token);
      const found = [...users.values()].find((u) => u.user.id === userId);
      if (!found) throw new ConnectError("invalid or expired session", Code.Unauthenticated);
      return { user: found.user };
    },
    deleteSession: (req) => {
      sessions.delete(req.token);
      return {};
    },
    setUserLocale: (req, ctx) => {
      const found = [...users.values()].find((u) => u.user.id === callerOf(ctx));
      if (!found) throw new ConnectError("unknown caller", Code.Unauthenticated);
      if (req.locale.includes(" ")) throw new ConnectError("locale must be a BCP 47 language tag, such as de or pt-BR", Code.InvalidArgument);
      found.user.locale = req.locale;
      return { user: found.user };
    },
    deleteUserSessions: (_req, ctx) => {
      const caller = callerOf(ctx);
      if (!caller) throw new ConnectError("unknown caller", Code.Unauthenticated);
      const mine = [...sessions].filter(([, userId]) => userId === caller);
      for (const [token] of mine) sessions.delete(token);
      return { deleted: mine.length };
    },
    listWorkspaces: (_req, ctx) => {
      const caller = callerOf(ctx)!;
      return { workspaces: [create(WorkspaceSchema, { id: `ws-${caller}`, name: "Personal", plan: Plan.FREE, ownerId: caller, personal: true })], hasMore: false };
    },
  });
  router.service(FormsService, {
    getForm: (req, ctx) => {
      if (req.id !== "form1" || !callerOf(ctx)) throw new ConnectError("form not found", Code.NotFound);
      return {
        form: create(FormSchema, {
          id: "form1",
          workspaceId: "ws-u1",
          name: "Draft <form>",
          status: FormStatus.DRAFT,
          version: 1,
          document: { title: "Sign-up", blocks: [{ id: "b1", key: "q_name", type: "SHORT_TEXT", question: "Your name" }] },
          // Both of the form's ways of leaving for the owner's site, which its preview must not take.
          settings: {
            redirectUrl: "https://owner.example/after",
            thankYou: { title: "Thanks", buttonLabel: "Back to the shop", buttonUrl: "https://owner.example/shop", redirectSeconds: 5 },
          },
        }),
      };
    },
  });
});

const logger = createLogger("app-api-test", "silent");
const store = new MemorySlidingWindow();
const app = createApp({
  logger,
  identity: createClient(IdentityService, transport),
  forms: createClient(FormsService, transport),
  submissions: createClient(SubmissionsService, transport),
  webhooks: createClient(WebhooksService, transport),
  delivery: createClient(DeliveryService, transport),
  fileLinks: fileLinks("test-secret", "http://localhost:8080"),
  idempotency: idempotentRequests(createClient(IdentityService, transport), "test-secret"),
  rateLimits: { store, perKey: 100, perIp: 1000 },
  publicUrl: "http://localhost:8080",
  brandingUrl: "http://localhost:8080/app/signup",
  countryHeader: "cf-ipcountry",
  health: {},
  // So that each test can come from its own client address (X-Forwarded-For).
  trustProxy: true,
});
let base = "";
const server = app.listen(0);
before(async () => {
  await new Promise((r) => server.once("listening", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  server.close();
  await store.close();
});

let addressCounter = 0;
const newAddress = () => `203.0.113.${++addressCounter}`;

/** A browser: a cookie jar and a client address. */
function browser(address = newAddress()) {
  const jar = new Map<string, string>();
  const setCookies: string[] = [];
  const call = async (method: string, path: string, init: { body?: unknown; headers?: Record<string, string>; csrf?: boolean } = {}) => {
    const headers: Record<string, string> = { "x-forwarded-for": address, ...init.headers };
    if (jar.size) headers.cookie = [...jar].map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("; ");
    if (init.body !== undefined) headers["content-type"] ??= "application/json";
    if (init.csrf !== false && method !== "GET" && jar.has("formsvc_csrf")) headers["x-csrf-token"] ??= jar.get("formsvc_csrf")!;
    const res = await fetch(base + path, {
      method,
      headers,
      body: init.body === undefined ? undefined : typeof init.body === "string" ? init.body : JSON.stringify(init.body),
    });
    for (const cookie of res.headers.getSetCookie()) {
      setCookies.push(cookie);
      const [pair] = cookie.split(";");
      const [name, value] = [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)];
      if (/Max-Age=0/i.test(cookie)) jar.delete(name);
      else jar.set(name, decodeURIComponent(value));
    }
    const text = await res.text();
    let body: any = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // HTML or CSV
    }
    return { status: res.status, headers: res.headers, body };
  };
  return { call, jar, setCookies };
}

let emailCounter = 0;
const uniqueEmail = () => `person${++emailCounter}@example.com`;

async function signedUp(b = browser()) {
  await b.call("GET", "/app/api/session");
  const email = uniqueEmail();
  const res = await b.call("POST", "/app/api/auth/signup", { body: { email, name: "Ada", password: "long enough" } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return { b, email, user: res.body.user };
}

describe("/app/api sessions and CSRF", () => {
  it("GET /session without a session answers user null and sets a readable CSRF cookie", async () => {
    const b = browser();
    const res = await b.call("GET", "/app/api/session");
    assert.equal(res.status, 200);
    assert.equal(res.body.user, null);
    assert.match(res.body.csrfToken, /^[A-Za-z0-9_-]{32}$/);
    const cookie = b.setCookies.find((c) => c.startsWith("formsvc_csrf="))!;
    assert.ok(cookie, "a CSRF cookie is set");
    assert.match(cookie, /; Path=\//);
    assert.match(cookie, /; SameSite=Lax/);
    assert.doesNotMatch(cookie, /HttpOnly/, "the page reads it to send it back");
    assert.equal(b.jar.get("formsvc_csrf"), res.body.csrfToken);
    assert.equal(res.headers.get("cache-control"), "no-store");

    // Kept on later requests.
    const again = await b.call("GET", "/app/api/session");
    assert.equal(again.body.csrfToken, res.body.csrfToken);
  });

  it("refuses (403) a change without the CSRF header, with a wrong one, or from another origin", async () => {
    const b = browser();
    await b.call("GET", "/app/api/session");
    const body = { email: uniqueEmail(), password: "long enough" };
    const missing = await b.call("POST", "/app/api/auth/signup", { body, csrf: false });
    assert.equal(missing.status, 403);
    assert.match(missing.body.error, /CSRF token/);
    const wrong = await b.call("POST", "/app/api/auth/signup", { body, headers: { "x-csrf-token": "not-the-cookie-value" } });
    assert.equal(wrong.status, 403);
    const foreign = await b.call("POST", "/app/api/auth/signup", { body, headers: { origin: "https://evil.example" } });
    assert.equal(foreign.status, 403);
    assert.match(foreign.body.error, /another site/);
    // Without any cookie at all (a cross-site form post): refused too.
    const bare = await fetch(`${base}/app/api/auth/signin`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    assert.equal(bare.status, 403);
    assert.ok(![...users.keys()].includes(body.email), "nobody was signed up");

    // Its own origin and the public URL's are fine.
    const own = await b.call("POST", "/app/api/auth/signup", { body, headers: { origin: "http://localhost:8080" } });
    assert.equal(own.status, 201, JSON.stringify(own.body));
  });

  it("sign up sets an HttpOnly SameSite=Lax session cookie and a new CSRF token; the session then works", async () => {
    const b = browser();
    const first = await b.call("GET", "/app/api/session");
    const { status, body } = await b.call("POST", "/app/api/auth/signup", { body: { email: uniqueEmail(), name: "Ada", password: "long enough" } });
    assert.equal(status, 201);
    assert.equal(body.user.name, "Ada");
    const session = b.setCookies.find((c) => c.startsWith("formsvc_session="))!;
    assert.match(session, /; Path=\//);
    assert.match(session, /; SameSite=Lax/);
    assert.match(session, /; HttpOnly/);
    assert.match(session, /; Expires=/);
    assert.doesNotMatch(session, /Secure/, "PUBLIC_URL is http here");
    assert.notEqual(body.csrfToken, first.body.csrfToken, "a new CSRF token comes with the session");
    assert.equal(b.jar.get("formsvc_csrf"), body.csrfToken);

    const me = await b.call("GET", "/app/api/session");
    assert.equal(me.body.user.id, body.user.id);
    const workspaces = await b.call("GET", "/app/api/workspaces");
    assert.equal(workspaces.status, 200);
    assert.equal(workspaces.body.items[0].owned, true);

    const taken = await b.call("POST", "/app/api/auth/signup", { body: { email: body.user.email, password: "long enough" } });
    assert.equal(taken.status, 409);
  });

  it("answers 401 without a session, and 404 as JSON for unknown paths with one", async () => {
    const b = browser();
    await b.call("GET", "/app/api/session");
    const res = await b.call("GET", "/app/api/workspaces");
    assert.equal(res.status, 401);
    assert.match(res.body.error, /sign in/);
    const forged = browser();
    forged.jar.set("formsvc_session", "token-made-up");
    const refused = await forged.call("GET", "/app/api/forms");
    assert.equal(refused.status, 401);
    assert.ok(forged.setCookies.some((c) => c.startsWith("formsvc_session=;") && /Max-Age=0/.test(c)), "a dead session cookie is cleared");

    const { b: signed } = await signedUp();
    const unknown = await signed.call("GET", "/app/api/nothing-here");
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.body, { error: "not found" });
    const notJson = await signed.call("POST", "/app/api/workspaces", { body: "name=x", headers: { "content-type": "application/x-www-form-urlencoded" } });
    assert.equal(notJson.status, 415);
    const invalid = await signed.call("POST", "/app/api/workspaces", { body: { name: "" } });
    assert.equal(invalid.status, 400);
    assert.match(invalid.body.error, /^body\.name: /);
  });

  it("sign in: one message for a wrong password and an unknown email; the right one starts a session", async () => {
    const { email } = await signedUp();
    const b = browser();
    await b.call("GET", "/app/api/session");
    const wrong = await b.call("POST", "/app/api/auth/signin", { body: { email, password: "wrong password" } });
    const unknown = await b.call("POST", "/app/api/auth/signin", { body: { email: uniqueEmail(), password: "long enough" } });
    assert.deepEqual([wrong.status, wrong.body], [401, { error: "email or password is wrong" }]);
    assert.deepEqual([unknown.status, unknown.body], [401, { error: "email or password is wrong" }]);
    assert.ok(!b.jar.has("formsvc_session"));
    const ok = await b.call("POST", "/app/api/auth/signin", { body: { email: email.toUpperCase(), password: "long enough" } });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.user.email, email);
    assert.ok(b.jar.has("formsvc_session"));
  });

  it("limits sign-in attempts per address and email, so a guesser never locks the owner out; and per address", async () => {
    const { email } = await signedUp();
    const guesser = browser();
    await guesser.call("GET", "/app/api/session");
    for (let i = 0; i < 10; i++) {
      const res = await guesser.call("POST", "/app/api/auth/signin", { body: { email, password: `guess ${i}` } });
      assert.equal(res.status, 401);
    }
    const limited = await guesser.call("POST", "/app/api/auth/signin", { body: { email: email.toUpperCase(), password: "long enough" } });
    assert.equal(limited.status, 429, "even the right password waits, from the guesser's address");
    assert.match(limited.body.error, /too many attempts/);
    assert.ok(Number(limited.headers.get("retry-after")) >= 1);
    const verifies = calls.filter((c) => c === `verify:${email}`).length;
    assert.equal(verifies, 10, "a limited attempt never reaches identity");

    const owner = browser();
    await owner.call("GET", "/app/api/session");
    const ok = await owner.call("POST", "/app/api/auth/signin", { body: { email, password: "long enough" } });
    assert.equal(ok.status, 200, "the owner, at their own address, is not locked out");

    const one = browser();
    await one.call("GET", "/app/api/session");
    for (let i = 0; i < 30; i++) {
      const res = await one.call("POST", "/app/api/auth/signin", { body: { email: uniqueEmail(), password: "whatever it is" } });
      assert.equal(res.status, 401);
    }
    const fromAddress = await one.call("POST", "/app/api/auth/signin", { body: { email: uniqueEmail(), password: "whatever it is" } });
    assert.equal(fromAddress.status, 429, "30 a minute from one address, whatever the emails");
  });

  it("sign up answers 400 with identity's reason for a weak password, and starts no session", async () => {
    const b = browser();
    await b.call("GET", "/app/api/session");
    const weak = await b.call("POST", "/app/api/auth/signup", { body: { email: uniqueEmail(), password: "12345678" } });
    assert.deepEqual([weak.status, weak.body], [400, { error: "password is too easy to guess: This is one of the ten most used passwords." }]);
    assert.ok(!b.jar.has("formsvc_session"));
  });

  it("sign out ends the session at once and clears the cookie", async () => {
    const { b } = await signedUp();
    const token = b.jar.get("formsvc_session")!;
    const out = await b.call("POST", "/app/api/auth/signout", { body: {} });
    assert.equal(out.status, 204);
    assert.ok(b.setCookies.some((c) => c.startsWith("formsvc_session=;") && /Max-Age=0/.test(c) && /HttpOnly/.test(c)));
    assert.ok(!b.jar.has("formsvc_session"));
    assert.equal(sessions.has(token), false, "identity deleted the session");
    const replay = browser();
    replay.jar.set("formsvc_session", token);
    assert.equal((await replay.call("GET", "/app/api/workspaces")).status, 401, "the old token no longer works");
    const me = await b.call("GET", "/app/api/session");
    assert.equal(me.body.user, null);
  });

  it("refuses (401) a request carrying the session or CSRF cookie twice, clearing both on every path a copy may be on", async () => {
    const victim = await signedUp();
    const attacker = await signedUp();
    const victimToken = victim.b.jar.get("formsvc_session")!;
    const attackerToken = attacker.b.jar.get("formsvc_session")!;
    const csrf = victim.b.jar.get("formsvc_csrf")!;
    // As a browser sends them: the tossed cookie (longer path) first, then the victim's own.
    const send = (path: string, cookie: string, method = "GET") =>
      fetch(base + path, { method, headers: { cookie, "x-forwarded-for": "203.0.113.250", ...(method === "GET" ? {} : { "content-type": "application/json", "x-csrf-token": csrf }) }, body: method === "GET" ? undefined : "{}" });
    const expectedPaths = ["/", "/app", "/app/", "/app/api", "/app/api/", "/app/api/workspaces", "/app/api/workspaces/"];

    const tossed = await send("/app/api/workspaces", `formsvc_session=${attackerToken}; formsvc_session=${victimToken}; formsvc_csrf=${csrf}`);
    assert.equal(tossed.status, 401);
    assert.match((await tossed.json()).error, /two session or CSRF cookies/);
    const cleared = tossed.headers.getSetCookie();
    const clearedPaths = (name: string) => cleared.filter((c) => c.startsWith(`${name}=;`) && /Max-Age=0/.test(c)).map((c) => /Path=([^;]+)/.exec(c)![1]);
    assert.deepEqual(clearedPaths("formsvc_session"), expectedPaths);
    assert.deepEqual(clearedPaths("formsvc_csrf"), expectedPaths.slice(1), "the CSRF cookie on / is replaced instead");
    const freshCsrf = cleared.filter((c) => /^formsvc_csrf=[A-Za-z0-9_-]{32}; Path=\/;/.test(c));
    assert.equal(freshCsrf.length, 1, "a new CSRF token, so the sign-in form works");
    assert.notEqual(parseCookies(freshCsrf[0].split(";")[0])["formsvc_csrf"], csrf);
    assert.equal(tossed.headers.get("cache-control"), "no-store");

    for (const [path, cookie, method] of [
      ["/app/api/session", `formsvc_session=${victimToken}; formsvc_session=${attackerToken}`, "GET"],
      ["/app/api/session", `formsvc_session=${attackerToken}; formsvc_session=${attackerToken}`, "GET"],
      ["/app/api/forms/form1", `formsvc_session=${victimToken}; formsvc_csrf=${csrf}; formsvc_csrf=attacker-known-token`, "GET"],
      ["/app/api/auth/signout", `formsvc_session=${attackerToken}; formsvc_session=${victimToken}; formsvc_csrf=${csrf}`, "POST"],
    ]) {
      assert.equal((await send(path, cookie, method)).status, 401, `${method} ${path} with ${cookie.replaceAll(/=[^;]+/g, "")}`);
    }
    assert.ok(sessions.has(victimToken) && sessions.has(attackerToken), "a refused sign-out signed nobody out");

    // One of each is served as ever, as the victim.
    const normal = await send("/app/api/session", `formsvc_session=${victimToken}; formsvc_csrf=${csrf}; other=1; other=2`);
    assert.equal(normal.status, 200);
    assert.equal((await normal.json()).user.id, victim.user.id);
  });

  it("signs out everywhere: every session of the person ends, other people's do not", async () => {
    const { b, email } = await signedUp();
    const elsewhere = browser();
    await elsewhere.call("GET", "/app/api/session");
    assert.equal((await elsewhere.call("POST", "/app/api/auth/signin", { body: { email, password: "long enough" } })).status, 200);
    const other = await signedUp();
    assert.equal((await elsewhere.call("GET", "/app/api/workspaces")).status, 200);

    const out = await b.call("POST", "/app/api/session/sign-out-all", { body: {} });
    assert.deepEqual([out.status, out.body], [200, { signedOutSessions: 2 }]);
    assert.ok(!b.jar.has("formsvc_session"), "this browser's cookie is cleared");
    assert.equal((await elsewhere.call("GET", "/app/api/workspaces")).status, 401, "the other browser is signed out too");
    assert.equal((await other.b.call("GET", "/app/api/workspaces")).status, 200, "someone else is not");
    assert.equal((await b.call("POST", "/app/api/session/sign-out-all", { body: {} })).status, 401, "it needs a session");
    const noCsrf = await other.b.call("POST", "/app/api/session/sign-out-all", { body: {}, csrf: false });
    assert.equal(noCsrf.status, 403, "and the CSRF header");
  });

  it("keeps the person's app language: PUT /session/locale, read back by /session; a bad tag is a 400", async () => {
    const { b, user } = await signedUp();
    assert.equal(user.locale, null, "none chosen at sign-up");
    const set = await b.call("PUT", "/app/api/session/locale", { body: { locale: "de" } });
    assert.deepEqual([set.status, set.body.user.locale], [200, "de"]);
    assert.equal((await b.call("GET", "/app/api/session")).body.user.locale, "de");
    const bad = await b.call("PUT", "/app/api/session/locale", { body: { locale: "not a tag" } });
    assert.equal(bad.status, 400);
    assert.match(JSON.stringify(bad.body), /BCP 47/);
    assert.equal((await b.call("PUT", "/app/api/session/locale", { body: { locale: 7 } })).status, 400, "a tag is a string");
    assert.equal((await b.call("PUT", "/app/api/session/locale", { body: { locale: null } })).body.user.locale, null, "null clears it");
    const signedOut = browser();
    await signedOut.call("GET", "/app/api/session");
    assert.equal((await signedOut.call("PUT", "/app/api/session/locale", { body: { locale: "de" } })).status, 401, "it needs a session");
  });

  it("names cookies __Host- and marks them Secure when PUBLIC_URL is https, and reads only those names", async () => {
    const secureApp = express();
    const deps = {
      identity: createClient(IdentityService, transport),
      forms: createClient(FormsService, transport),
      submissions: createClient(SubmissionsService, transport),
      webhooks: createClient(WebhooksService, transport),
      delivery: createClient(DeliveryService, transport),
      fileLinks: fileLinks("x", "https://forms.example.com"),
      rateLimits: { store, perIp: 1000 },
      publicUrl: "https://forms.example.com",
      brandingUrl: "https://forms.example.com/app/signup",
    };
    secureApp.use("/app/api", appDoor(deps, appRoutes(deps)));
    secureApp.use(errorHandler(logger));
    const s = secureApp.listen(0);
    await new Promise((r) => s.once("listening", r));
    try {
      const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
      const first = await fetch(`${url}/app/api/session`);
      const csrf = first.headers.getSetCookie().find((c) => c.startsWith("__Host-formsvc_csrf="))!;
      assert.match(csrf, /; Path=\/; /);
      assert.match(csrf, /; Secure/);
      assert.doesNotMatch(csrf, /Domain=/i);
      const token = parseCookies(csrf.split(";")[0])["__Host-formsvc_csrf"]!;
      const post = (path: string, cookie: string, body: unknown = {}) =>
        fetch(`${url}/app/api${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", cookie, "x-csrf-token": token, origin: "https://forms.example.com" },
          body: JSON.stringify(body),
        });
      assert.equal((await post("/auth/signup", `formsvc_csrf=${token}`, { email: uniqueEmail(), password: "long enough" })).status, 403, "plain names are not read on https");
      const res = await post("/auth/signup", `__Host-formsvc_csrf=${token}`, { email: uniqueEmail(), password: "long enough" });
      assert.equal(res.status, 201);
      const session = res.headers.getSetCookie().find((c) => c.startsWith("__Host-formsvc_session="))!;
      assert.match(session, /; Path=\/; Expires=[^;]+; HttpOnly; Secure; SameSite=Lax$/);
      const sessionToken = parseCookies(session.split(";")[0])["__Host-formsvc_session"]!;
      const newCsrf = parseCookies(res.headers.getSetCookie().find((c) => c.startsWith("__Host-formsvc_csrf="))!.split(";")[0])["__Host-formsvc_csrf"]!;
      const me = await fetch(`${url}/app/api/session`, { headers: { cookie: `__Host-formsvc_session=${sessionToken}; __Host-formsvc_csrf=${newCsrf}` } });
      assert.notEqual((await me.json()).user, null, "the __Host- session is read");
      const twice = await fetch(`${url}/app/api/session`, { headers: { cookie: `__Host-formsvc_session=x; __Host-formsvc_session=${sessionToken}` } });
      assert.equal(twice.status, 401);
      const set = twice.headers.getSetCookie();
      assert.deepEqual(set.map((c) => c.replace(/; Expires=[^;]+/, "").replace(/=[A-Za-z0-9_-]{32};/, "=<new>;")), [
        "__Host-formsvc_session=; Max-Age=0; Path=/; HttpOnly; Secure; SameSite=Lax",
        "__Host-formsvc_csrf=<new>; Path=/; Secure; SameSite=Lax",
      ], "a __Host- cookie lives on / only");
    } finally {
      s.close();
    }
  });
});

describe("/app/api preview", () => {
  it("renders a draft as the hosted page for a member, framed by the app only; its posts keep nothing", async () => {
    const { b } = await signedUp();
    const page = await b.call("GET", "/app/api/forms/form1/preview");
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-type")!, /text\/html/);
    assert.match(page.body, /Your name/);
    assert.match(page.body, /Sign-up/);
    assert.match(page.body, /&quot;|"responsesUrl":"\/app\/api\/preview\/preview-form1\/responses"/);
    assert.match(page.headers.get("content-security-policy")!, /frame-ancestors 'self'/);
    assert.equal(page.headers.get("x-frame-options"), "SAMEORIGIN");
    assert.equal(page.headers.get("cache-control"), "no-store");
    // No redirect away from the app, at once or from the thank-you screen (its button stays, with no timed note).
    const config = JSON.parse(/id="hf-config">(.*?)<\/script>/s.exec(page.body)![1]);
    assert.deepEqual([config.redirectUrl, config.thanksRedirect], [null, null]);
    assert.match(page.body, /href="https:\/\/owner\.example\/shop"/);
    assert.doesNotMatch(page.body, /hf-thanks-redirect|You will be taken to/);
    assert.equal((await b.call("GET", "/app/api/forms/nope/preview")).status, 404);
    assert.equal((await browser().call("GET", "/app/api/forms/form1/preview")).status, 401);

    const sink = await fetch(`${base}/app/api/preview/preview-form1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ answers: { q_name: "x" }, completed: true }),
    });
    assert.deepEqual(await sink.json(), { responseId: "preview", completed: true });
    // The page's insights beacons count nothing in a preview.
    const beacon = await fetch(`${base}/app/api/preview/preview-form1/insights`, { method: "POST", headers: { "content-type": "text/plain" }, body: '{"event":"start"}' });
    assert.equal(beacon.status, 204);
  });

  it("renders the editor's unsaved document the same way, and names what a save would refuse", async () => {
    const { b } = await signedUp();
    const document = {
      title: "Unsaved title",
      blocks: [
        { type: "HEADING", text: "About you" },
        { type: "EMAIL", question: "Where do we write?", key: "q_email", required: true },
      ],
    };
    const page = await b.call("POST", "/app/api/forms/form1/preview", { body: { name: "Renamed", document } });
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-type")!, /text\/html/);
    assert.match(page.body, /Unsaved title/);
    assert.match(page.body, /Where do we write\?/);
    assert.doesNotMatch(page.body, /Your name/, "the stored document is not shown");
    assert.match(page.body, /\/app\/api\/preview\/preview-form1\/responses/);
    assert.equal(page.headers.get("cache-control"), "no-store");

    const empty = await b.call("POST", "/app/api/forms/form1/preview", { body: { document: { blocks: [{ type: "SHORT_TEXT", question: "" }] } } });
    assert.equal(empty.status, 400);
    assert.match(empty.body.error, /^document\.blocks\[0\]\.question: /);
    const twice = await b.call("POST", "/app/api/forms/form1/preview", {
      body: { document: { blocks: [{ id: "b1", type: "PAGE_BREAK" }, { id: "b1", type: "PAGE_BREAK" }] } },
    });
    assert.equal(twice.status, 400);
    assert.match(twice.body.error, /duplicate block id "b1"/);
    assert.equal((await b.call("POST", "/app/api/forms/form1/preview", { body: { document, extra: 1 } })).status, 400);
    assert.equal((await b.call("POST", "/app/api/forms/nope/preview", { body: { document } })).status, 404);
    assert.equal((await b.call("POST", "/app/api/forms/form1/preview", { body: { document }, csrf: false })).status, 403);
    assert.equal((await browser().call("POST", "/app/api/forms/form1/preview", { body: { document } })).status, 403);
  });
});

describe("/app: the built app", () => {
  let dist = "";
  let url = "";
  let s: ReturnType<express.Express["listen"]>;
  before(async () => {
    dist = mkdtempSync(join(tmpdir(), "formsvc-app-dist-"));
    mkdirSync(join(dist, "assets"));
    writeFileSync(join(dist, "index.html"), `<!doctype html><title>App</title><script type="module" src="/app/assets/index-abc123.js"></script>`);
    writeFileSync(join(dist, "assets/index-abc123.js"), "console.log('app')");
    const web = express();
    web.use("/app", appStaticRoutes(dist));
    web.use("/missing", appStaticRoutes(join(dist, "nothing")));
    s = web.listen(0);
    await new Promise((r) => s.once("listening", r));
    url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  });
  after(() => {
    s.close();
    rmSync(dist, { recursive: true, force: true });
  });

  it("serves index.html, never cached, for /app and every path under it", async () => {
    for (const path of ["/app", "/app/", "/app/forms", "/app/forms/abc/edit", "/app/settings/api-keys"]) {
      const res = await fetch(url + path);
      assert.equal(res.status, 200, path);
      assert.match(res.headers.get("content-type")!, /text\/html/);
      assert.equal(res.headers.get("cache-control"), "no-cache", path);
      assert.match(res.headers.get("content-security-policy")!, /script-src 'self'/);
      assert.match(await res.text(), /index-abc123\.js/);
    }
  });

  it("serves hashed assets as immutable, and a missing asset as a plain 404", async () => {
    const res = await fetch(`${url}/app/assets/index-abc123.js`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("cache-control")!, /max-age=31536000.*immutable/);
    assert.match(res.headers.get("content-type")!, /javascript/);
    const missing = await fetch(`${url}/app/assets/index-gone.js`);
    assert.equal(missing.status, 404);
    assert.equal(await missing.text(), "not found");
  });

  it("says how to build the app when it is not built", async () => {
    const res = await fetch(`${url}/missing/forms`);
    assert.equal(res.status, 503);
    assert.match(await res.text(), /npm run build -w app/);
  });
});
