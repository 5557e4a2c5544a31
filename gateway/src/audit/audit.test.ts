import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { auditActionNames } from "@formsvc/api-records/schemas";
import { callerOf } from "@formsvc/platform/caller.ts";
import { fileLinks } from "@formsvc/platform/file-links.ts";
import { createLogger } from "@formsvc/platform/logger.ts";
import { eventually } from "@formsvc/platform/testing/eventually.ts";
import { DeliveryService } from "@formsvc/proto/delivery/v1/delivery_pb.js";
import { FormSchema, FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { IdentityService, UserSchema, type AuditEvent } from "@formsvc/proto/identity/v1/identity_pb.js";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { createApp } from "../app.ts";
import type { ResourceDeps } from "../deps.ts";
import { idempotentRequests } from "../idempotency.ts";
import { MemorySlidingWindow } from "../rate-limit/sliding-window.ts";
import { apiRoutes, appRoutes } from "../routes/index.ts";
import { auditedRoutes, select, sessionActions, twoFactorActions } from "./actions.ts";
import { changesOf } from "./changes.ts";
import { auditRequest, AuditTrail, type CapturedEvent } from "./trail.ts";

/** A logger whose lines a test reads. */
function capturedLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger(
    "audit-test",
    "info",
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    }),
  );
  return { logger, lines };
}

const captured = (init: Partial<CapturedEvent> = {}): CapturedEvent => ({
  actor: { type: "user", userId: "u1" },
  address: "198.51.100.7",
  requestId: "r1",
  action: "form.update",
  targetType: "form",
  targetId: "f1",
  changes: [],
  scope: { workspaceId: "w1" },
  ...init,
});

describe("the route→action table", () => {
  const noDeps = {} as ResourceDeps;
  const served = [...apiRoutes(noDeps), ...appRoutes(noDeps)];

  it("names every route that changes something, at either door, and only routes that exist", () => {
    const changing = new Set(served.filter((route) => route.method !== "get").map((route) => route.key));
    const unaudited = [...changing].filter((key) => !auditedRoutes[key]);
    assert.deepEqual(unaudited, [], "a route that changes something records an audit event");
    const keys = new Set(served.map((route) => route.key));
    assert.deepEqual(Object.keys(auditedRoutes).filter((key) => !keys.has(key)), []);
  });

  it("uses exactly the actions the log lists (auditActionNames), with the sign-ins", () => {
    const used = new Set([...Object.values(auditedRoutes).map((a) => a.action), ...Object.values(sessionActions), ...Object.values(twoFactorActions)]);
    assert.deepEqual([...used].sort(), [...auditActionNames].sort());
  });

  it("records the exports of responses, which are GETs", () => {
    assert.deepEqual(
      served.filter((route) => route.method === "get" && auditedRoutes[route.key]).map((route) => route.key).sort(),
      ["get /forms/:id/submissions.csv", "get /forms/:id/submissions.xlsx"],
    );
  });

  it("selects values from the request and the answer by path", () => {
    const sources = { params: { id: "f1" }, answer: { workspace: { id: "w1" } }, userId: "u1" };
    assert.equal(select("params.id", sources), "f1");
    assert.equal(select("answer.workspace.id", sources), "w1");
    assert.equal(select("userId", sources), "u1");
    assert.equal(select("answer.missing.id", sources), undefined);
  });
});

describe("masking: the changes of a request", () => {
  it("names every field set, with values only for harmless ones; a URL by its host", () => {
    const webhook = {
      formId: "f1",
      url: "https://hooks.example.com/in/T0KEN-in-path?token=q",
      secret: "whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0",
      headers: { Authorization: "Bearer receiver-token" },
      eventTypes: ["FORM_RESPONSE", "FORM_PUBLISHED"],
      enabled: false,
    };
    assert.deepEqual(changesOf(webhook), [
      { field: "formId" },
      { field: "url", value: "hooks.example.com" },
      { field: "secret" },
      { field: "headers" },
      { field: "eventTypes", value: "FORM_RESPONSE,FORM_PUBLISHED" },
      { field: "enabled", value: "false" },
    ]);
  });

  it("names a form's settings one by one and its document whole", () => {
    const body = { name: "Sign-up", document: { blocks: [{ question: "Your secret?" }] }, settings: { responseLimit: 10, notifications: { members: ["a@example.com"] } } };
    assert.deepEqual(changesOf(body), [
      { field: "name", value: "Sign-up" },
      { field: "document" },
      { field: "settings.responseLimit", value: "10" },
      { field: "settings.notifications" },
    ]);
  });

  it("never gives a password, token, key or answer its value", () => {
    const body = { password: "correct horse battery", token: "tok", key: "fk-abc", answers: { q: "my answer" }, apiKey: "fk-def", deleteApiKeys: true };
    const text = JSON.stringify(changesOf(body));
    for (const secret of ["correct horse battery", "tok\"", "fk-abc", "my answer", "fk-def"]) assert.ok(!text.includes(secret), secret);
    assert.deepEqual(changesOf(body).map((c) => c.field), Object.keys(body));
  });
});

