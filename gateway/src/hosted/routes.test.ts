import assert from "node:assert/strict";
import { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { idempotentRequests } from "../idempotency.ts";
import type { AddressInfo } from "node:net";
import { after, before, beforeEach, describe, it } from "node:test";
import { create, type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import express from "express";
import { normalizeDocument } from "@formsvc/form-document";
import { createLogger } from "@formsvc/platform/logger.ts";
import { receiveUpload } from "@formsvc/platform/upload-stream.ts";
import { FormSchema, FormStatus, FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { BadRequestSchema } from "@formsvc/proto/google/rpc/error_details_pb.js";
import {
  SubmissionsService,
  type SaveResponseRequest,
} from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { errorHandler } from "../http-errors.ts";
import { MemorySlidingWindow } from "../rate-limit/sliding-window.ts";
import { hostedFormRoutes, type HostedFormDeps } from "./routes.ts";

// The hosted-form router in an Express app like the gateway's, over fake services.
const document = normalizeDocument({
  title: "Event sign-up",
  blocks: [
    { type: "SHORT_TEXT", key: "name", question: "Your full name", required: true },
    { type: "EMAIL", key: "email", question: "Email address" },
    { type: "MULTIPLE_CHOICE", key: "plan", question: "Plan", options: [{ id: "free", text: "Free" }, { id: "pro", text: "Pro" }] },
    { type: "CHECKBOXES", key: "topics", question: "Topics", options: [{ id: "t1", text: "One" }, { id: "t2", text: "Two" }] },
    { type: "NUMBER", key: "age", question: "Age" },
  ],
  hiddenFields: [{ name: "utm_source" }],
}).document as unknown as JsonObject;

const forms: Record<string, { status: FormStatus; settings?: JsonObject; showBranding?: boolean; responseCount?: number }> = {
  pub: { status: FormStatus.PUBLISHED },
  nobrand: { status: FormStatus.PUBLISHED, showBranding: false },
  redirect: { status: FormStatus.PUBLISHED, settings: { redirectUrl: "https://example.com/thanks" } },
  closed: { status: FormStatus.CLOSED, settings: { closedMessage: "Registration is over." } },
  ended: { status: FormStatus.PUBLISHED, settings: { closesAt: "2020-01-01T00:00:00Z", closedMessage: "Closed on January 1st." } },
  full: { status: FormStatus.PUBLISHED, settings: { responseLimit: 3, closedMessage: "All 3 places are taken." }, responseCount: 3 },
  notrap: { status: FormStatus.PUBLISHED, settings: { honeypot: false } },
  busy: { status: FormStatus.PUBLISHED, settings: { submissionsPerMinute: 2 } },
  embedOnly: { status: FormStatus.PUBLISHED, settings: { embedOrigins: ["https://shop.example.com", "https://*.example.org"] } },
  unframed: { status: FormStatus.PUBLISHED, settings: { embedOrigins: [] } },
  closedEmbed: { status: FormStatus.CLOSED, settings: { embedOrigins: ["https://shop.example.com"] } },
};

const saved: SaveResponseRequest[] = [];
const uploads: Awaited<ReturnType<typeof receiveUpload>>[] = [];
let publicFormCalls = 0;

const transport = createRouterTransport((router) => {
  router.service(FormsService, {
    getPublicForm: (req) => {
      publicFormCalls++;
      const form = forms[req.id];
      if (!form) throw new ConnectError("form not found", Code.NotFound);
      return {
        form: create(FormSchema, { id: req.id, name: "Sign-up", status: form.status, version: 4, document, settings: form.settings ?? {}, responseCount: BigInt(form.responseCount ?? 0) }),
        showBranding: form.showBranding ?? true,
      };
    },
  });
  router.service(SubmissionsService, {
    saveResponse: (req) => {
      if (!forms[req.formId]) throw new ConnectError("form not found", Code.NotFound);
      if (forms[req.formId].status === FormStatus.CLOSED) throw new ConnectError("form is closed", Code.FailedPrecondition);
      // As submissions refuses answers: every problem in the message, and each by its key in a BadRequest detail.
      const refused = { "not-an-email": "must be an email address", "taken@example.com": "this address has already answered" }[String(req.answers?.email)];
      if (refused) {
        throw new ConnectError(`answers.email (Email address): ${refused}`, Code.InvalidArgument, undefined, [
          { desc: BadRequestSchema, value: { fieldViolations: [{ field: "email", description: refused }] } },
        ]);
      }
      saved.push(req);
      return { responseId: req.responseId || `r${saved.length}`, completed: req.completed };
    },
    createUpload: async (requests) => {
      const req = await receiveUpload(requests);
      if (!forms[req.formId]) throw new ConnectError("form not found", Code.NotFound);
      uploads.push(req);
      return { uploadId: `u${uploads.length}`, name: req.name, size: BigInt(req.content.length), contentType: req.contentType };
    },
  });
});

function appWith(overrides: Partial<HostedFormDeps> = {}) {
  const store = new MemorySlidingWindow();
  const app = express();
  app.set("trust proxy", true);
  app.use(
    "/f",
    hostedFormRoutes({
      logger: createLogger("hosted-test", "silent"),
      forms: createClient(FormsService, transport),
      submissions: createClient(SubmissionsService, transport),
      // No request here sends an Idempotency-Key.
      idempotency: idempotentRequests(createClient(IdentityService, createRouterTransport(() => {})), "test-secret"),
      rateLimits: { store, perIp: 1000, publicWritesPerIp: 1000 },
      countryHeader: "cf-ipcountry",
      brandingUrl: "https://forms.example.com/about",
      lookupCountry: (ip) => (ip === "81.2.69.160" ? "GB" : undefined),
      ...overrides,
    }),
  );
  app.use(errorHandler(createLogger("hosted-test", "silent")));
  return { app, store };
}

async function listen(app: express.Express) {
  const server = app.listen(0);
  await new Promise((r) => server.once("listening", r));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const { app, store } = appWith();
let base = "";
let server: ReturnType<express.Express["listen"]>;
before(async () => {
  ({ server, base } = await listen(app));
});
after(async () => {
  server.close();
  await store.close();
});
beforeEach(() => {
  saved.length = 0;
  uploads.length = 0;
});

async function call(method: string, path: string, init: { headers?: Record<string, string>; body?: BodyInit } = {}) {
  const res = await fetch(base + path, { method, headers: init.headers, body: init.body, redirect: "manual" });
  const text = await res.text();
  const json = /application\/json/.test(res.headers.get("content-type") ?? "") ? JSON.parse(text) : undefined;
  return { status: res.status, headers: res.headers, text, json };
}

const postJson = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  call("POST", path, { headers: { "content-type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });

describe("GET /f/:formId", () => {
  it("serves the published form as HTML with hidden fields from the query string", async () => {
    const res = await call("GET", "/f/pub?utm_source=newsletter&other=x");
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /text\/html/);
    assert.match(res.headers.get("content-security-policy") ?? "", /script-src 'self'/);
    assert.match(res.text, /<h1 id="hf-title">Event sign-up<\/h1>/);
    assert.match(res.text, /<input type="hidden" name="_hidden.utm_source" value="newsletter">/);
    assert.match(res.text, /<input type="hidden" name="_version" value="4">/);
    assert.match(res.text, /<form id="hf-form"[^>]*method="post" action="\/f\/pub"/);
    assert.match(res.text, /<script src="\/f\/assets\/form-page.js\?v=[0-9a-f]{12}"><\/script>/);
    assert.match(res.text, /<a href="https:\/\/forms.example.com\/about">Made with formsvc<\/a>/);
  });

  it("leaves out branding when the service says so", async () => {
    const res = await call("GET", "/f/nobrand");
    assert.equal(res.status, 200);
    assert.doesNotMatch(res.text, /Made with formsvc/);
  });

  it("shows a closed form's message, with no inputs, as 200", async () => {
    const res = await call("GET", "/f/closed");
    assert.equal(res.status, 200);
    assert.match(res.text, /Registration is over\./);
    assert.doesNotMatch(res.text, /<(form|input)\b/);
  });

  it("answers 404 HTML for unknown ids (drafts and the Trash look the same) and odd ids", async () => {
    for (const path of ["/f/draft", "/f/bad%20id", "/f/pub/nothing", "/f"]) {
      const res = await call("GET", path);
      assert.equal(res.status, 404, path);
      assert.match(res.headers.get("content-type") ?? "", /text\/html/, path);
      assert.match(res.text, /Form not found/, path);
    }
    const before = publicFormCalls;
    await call("GET", "/f/" + "x".repeat(65));
    assert.equal(publicFormCalls, before, "an impossible id never reaches the service");
  });

  it("serves the page script with caching", async () => {
    const page = await call("GET", "/f/pub");
    const src = /<script src="([^"]+)"/.exec(page.text)![1];
    const res = await call("GET", src);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /text\/javascript/);
    assert.equal(res.headers.get("cache-control"), "public, max-age=31536000, immutable");
    assert.match(res.text, /localStorage/);
    // fetch would add "Cache-Control: no-cache" to a conditional request; a browser revalidating sends max-age=0.
    const unversioned = await call("GET", "/f/assets/form-page.js", {
      headers: { "if-none-match": res.headers.get("etag")!, "cache-control": "max-age=0" },
    });
    assert.equal(unversioned.status, 304);
    assert.equal(unversioned.headers.get("cache-control"), "public, max-age=300");
  });
});

describe("GET /f/:formId/definition", () => {
  it("answers {formId, name, version, document}", async () => {
    const res = await call("GET", "/f/pub/definition");
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.json).sort(), ["document", "formId", "name", "version"]);
    assert.equal(res.json.formId, "pub");
    assert.equal(res.json.name, "Sign-up");
    assert.equal(res.json.version, 4);
    assert.equal(res.json.document.blocks[0].key, "name");
  });

  it("answers a JSON 404 for unknown forms", async () => {
    const res = await call("GET", "/f/draft/definition");
    assert.equal(res.status, 404);
    assert.deepEqual(res.json, { error: "form not found" });
  });
});

describe("POST /f/:formId/responses", () => {
  it("saves answers and answers {responseId, completed}", async () => {
    const res = await postJson("/f/pub/responses", {
      version: 4,
      answers: { name: "Ada", plan: "pro", topics: ["t1"], age: 36 },
      hidden: { utm_source: "newsletter" },
      completed: true,
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, { responseId: "r1", completed: true });
    assert.equal(saved.length, 1);
    assert.equal(saved[0].formId, "pub");
    assert.equal(saved[0].version, 4);
    assert.deepEqual(saved[0].answers, { name: "Ada", plan: "pro", topics: ["t1"], age: 36 });
    assert.deepEqual(saved[0].hidden, { utm_source: "newsletter" });
    assert.equal(saved[0].completed, true);
    assert.equal(saved[0].responseId, "");
  });

  it("continues a partial response", async () => {
    const res = await postJson("/f/pub/responses", { answers: { name: "Ada" }, responseId: "r-earlier" });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { responseId: "r-earlier", completed: false });
    assert.equal(saved[0].version, 0, "no version means the current one");
    assert.equal(saved[0].completed, false);
  });

  it("validates the body, naming the field", async () => {
    const cases: [unknown, RegExp][] = [
      [{}, /^body\.answers: is required/],
      [{ answers: [] }, /^body\.answers: /],
      [{ answers: {}, completed: "yes" }, /^body\.completed: /],
      [{ answers: {}, version: 1.5 }, /^body\.version: /],
      [{ answers: {}, hidden: { a: 1 } }, /^body\.hidden\.a: /],
      [{ answers: {}, extra: 1 }, /^body\.extra: unknown property/],
      [{ answers: {}, responseId: "" }, /^body\.responseId: /],
    ];
    for (const [body, message] of cases) {
      const res = await postJson("/f/pub/responses", body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.match(res.json.error, message, JSON.stringify(body));
    }
    const invalid = await postJson("/f/pub/responses", "{not json");
    assert.equal(invalid.status, 400);
    assert.deepEqual(invalid.json, { error: "request body is not valid JSON" });
    const text = await call("POST", "/f/pub/responses", { headers: { "content-type": "text/plain" }, body: "answers" });
    assert.equal(text.status, 415);
    assert.equal(saved.length, 0);
  });

  it("refuses what the service could not store or decode before asking it: deep answers, control characters, int32 overflow, bad encodings", async () => {
    const deep = (levels: number) => "[".repeat(levels) + '"x"' + "]".repeat(levels);
    const cases: [string, number, RegExp][] = [
      [`{"answers":{"topics":${deep(50)}}}`, 400, /^body\.answers\.topics(\[0\])+: must not be nested deeper than 8 levels$/],
      [`{"answers":{"topics":${deep(500)}}}`, 400, /^body\.answers\.topics(\[0\])+: must not be nested deeper than 8 levels$/],
      [`{"answers":{},"hidden":${deep(500)}}`, 400, /^body\.hidden(\[0\])+: must not be nested deeper than 16 levels$/],
      [JSON.stringify({ answers: { name: "a\u0000b" } }), 400, /^body\.answers\.name: must not contain control characters$/],
      [JSON.stringify({ answers: {}, hidden: { utm_source: "\u001b" } }), 400, /^body\.hidden\.utm_source: must not contain control characters$/],
      ['{"answers":{"name":"\\ud800"}}', 400, /^body\.answers\.name: must be valid Unicode/],
      [JSON.stringify({ answers: {}, version: 2 ** 31 }), 400, /^body\.version: /],
      [JSON.stringify({ answers: {}, responseId: "r".repeat(65) }), 400, /^body\.responseId: must be an id/],
    ];
    for (const [body, status, message] of cases) {
      const res = await postJson("/f/pub/responses", body);
      assert.equal(res.status, status, body.slice(0, 80));
      assert.match(res.json.error, message, body.slice(0, 80));
    }
    const gzip = await postJson("/f/pub/responses", "not gzip", { "content-encoding": "gzip" });
    assert.deepEqual([gzip.status, gzip.json], [400, { error: "request body cannot be decoded with its Content-Encoding" }]);
    const unknownEncoding = await postJson("/f/pub/responses", "{}", { "content-encoding": "x-unknown" });
    assert.deepEqual([unknownEncoding.status, unknownEncoding.json], [415, { error: "unsupported body encoding" }]);
    const noId = await postJson("/f//responses", { answers: {} });
    assert.deepEqual([noId.status, noId.json], [404, { error: "form not found" }]);
    assert.equal(saved.length, 0);
  });

  it("refuses bodies over 256 KiB with 413", async () => {
    const res = await postJson("/f/pub/responses", { answers: { name: "x".repeat(257 * 1024) } });
    assert.equal(res.status, 413);
    assert.deepEqual(res.json, { error: "request body is too large" });
    const fits = await postJson("/f/pub/responses", { answers: { name: "x".repeat(250 * 1024) } });
    assert.equal(fits.status, 200);
  });

  it("passes the service's answers on: 400 naming the question, 409 closed, 404 unknown", async () => {
    const bad = await postJson("/f/pub/responses", { answers: { email: "not-an-email" } });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.json, {
      error: "answers.email (Email address): must be an email address",
      fields: [{ key: "email", message: "must be an email address" }],
    });
    const closed = await postJson("/f/closed/responses", { answers: {} });
    assert.equal(closed.status, 409);
    assert.deepEqual(closed.json, { error: "form is closed" });
    const unknown = await postJson("/f/draft/responses", { answers: {} });
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.json, { error: "form not found" });
  });

  it("takes the country from the configured header, else from GeoIP of the client address", async () => {
    await postJson("/f/pub/responses", { answers: {} }, { "cf-ipcountry": "de" });
    await postJson("/f/pub/responses", { answers: {} }, { "cf-ipcountry": "XX", "x-forwarded-for": "81.2.69.160" });
    await postJson("/f/pub/responses", { answers: {} }, { "x-forwarded-for": "81.2.69.160" });
    await postJson("/f/pub/responses", { answers: {} }, { "cf-ipcountry": "Germany" });
    assert.deepEqual(
      saved.map((s) => s.country),
      ["DE", "GB", "GB", ""],
    );
  });

  it("uses the offline GeoIP database by default", async () => {
    const { app: geoApp, store: geoStore } = appWith({ lookupCountry: undefined });
    const { server: geoServer, base: geoBase } = await listen(geoApp);
    try {
      const res = await fetch(`${geoBase}/f/pub/responses`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": "8.8.8.8" },
        body: JSON.stringify({ answers: {} }),
      });
      assert.equal(res.status, 200);
      assert.equal(saved.at(-1)?.country, "US");
    } finally {
      geoServer.close();
      await geoStore.close();
    }
  });
});

