import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { callerOf } from "@formsvc/platform/caller.ts";
import { createLogger } from "@formsvc/platform/logger.ts";
import { IdentityService, UserSchema } from "@formsvc/proto/identity/v1/identity_pb.js";
import { FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { DeliveryService } from "@formsvc/proto/delivery/v1/delivery_pb.js";
import { fileLinks } from "@formsvc/platform/file-links.ts";
import { version } from "@formsvc/platform/version.ts";
import { idempotentRequests } from "./idempotency.ts";
import { createApp } from "./app.ts";
import { MemorySlidingWindow } from "./rate-limit/sliding-window.ts";

// The gateway over an in-memory transport: fake services, the real Express app and HTTP.
// Keys starting fk-good are valid; each test uses its own, so per-key limits stay apart.
const keyFor = (name: string) => `fk-good-${name}`.padEnd(46, "x");
const user = create(UserSchema, { id: "u1", email: "ada@example.com", name: "Ada", createdAt: timestampNow() });

const transport = createRouterTransport((router) => {
  router.service(IdentityService, {
    authenticateApiKeys: (req) => ({ results: req.keys.map((key) => (key.startsWith("fk-good") ? { user, apiKeyId: key } : {})) }),
    getCurrentUser: (_req, ctx) => {
      assert.equal(callerOf(ctx), "u1");
      return { user };
    },
    listWorkspaces: () => ({ workspaces: [], hasMore: false }),
    getWorkspace: () => {
      throw new ConnectError("workspace not found", Code.NotFound);
    },
  });
  router.service(FormsService, {
    getForm: (req) => {
      if (req.id === "boom") throw new Error("database password is hunter2");
      throw new ConnectError("form not found", Code.NotFound);
    },
  });
});

const store = new MemorySlidingWindow();
const app = createApp({
  logger: createLogger("gateway-test", "silent"),
  identity: createClient(IdentityService, transport),
  forms: createClient(FormsService, transport),
  submissions: createClient(SubmissionsService, transport),
  webhooks: createClient(WebhooksService, transport),
  delivery: createClient(DeliveryService, transport),
  fileLinks: fileLinks("test-secret", "http://localhost:8080"),
  idempotency: idempotentRequests(createClient(IdentityService, transport), "test-secret"),
  rateLimits: { store, perKey: 5, perIp: 1000 },
  publicUrl: "http://localhost:8080",
  brandingUrl: "http://localhost:8080/app/signup",
  countryHeader: "cf-ipcountry",
  health: {},
  trustProxy: false,
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

const authFor = (name: string) => ({ authorization: `Bearer ${keyFor(name)}` });

async function call(method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}) {
  const res = await fetch(base + path, { method, headers: init.headers, body: init.body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

describe("gateway over an in-memory transport", () => {
  it("answers unknown paths under /api/v1 with a JSON 404 in every method, key or not", async () => {
    const auth = authFor("t1");
    for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"]) {
      for (const headers of [{}, auth]) {
        const res = await call(method, "/api/v1/nothing/here", { headers });
        assert.equal(res.status, 404, `${method}`);
        assert.match(res.headers.get("content-type") ?? "", /application\/json/);
        assert.deepEqual(res.body, { error: "not found" });
      }
    }
    assert.equal((await call("PUT", "/api/v1/forms/x", { headers: auth })).status, 404);
  });

  it("matches paths case-sensitively, and refuses a __proto__ key naming where it was", async () => {
    const auth = authFor("t8");
    assert.equal((await call("GET", "/api/v1/users/me", { headers: auth })).status, 200);
    for (const path of ["/api/v1/USERS/me", "/api/v1/Users/Me"]) assert.deepEqual((await call("GET", path, { headers: auth })).body, { error: "not found" }, path);
    for (const path of ["/API/v1/users/me", "/Healthz"]) assert.equal((await fetch(base + path)).status, 404, path);
    const json = { ...auth, "content-type": "application/json" };
    const proto = await call("POST", "/api/v1/forms", { headers: json, body: '{"workspaceId": "w1", "name": "x", "__proto__": {"name": "y"}}' });
    assert.deepEqual([proto.status, proto.body], [400, { error: 'body: key "__proto__" is not allowed' }]);
  });

  it("refuses missing, malformed and unknown keys with 401", async () => {
    const auth = authFor("t2");
    assert.equal((await call("GET", "/api/v1/users/me")).status, 401);
    assert.match((await call("GET", "/api/v1/users/me", { headers: { authorization: "Basic abc" } })).body.error, /malformed/);
    const unknown = await call("GET", "/api/v1/users/me", { headers: { authorization: `Bearer fk-${"b".repeat(43)}` } });
    assert.deepEqual([unknown.status, unknown.body], [401, { error: "invalid API key" }]);
    const ok = await call("GET", "/api/v1/users/me", { headers: auth });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.email, "ada@example.com");
  });

  it("names the invalid field, refuses bad JSON and non-JSON bodies", async () => {
    const auth = authFor("t3");
    const json = { ...auth, "content-type": "application/json" };
    const bad = await call("POST", "/api/v1/forms", { headers: json, body: "{not json" });
    assert.deepEqual([bad.status, bad.body], [400, { error: "request body is not valid JSON" }]);
    const missing = await call("POST", "/api/v1/forms", { headers: json, body: "{}" });
    assert.equal(missing.status, 400);
    assert.match(missing.body.error, /workspaceId/);
    const text = await call("POST", "/api/v1/forms", { headers: { ...auth, "content-type": "text/plain" }, body: "hi" });
    assert.equal(text.status, 415);
    const page = await call("GET", "/api/v1/workspaces?page=0", { headers: auth });
    assert.equal(page.status, 400);
    assert.match(page.body.error, /page/);
    assert.equal((await call("GET", "/api/v1/workspaces?limit=501", { headers: auth })).status, 400);
  });

  it("refuses since/until outside years 0001 to 9999 in UTC with a 400 naming the parameter", async () => {
    const auth = authFor("t9");
    const early = await call("GET", "/api/v1/forms/f1/submissions?since=0000-01-01T00:00:00Z", { headers: auth });
    assert.equal(early.status, 400);
    assert.match(early.body.error, /since.*0001-01-01/);
    const late = await call("GET", `/api/v1/forms/f1/submissions?until=${encodeURIComponent("9999-12-31T23:59:59-14:00")}`, { headers: auth });
    assert.equal(late.status, 400);
    assert.match(late.body.error, /until/);
    const json = { ...auth, "content-type": "application/json" };
    const recover = await call("POST", "/api/v1/webhooks/w1/recover", { headers: json, body: JSON.stringify({ since: "0000-01-01T00:00:00Z" }) });
    assert.equal(recover.status, 400);
    assert.match(recover.body.error, /since/);
  });

  it("maps NOT_FOUND to 404 and hides internal failures behind a bare 500", async () => {
    const auth = authFor("t4");
    assert.deepEqual(await call("GET", "/api/v1/forms/zzz", { headers: auth }).then((r) => [r.status, r.body]), [
      404,
      { error: "form not found" },
    ]);
    const boom = await call("GET", "/api/v1/forms/boom", { headers: auth });
    assert.equal(boom.status, 500);
    assert.doesNotMatch(JSON.stringify(boom.body), /hunter2/);
  });

  it("documents every served route in /developers/openapi.json", async () => {
    const auth = authFor("t5");
    const doc = (await call("GET", "/developers/openapi.json")).body;
    assert.equal(doc.openapi, "3.1.0");
    const served: string[] = [];
    for (const layer of app.locals.apiRouter.stack) {
      if (!layer.route) continue;
      for (const method of Object.keys(layer.route.methods)) served.push(`${method} ${layer.route.path.replace(/:(\w+)/g, "{$1}")}`);
    }
    assert.ok(served.length >= 9);
    for (const route of served) {
      const [method, path] = route.split(" ");
      assert.ok(doc.paths[path]?.[method], `${route} is served but not documented`);
    }
    assert.ok(doc.webhooks.FORM_RESPONSE.post.requestBody);
    const page = await fetch(`${base}/developers`);
    const script = /<script src="(\/developers\/scalar\/[^"]+\/standalone\.js)"/.exec(await page.text())?.[1];
    assert.ok(script, "the page loads Scalar's script");
    const bundle = await fetch(base + script);
    assert.equal(bundle.status, 200);
    await bundle.arrayBuffer();
  });

  it("limits each key with 429, Retry-After and RateLimit headers", async () => {
    const auth = authFor("t6");
    let last;
    for (let i = 0; i < 6; i++) last = await call("GET", "/api/v1/workspaces", { headers: auth });
    assert.equal(last!.status, 429);
    const retryAfter = Number(last!.headers.get("retry-after"));
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60);
    assert.equal(last!.headers.get("ratelimit-remaining"), "0");
    assert.equal(last!.headers.get("ratelimit-limit"), "5");
  });

  it("answers /healthz, /readyz and /metrics", async () => {
    assert.deepEqual((await call("GET", "/healthz")).body, { status: "ok" });
    const readyz = await call("GET", "/readyz");
    assert.equal(readyz.status, 200);
    assert.equal(readyz.body.version, version, "/readyz names the release: the root package.json's version");
    const text = await (await fetch(`${base}/metrics`)).text();
    assert.match(text, /http_request_duration_seconds_count\{[^}]*route="\/api\/v1\/users\/me"[^}]*code="200"/);
  });
});