describe("the audit trail", () => {
  /** Identity, forms and webhooks as the trail uses them; `failures` calls of RecordAuditEvents fail first. */
  function services(failures = 0, code = Code.Unavailable) {
    const recorded: AuditEvent[] = [];
    let calls = 0;
    const transport = createRouterTransport((router) => {
      router.service(IdentityService, {
        recordAuditEvents: (req) => {
          calls++;
          if (failures-- > 0) throw new ConnectError("identity is down", code);
          recorded.push(...req.events);
          return { recorded: req.events.length };
        },
      });
      router.service(FormsService, {
        getFormVersion: (req) => {
          if (req.formId === "gone") throw new ConnectError("form not found", Code.NotFound);
          return { formId: req.formId, workspaceId: `ws-of-${req.formId}`, version: 1 };
        },
      });
      router.service(WebhooksService, {
        getWebhook: (req, ctx) => {
          assert.equal(callerOf(ctx), "u1", "a webhook is looked up as the person who acted");
          return { webhook: { id: req.id, formId: `form-of-${req.id}` } };
        },
      });
    });
    return {
      recorded,
      /** Identity takes events again from now on. */
      heal: () => void (failures = 0),
      calls: () => calls,
      deps: { identity: createClient(IdentityService, transport), forms: createClient(FormsService, transport), webhooks: createClient(WebhooksService, transport) },
    };
  }

  it("sends events with their workspace: named, a form's, a webhook's form's; personal ones for identity to spread", async () => {
    const { recorded, deps } = services();
    const trail = new AuditTrail({ ...deps, logger: capturedLogger().logger });
    trail.record(captured({ scope: { workspaceId: "w1" } }));
    trail.record(captured({ scope: { formId: "f9" } }));
    trail.record(captured({ scope: { webhookId: "h3" } }));
    trail.record(captured({ scope: { formId: "gone" } }));
    trail.record(captured({ scope: { personal: true }, action: "session.sign_in_failed", actor: { type: "anonymous" }, subjectEmail: "a@example.com" }));
    await eventually(() => recorded.length === 5);
    assert.deepEqual(
      recorded.map((e) => [e.workspaceId, e.personal]),
      [["w1", false], ["ws-of-f9", false], ["ws-of-form-of-h3", false], ["", false], ["", true]],
    );
    const [first] = recorded;
    assert.deepEqual([first.actor?.type, first.actor?.userId, first.address, first.requestId, first.action], ["user", "u1", "198.51.100.7", "r1", "form.update"]);
    assert.equal(recorded[4].subjectEmail, "a@example.com");
    assert.equal(new Set(recorded.map((e) => e.id)).size, 5, "each event has its own id");
  });

  it("keeps events while identity fails, warns without their content, and sends each once when it answers again", async () => {
    const { recorded, calls, deps } = services(2);
    const { logger, lines } = capturedLogger();
    const trail = new AuditTrail({ ...deps, logger, retryMs: 10 });
    trail.record(captured({ changes: [{ field: "name", value: "Quarterly survey" }] }));
    await eventually(() => recorded.length === 1);
    assert.equal(calls(), 3);
    const warnings = lines.filter((l) => l.msg === "recording audit events failed; trying again");
    assert.equal(warnings.length, 2);
    assert.ok(!JSON.stringify(lines).includes("Quarterly survey"), "no event content in the log");
    assert.equal(trail.queued, 0);
  });

  it("holds at most maxQueued events, dropping the oldest with an error", async () => {
    // Identity refuses until healed, so "a" is still queued (retried) when "b" and "c" come.
    const { recorded, deps, heal } = services(Infinity);
    const { logger, lines } = capturedLogger();
    const trail = new AuditTrail({ ...deps, logger, retryMs: 20, maxQueued: 2 });
    trail.record(captured({ targetId: "a" }));
    await eventually(() => lines.some((l) => l.msg === "recording audit events failed; trying again"));
    trail.record(captured({ targetId: "b" }));
    trail.record(captured({ targetId: "c" }));
    assert.ok(lines.some((l) => l.msg === "audit events dropped: identity has not taken them for too long" && l.dropped === 1));
    heal();
    await eventually(() => recorded.length === 2);
    assert.deepEqual(recorded.map((e) => e.targetId), ["b", "c"]);
  });

  it("drops a batch identity refuses as invalid, loudly, rather than holding every later event back", async () => {
    const { recorded, deps } = services(1, Code.InvalidArgument);
    const { logger, lines } = capturedLogger();
    const trail = new AuditTrail({ ...deps, logger });
    trail.record(captured({ targetId: "bad" }));
    await eventually(() => lines.some((l) => l.msg === "audit events refused by identity and dropped"));
    trail.record(captured({ targetId: "good" }));
    await eventually(() => recorded.length === 1);
    assert.deepEqual(recorded.map((e) => e.targetId), ["good"]);
  });

  it("records a request's 2xx answer only; a deleting route's workspace is looked up before the change", async () => {
    const { recorded, deps } = services();
    const trail = new AuditTrail({ ...deps, logger: capturedLogger().logger });
    const who = { actor: { type: "user" as const, userId: "u1" }, address: "198.51.100.7", requestId: "r2" };
    const refused = await auditRequest(trail, auditedRoutes["patch /forms/:id"], { params: { id: "f1" }, body: { name: "x" } }, who);
    refused({ status: 409, body: { error: "no" } });
    const purge = await auditRequest(trail, auditedRoutes["delete /forms/:id/purge"], { params: { id: "f2" } }, who);
    purge({ status: 200, body: { responses: 3 } });
    await trail.stop(1000);
    assert.deepEqual(
      recorded.map((e) => [e.action, e.targetId, e.workspaceId]),
      [["form.purge", "f2", "ws-of-f2"]],
    );
  });
});