describe("POST /f/:formId/uploads", () => {
  it("stores a file sent as multipart field `file`", async () => {
    const body = new FormData();
    body.append("file", new Blob([Buffer.from("hello, world")], { type: "text/plain" }), "café notes.txt");
    const res = await call("POST", "/f/pub/uploads", { body });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, { uploadId: "u1", name: "café notes.txt", size: 12, contentType: "text/plain" });
    assert.equal(uploads[0].formId, "pub");
    assert.equal(Buffer.from(uploads[0].content).toString(), "hello, world");
  });

  it("answers 400 without a file, and for a file in another field", async () => {
    const noFile = new FormData();
    noFile.append("note", "no file here");
    const missing = await call("POST", "/f/pub/uploads", { body: noFile });
    assert.equal(missing.status, 400);
    assert.match(missing.json.error, /missing file/);
    const notMultipart = await postJson("/f/pub/uploads", { file: "x" });
    assert.equal(notMultipart.status, 400);
    const wrongField = new FormData();
    wrongField.append("upload", new Blob(["x"]), "x.txt");
    const wrong = await call("POST", "/f/pub/uploads", { body: wrongField });
    assert.equal(wrong.status, 400);
    assert.match(wrong.json.error, /field "file"/);
    assert.equal(uploads.length, 0);
  });

  it("answers 413 above 10 MiB", async () => {
    const body = new FormData();
    body.append("file", new Blob([new Uint8Array(10 * 1024 * 1024 + 1)]), "big.bin");
    const res = await call("POST", "/f/pub/uploads", { body });
    assert.equal(res.status, 413);
    assert.match(res.json.error, /larger than 10 MiB/);
    const exact = new FormData();
    exact.append("file", new Blob([new Uint8Array(10 * 1024 * 1024)]), "exact.bin");
    assert.equal((await call("POST", "/f/pub/uploads", { body: exact })).status, 200);
  });

  it("answers a JSON 404 for unknown forms", async () => {
    const body = new FormData();
    body.append("file", new Blob(["x"]), "x.txt");
    const res = await call("POST", "/f/draft/uploads", { body });
    assert.equal(res.status, 404);
    assert.deepEqual(res.json, { error: "form not found" });
  });
});