describe("the doors record what succeeded", () => {
  const user = create(UserSchema, { id: "u1", email: "ada@example.com", name: "Ada", createdAt: timestampNow() });
  const recorded: AuditEvent[] = [];
  const transport = createRouterTransport((router) => {
    router.service(IdentityService, {
      authenticateApiKeys: (req) => ({ results: req.keys.map((key) => (key.startsWith("fk-good") ? { user, apiKeyId: "key-1" } : {})) }),
      beginIdempotency: () => ({ outcome: 1 }),
      completeIdempotency: () => ({}),
      recordAuditEvents: (req) => {
        recorded.push(...req.events);
        return { recorded: req.events.length };
      },
    });
    router.service(FormsService, {
      createForm: (req) => ({ form: create(FormSchema, { id: "f-new", workspaceId: req.workspaceId, name: req.name, status: 1, createdAt: timestampNow(), updatedAt: timestampNow() }) }),
      updateForm: () => {
        throw new ConnectError("form not found", Code.NotFound);
      },
    });
  });
  const clients = {
    identity: createClient(IdentityService, transport),
    forms: createClient(FormsService, transport),
    webhooks: createClient(WebhooksService, transport),
  };
  const trail = new AuditTrail({ ...clients, logger: createLogger("audit-test", "silent") });
  const app = createApp({
    logger: createLogger("gateway-test", "silent"),
    ...clients,
    submissions: createClient(SubmissionsService, transport),
    delivery: createClient(DeliveryService, transport),
    fileLinks: fileLinks("test-secret", "http://localhost:8080"),
    idempotency: idempotentRequests(clients.identity, "test-secret"),
    rateLimits: { store: new MemorySlidingWindow(), perKey: 100, perIp: 1000 },
    publicUrl: "http://localhost:8080",
    brandingUrl: "http://localhost:8080/app/signup",
    countryHeader: "cf-ipcountry",
    health: {},
    trustProxy: false,
    audit: trail,
  });
  let base = "";
  let server: ReturnType<typeof app.listen>;
  before(async () => {
    server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  });
  after(() => server.close());

  it("an API key's create: the key, its person, the address, the form and its workspace, the fields set; a failed change nothing", async () => {
    const headers = { authorization: `Bearer ${"fk-good-audit".padEnd(46, "x")}`, "content-type": "application/json", "x-request-id": "req-77" };
    const created = await fetch(`${base}/forms`, { method: "POST", headers, body: JSON.stringify({ workspaceId: "w1", name: "Survey" }) });
    assert.equal(created.status, 201);
    const failed = await fetch(`${base}/forms/f-new`, { method: "PATCH", headers, body: JSON.stringify({ name: "Other" }) });
    assert.equal(failed.status, 404);
    await trail.stop(1000);
    assert.equal(recorded.length, 1);
    const [event] = recorded;
    assert.deepEqual(
      [event.action, event.targetType, event.targetId, event.workspaceId, event.actor?.type, event.actor?.userId, event.actor?.apiKeyId, event.address, event.requestId],
      ["form.create", "form", "f-new", "w1", "api_key", "u1", "key-1", "127.0.0.1", "req-77"],
    );
    assert.deepEqual(event.changes.map((c) => [c.field, c.value]), [["workspaceId", undefined], ["name", "Survey"]]);
  });
});