describe("POST /f/:formId without JavaScript", () => {
  const form = (fields: [string, string][]) => ({
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
  });

  it("turns the fields into answers and answers a thank-you page", async () => {
    const res = await call(
      "POST",
      "/f/pub",
      form([
        ["_version", "4"],
        ["_hidden.utm_source", "newsletter"],
        ["name", "Ada Lovelace"],
        ["email", ""],
        ["plan", "pro"],
        ["topics", "t1"],
        ["topics", "t2"],
        ["age", "36"],
      ]),
    );
    assert.equal(res.status, 200);
    assert.match(res.text, /Thank you!/);
    assert.equal(saved.length, 1);
    assert.deepEqual(saved[0].answers, { name: "Ada Lovelace", plan: "pro", topics: ["t1", "t2"], age: 36 });
    assert.deepEqual(saved[0].hidden, { utm_source: "newsletter" });
    assert.equal(saved[0].version, 4);
    assert.equal(saved[0].completed, true);
  });

  it("shows the form again with errors (400) and keeps what was typed", async () => {
    const missing = await call("POST", "/f/pub", form([["email", "ada@example.com"], ["_hidden.utm_source", "ad"]]));
    assert.equal(missing.status, 400);
    assert.match(missing.headers.get("content-type") ?? "", /text\/html/);
    assert.match(missing.text, /role="alert">This question is required.<\/p>/);
    assert.match(missing.text, /name="email" value="ada@example.com"/);
    assert.match(missing.text, /name="_hidden.utm_source" value="ad"/);
    const invalid = await call("POST", "/f/pub", form([["name", "Ada"], ["email", "not-an-email"]]));
    assert.equal(invalid.status, 400);
    assert.match(invalid.text, /name="email" value="not-an-email"[^>]*aria-invalid="true"/);
    assert.match(invalid.text, /role="alert">Must be an email address<\/p>/);
    assert.equal(saved.length, 0);
    // What only the service can tell, shown next to the question it names by key.
    const taken = await call("POST", "/f/pub", form([["name", "Ada"], ["email", "taken@example.com"]]));
    assert.equal(taken.status, 400);
    assert.match(taken.text, /name="email" value="taken@example.com"[^>]*aria-invalid="true"/);
    assert.match(taken.text, /role="alert">This address has already answered<\/p>/);
    assert.equal(saved.length, 0);
  });

  it("redirects to the form's redirect URL, and refuses closed forms", async () => {
    const res = await call("POST", "/f/redirect", form([["name", "Ada"]]));
    assert.equal(res.status, 303);
    assert.equal(res.headers.get("location"), "https://example.com/thanks");
    assert.match(res.headers.get("content-security-policy") ?? "", /form-action 'self' https:\/\/example.com/);
    const closed = await call("POST", "/f/closed", form([["name", "Ada"]]));
    assert.equal(closed.status, 409);
    assert.match(closed.text, /Registration is over\./);
    const unknown = await call("POST", "/f/draft", form([["name", "Ada"]]));
    assert.equal(unknown.status, 404);
    assert.match(unknown.text, /Form not found/);
  });
});

describe("POST /f/:formId without JavaScript: odd input", () => {
  it("refuses thousands of fields (413) and control characters (400) with a page, and ignores a version beyond int32", async () => {
    const form = (body: string) => call("POST", "/f/pub", { headers: { "content-type": "application/x-www-form-urlencoded" }, body });
    const many = await form(Array.from({ length: 2000 }, (_, i) => `f${i}=x`).join("&"));
    assert.equal(many.status, 413);
    assert.match(many.headers.get("content-type") ?? "", /text\/html/);
    const control = await form("name=a%00b");
    assert.equal(control.status, 400);
    assert.match(control.text, /body\.name: must not contain control characters/);
    const version = await form("name=Ada&_version=99999999999");
    assert.equal(version.status, 200);
    assert.equal(saved.at(-1)?.version, 0, "an impossible version is no version");
  });
});

describe("rate limits", () => {
  it("limits posts per address in their own bucket, reads by the address limit", async () => {
    const { app: limited, store: limitedStore } = appWith({
      rateLimits: { store: new MemorySlidingWindow(), perIp: 6, publicWritesPerIp: 2 },
    });
    const { server: limitedServer, base: limitedBase } = await listen(limited);
    try {
      const post = () =>
        fetch(`${limitedBase}/f/pub/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"answers":{}}' });
      assert.equal((await post()).status, 200);
      assert.equal((await post()).status, 200);
      const third = await post();
      assert.equal(third.status, 429);
      assert.ok(Number(third.headers.get("retry-after")) >= 1);
      assert.match((await third.json()).error, /per public exceeded/);
      // Reads still pass until the address limit (6 requests, the posts included), then get an HTML page.
      assert.equal((await fetch(`${limitedBase}/f/pub`)).status, 200);
      assert.equal((await fetch(`${limitedBase}/f/pub`)).status, 200);
      assert.equal((await fetch(`${limitedBase}/f/pub`)).status, 200);
      const page = await fetch(`${limitedBase}/f/pub`);
      assert.equal(page.status, 429);
      assert.match(await page.text(), /Too many requests/);
      // The page's script is never limited.
      assert.equal((await fetch(`${limitedBase}/f/assets/form-page.js`)).status, 200);
    } finally {
      limitedServer.close();
      await limitedStore.close();
    }
  });
});

describe("form controls", () => {
  const post = (id: string, fields: [string, string][]) =>
    call("POST", `/f/${id}`, { headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });

  it("shows the closed message past the closing date and at the response limit, and takes no post", async () => {
    for (const [id, message] of [["ended", /Closed on January 1st\./], ["full", /All 3 places are taken\./]] as const) {
      const page = await call("GET", `/f/${id}`);
      assert.equal(page.status, 200);
      assert.match(page.text, message);
      assert.doesNotMatch(page.text, /<form/);
      const posted = await post(id, [["name", "Ada"]]);
      assert.equal(posted.status, 409);
      assert.match(posted.text, message);
    }
    assert.equal(saved.length, 0);
  });

  it("carries a honeypot people never see; who fills it is thanked and nothing is stored", async () => {
    const page = await call("GET", "/f/pub");
    const trap = /<div class="hf-trap" aria-hidden="true">.*?<input ([^>]*)><\/div>/.exec(page.text);
    assert.ok(trap, "the page has the honeypot");
    for (const attribute of ['name="_website"', 'tabindex="-1"', 'autocomplete="off"', 'type="text"']) assert.ok(trap[1].includes(attribute), attribute);
    assert.match(page.text, /\.hf-trap\{position:absolute;inset-inline-start:-10000px/);
    assert.doesNotMatch((await call("GET", "/f/notrap")).text, /_website/, "off in the settings: no honeypot");

    const plain = await post("pub", [["name", "Ada"], ["_website", "http://spam.example"]]);
    assert.equal(plain.status, 200);
    assert.match(plain.text, /Thank you!/);
    const redirected = await post("redirect", [["name", "Ada"], ["_website", "http://spam.example"]]);
    assert.equal(redirected.status, 303);
    assert.equal(redirected.headers.get("location"), "https://example.com/thanks");
    const json = await postJson("/f/pub/responses", { answers: { name: "Ada" }, completed: true, honeypot: "http://spam.example" });
    assert.equal(json.status, 200);
    assert.equal(json.json.completed, true);
    assert.match(json.json.responseId, /^\w{16}$/);
    assert.equal(saved.length, 0, "nothing reached the service");

    assert.equal((await post("pub", [["name", "Ada"], ["_website", ""]])).status, 200);
    assert.equal(saved.length, 1, "an empty honeypot is a person");
  });

  it("limits the posts to a form from everyone to its submissionsPerMinute: 429 with Retry-After", async () => {
    const fromAddress = (ip: string) => ({ "content-type": "application/json", "x-forwarded-for": ip });
    assert.equal((await postJson("/f/busy/responses", { answers: {} }, fromAddress("198.51.100.1"))).status, 200);
    assert.equal((await post("busy", [["name", "Ada"]])).status, 200);
    const third = await postJson("/f/busy/responses", { answers: {} }, fromAddress("198.51.100.2"));
    assert.equal(third.status, 429);
    assert.ok(Number(third.headers.get("retry-after")) >= 1);
    assert.deepEqual(third.json, { error: "rate limit of 2 requests a minute per form exceeded" });
    const page = await post("busy", [["name", "Ada"]]);
    assert.equal(page.status, 429);
    assert.match(page.text, /Too many requests/);
    // Other forms are not held back by it.
    assert.equal((await postJson("/f/pub/responses", { answers: {} })).status, 200);
  });
});

describe("framing (settings.embedOrigins)", () => {
  const directives = (res: { headers: Headers }) =>
    new Map(
      (res.headers.get("content-security-policy") ?? "").split(";").map((d) => {
        const [name, ...sources] = d.trim().split(/\s+/);
        return [name, sources] as const;
      }),
    );

  it("lets any site frame a form by default, as embeds need", async () => {
    const page = await call("GET", "/f/pub");
    assert.equal(page.status, 200);
    assert.equal(directives(page).has("frame-ancestors"), false);
    assert.equal(page.headers.get("x-frame-options"), null);
  });

  it("names the form's allowed origins in frame-ancestors on each of its pages, and 'none' for an empty list", async () => {
    assert.deepEqual(directives(await call("GET", "/f/embedOnly")).get("frame-ancestors"), ["https://shop.example.com", "https://*.example.org"]);
    const thanked = await call("POST", "/f/embedOnly", { headers: { "content-type": "application/x-www-form-urlencoded" }, body: "name=Ada" });
    assert.equal(thanked.status, 200);
    assert.deepEqual(directives(thanked).get("frame-ancestors"), ["https://shop.example.com", "https://*.example.org"]);
    const closed = await call("GET", "/f/closedEmbed");
    assert.deepEqual(directives(closed).get("frame-ancestors"), ["https://shop.example.com"]);
    assert.match(closed.text, /<script src="\/f\/assets\/form-page.js\?v=[0-9a-f]{12}"><\/script>/, "a closed page reports its height to an embed too");
    assert.deepEqual(directives(await call("GET", "/f/unframed")).get("frame-ancestors"), ["'none'"]);
    assert.deepEqual(directives(await call("GET", "/f/unframed")).get("script-src"), ["'self'"], "the rest of the policy stays");
  });
});
