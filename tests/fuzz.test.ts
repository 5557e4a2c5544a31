import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import type { z } from "zod";
import { apiRoutes } from "../gateway/src/routes/index.ts";
import type { ApiRoute } from "../gateway/src/routes/route.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { startReceiver } from "./support/receiver.ts";
import { createUserWithKey, startTestSystem, type TestSystem } from "./support/system.ts";

// Malformed input at every edge of the running system: each /api/v1 route of the route table, the hosted
// form endpoints and the app's sign-up and sign-in get the families of bad input a probe found 5xx with
// (bad %-encoding, NUL and control characters, over-long ids, out-of-range integers, undecodable bodies,
// deep nesting, thousands of fields, lone surrogates, wrong shapes), then random values from fast-check
// over each route's schema shape. Nothing may answer 5xx; every JSON endpoint's error is {"error": string}.

/** Fixed so CI is reproducible; FUZZ_SEED runs another sample. */
const seed = Number(process.env.FUZZ_SEED ?? 20261123);
/** fast-check samples per route and per hosted endpoint. */
const randomRunsPerRoute = 40;

let sys: TestSystem;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let key: string;
/** Real records, so well-formed ids reach the found-record paths; `spare*` are for the DELETE routes. */
const ids = { workspace: "", form: "", spareForm: "", submission: "", spareSubmission: "", webhook: "", spareWebhook: "", delivery: "", link: "" };

// The route table itself; its clients are never called here.
const routes: ApiRoute[] = apiRoutes({} as Parameters<typeof apiRoutes>[0]);
const routeName = (route: ApiRoute) => `${route.method.toUpperCase()} ${route.path}`;

const document = {
  title: "Fuzz",
  blocks: [
    { id: "name", key: "name", type: "SHORT_TEXT", question: "Your name", required: true },
    { id: "tags", key: "tags", type: "CHECKBOXES", question: "Tags", options: [{ id: "a", text: "A" }, { id: "b", text: "B" }] },
    { id: "age", key: "age", type: "NUMBER", question: "Age" },
    { id: "cv", key: "cv", type: "FILE", question: "CV" },
  ],
  hiddenFields: [{ name: "utm_source" }],
};

interface Probe {
  method: string;
  /** Path and query, already encoded as they go on the wire. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Whether errors are JSON (false: the hosted HTML pages, whose errors are pages). */
  json?: boolean;
  withKey?: boolean;
  what: string;
}

interface Tally {
  requests: number;
  serverErrors: string[];
  badErrorBodies: string[];
}
const tally: Tally = { requests: 0, serverErrors: [], badErrorBodies: [] };

async function send(probe: Probe): Promise<{ status: number; contentType: string; text: string }> {
  const headers: Record<string, string> = { ...probe.headers };
  if (probe.withKey !== false && probe.path.startsWith("/api/v1")) headers.authorization = `Bearer ${key}`;
  const res = await fetch(`${sys.url}${probe.path}`, {
    method: probe.method,
    headers,
    body: probe.body as BodyInit | undefined,
    redirect: "manual",
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  return { status: res.status, contentType: res.headers.get("content-type") ?? "", text };
}

/** Sends a probe and records what it must not do: a 5xx, or an error that is not {"error": string} (and its "fields"). */
async function check(probe: Probe): Promise<void> {
  tally.requests++;
  const where = `${probe.method} ${probe.path.slice(0, 120)} [${probe.what}]`;
  let answer: Awaited<ReturnType<typeof send>>;
  try {
    answer = await send(probe);
  } catch (err) {
    tally.serverErrors.push(`${where}: no answer (${(err as Error).message})`);
    return;
  }
  if (answer.status >= 500) tally.serverErrors.push(`${where}: ${answer.status} ${answer.text.slice(0, 200)}`);
  if (answer.status < 400) return;
  if (probe.json === false) {
    if (!answer.contentType.startsWith("text/html")) tally.badErrorBodies.push(`${where}: ${answer.status} ${answer.contentType}, not an HTML page`);
    return;
  }
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    body = undefined;
  }
  const ok = answer.contentType.startsWith("application/json") && isErrorBody(body);
  if (!ok) tally.badErrorBodies.push(`${where}: ${answer.status} ${answer.contentType} ${answer.text.slice(0, 200)}`);
}

/** The documented error body: `{"error": string}`, with `fields: [{key, message}]` when it names wrong answers. */
function isErrorBody(body: unknown): boolean {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return false;
  const { error, fields, ...rest } = body as { error?: unknown; fields?: unknown };
  const field = (f: unknown) => typeof f === "object" && f !== null && Object.keys(f).length === 2 && typeof (f as { key?: unknown }).key === "string" && typeof (f as { message?: unknown }).message === "string";
  const fieldsOk = fields === undefined || (Array.isArray(fields) && fields.length > 0 && fields.every(field));
  return typeof error === "string" && fieldsOk && Object.keys(rest).length === 0;
}

/** Runs probes a few at a time: enough to be quick, few enough for a 2-core machine. */
async function checkAll(probes: Probe[], concurrency = 4): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < probes.length) await check(probes[next++]);
    }),
  );
}

// --- malformed values -----------------------------------------------------------------------------

/** Path segments the router cannot decode: a 400, before any route runs. */
const badEncodings = ["%", "%E0%A4%A", "%zz", "abc%", "%C0%80", "%ED%A0%80", "%FF"];
/** Decodable but never an id: each must answer exactly what an unknown, well-formed id does. */
const malformedIds = ["%00", "abc%00def", "%01", "x%1By", "%7F", "a%0Ab", "%09", "a".repeat(65), "b".repeat(5000), "%F0%9F%98%80", "%20", "a.b", "%2F", "%EF%BF%BD"];
/** Query values: control characters, broken encodings and integers no int32 holds. */
const badQueryValues = ["%00", "x%01y", "%ED%A0%80", "%E0%A4%A", "99999999999999999999", "2147483648", "-1", "0", "1.5", "abc", "1e400", "-0", "0x10", "", "%20", "a".repeat(5000)];

const nested = (levels: number, leaf = '"x"') => "[".repeat(levels) + leaf + "]".repeat(levels);
const manyFields = (n: number) => `{${Array.from({ length: n }, (_, i) => `"f${i}":${i}`).join(",")}}`;

/** Bodies that are not what any route takes, each with its headers. */
function badBodies(fields: string[]): { what: string; body: string | Uint8Array; headers: Record<string, string> }[] {
  const json = { "content-type": "application/json" };
  const field = fields[0] ?? "name";
  return [
    { what: "not JSON", body: "not json {", headers: json },
    { what: "empty JSON", body: "", headers: json },
    { what: "text/plain", body: `{"${field}":"x"}`, headers: { "content-type": "text/plain" } },
    { what: "urlencoded", body: `${field}=x`, headers: { "content-type": "application/x-www-form-urlencoded" } },
    { what: "multipart", body: "--b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\ny\r\n--b--\r\n", headers: { "content-type": "multipart/form-data; boundary=b" } },
    { what: "no content type", body: `{"${field}":"x"}`, headers: {} },
    { what: "odd charset", body: `{"${field}":"x"}`, headers: { "content-type": "application/json; charset=klingon" } },
    { what: "gzip garbage", body: "definitely not gzip", headers: { ...json, "content-encoding": "gzip" } },
    { what: "deflate garbage", body: "definitely not deflate", headers: { ...json, "content-encoding": "deflate" } },
    { what: "br garbage", body: "definitely not brotli", headers: { ...json, "content-encoding": "br" } },
    { what: "unknown encoding", body: `{"${field}":"x"}`, headers: { ...json, "content-encoding": "x-unknown" } },
    { what: "truncated gzip", body: gzipSync(`{"${field}":"x"}`).subarray(0, 12), headers: { ...json, "content-encoding": "gzip" } },
    { what: "nested 50", body: `{"${field}":${nested(50)}}`, headers: json },
    { what: "nested 500", body: `{"${field}":${nested(500)}}`, headers: json },
    { what: "nested 100000", body: nested(100_000), headers: json },
    { what: "5000 fields", body: manyFields(5000), headers: json },
    { what: "NUL in a string", body: `{"${field}":"a\\u0000b"}`, headers: json },
    { what: "escape in a string", body: `{"${field}":"\\u001b[31mred"}`, headers: json },
    { what: "NUL in a key", body: `{"a\\u0000b":"x"}`, headers: json },
    { what: "lone surrogate", body: `{"${field}":"\\ud800"}`, headers: json },
    { what: "lone low surrogate key", body: `{"\\udc00":"x"}`, headers: json },
    { what: "invalid UTF-8 bytes", body: Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xed, 0xa0, 0x80, 0x22, 0x7d]), headers: json },
    { what: "array for object", body: "[1,2,3]", headers: json },
    { what: "array field", body: `{"${field}":[{"a":1}]}`, headers: json },
    { what: "scalar body", body: "42", headers: json },
    { what: "null body", body: "null", headers: json },
    { what: "huge number", body: `{"${field}":1e400,"version":99999999999999999999,"page":-1}`, headers: json },
    { what: "fractional integer", body: `{"${field}":1.5,"version":2.5}`, headers: json },
  ];
}

/** A string of any code units, percent-encoded byte by byte (lone surrogates become U+FFFD). */
const encodedBytes = (s: string) => [...Buffer.from(s, "utf8")].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("");

const randomPathValue = fc.oneof(
  fc.string({ unit: "binary", maxLength: 80 }).map(encodedBytes),
  fc.stringMatching(/^[A-Za-z0-9%_.~-]{0,100}$/),
  fc.string({ unit: "grapheme", maxLength: 40 }).map(encodeURIComponent),
);
const randomText = fc.oneof(fc.string({ unit: "binary", maxLength: 60 }), fc.string({ maxLength: 20 }), fc.integer().map(String), fc.double().map(String));

/** Random query values for a schema's keys (and one stray key), percent-encoded byte by byte. */
function randomQuery(keys: string[]) {
  return fc
    .dictionary(fc.constantFrom(...keys, "stray"), fc.oneof(randomText, fc.array(randomText, { maxLength: 3 })), { maxKeys: 4 })
    .map((q) =>
      Object.entries(q)
        .flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((one) => `${k}=${encodedBytes(one)}`))
        .join("&"),
    );
}

/** Random JSON bodies: objects over the schema's keys with any values, or any JSON at all. */
function randomBody(keys: string[]) {
  const value = fc.jsonValue({ maxDepth: 4 });
  return fc.oneof(
    fc.dictionary(fc.constantFrom(...keys, "stray"), value, { maxKeys: keys.length + 1 }).map((o) => JSON.stringify(o)),
    value.map((v) => JSON.stringify(v) ?? "null"),
    fc.string({ unit: "binary", maxLength: 60 }).map((s) => JSON.stringify({ [keys[0] ?? "name"]: s })),
  );
}

const shapeKeys = (schema: z.ZodType | undefined): string[] => {
  const shape = (schema as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape ? Object.keys(shape) : [];
};

// --- the records ----------------------------------------------------------------------------------

/** The real id a path parameter takes, by the collection before it; the spare one for DELETE routes. */
function realId(path: string, param: string, method: string): string {
  const segments = path.split("/");
  const collection = segments[segments.indexOf(`:${param}`) - 1];
  const spare = method === "delete" && segments.indexOf(`:${param}`) === segments.length - 1;
  switch (collection) {
    case "workspaces":
      return ids.workspace;
    case "forms":
      return spare && path === "/forms/:id" ? ids.spareForm : ids.form;
    case "submissions":
      return spare ? ids.spareSubmission : ids.submission;
    case "webhooks":
      return spare ? ids.spareWebhook : ids.webhook;
    case "deliveries":
      return ids.delivery;
    case "links":
      return ids.link;
  }
  throw new Error(`${path}: no record for :${param}`);
}

const paramsOf = (path: string) => path.split("/").filter((s) => s.startsWith(":")).map((s) => s.slice(1));
const fill = (path: string, values: Record<string, string>) => path.replace(/:(\w+)/g, (_, name: string) => values[name]);
const realValues = (route: ApiRoute) => Object.fromEntries(paramsOf(route.path).map((p) => [p, realId(route.path, p, route.method)]));

before(async () => {
  receiver = await startReceiver();
  sys = await startTestSystem("fuzz", { WEBHOOK_ALLOW_PRIVATE_URLS: "true" });
  const ada = await createUserWithKey(sys, "fuzz@example.com");
  key = ada.key;
  ids.workspace = ada.workspace.id;
  const form = async () => {
    const res = await ada.api("POST", "/forms", { workspaceId: ada.workspace.id, name: "Fuzz", document });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    await sys.cli("form:publish", "--id", res.body.id);
    return res.body.id as string;
  };
  [ids.form, ids.spareForm] = [await form(), await form()];
  const webhook = async () => {
    const res = await ada.api("POST", "/webhooks", { formId: ids.form, url: receiver.url });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.id as string;
  };
  [ids.webhook, ids.spareWebhook] = [await webhook(), await webhook()];
  const respond = async () => {
    const res = await fetch(`${sys.url}/f/${ids.form}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ answers: { name: "Ada", tags: ["a"] }, completed: true }),
    });
    assert.equal(res.status, 200);
    return ((await res.json()) as { responseId: string }).responseId;
  };
  [ids.submission, ids.spareSubmission] = [await respond(), await respond()];
  const deliveries = await eventuallyPasses(
    () => ada.api("GET", `/webhooks/${ids.webhook}/deliveries`),
    (res) => res.status === 200 && res.body.items.length > 0,
  );
  ids.delivery = deliveries.body.items[0].id;
  const links = await ada.api("POST", `/forms/${ids.spareForm}/links`, { count: 1 });
  assert.equal(links.status, 201, JSON.stringify(links.body));
  ids.link = links.body.items[0].id;
});
after(async () => {
  await sys?.stop();
  await receiver?.close();
});

// --- the suite ------------------------------------------------------------------------------------

/**
 * A valid body for the routes whose body has required fields, so that an unknown id (not the body) decides
 * the answer; the others are sent without one.
 */
const requiredBodies: Record<string, object> = {
  "POST /webhooks/:id/recover": { since: "2026-01-01T00:00:00.000Z" },
};

describe("malformed input at the edge", () => {
  it("answers a malformed path id exactly as an unknown one, on every route", async () => {
    for (const route of routes) {
      const body = requiredBodies[routeName(route)];
      const withBody = body ? { headers: { "content-type": "application/json" }, body: JSON.stringify(body) } : {};
      for (const param of paramsOf(route.path)) {
        const values = realValues(route);
        const unknown = await send({ method: route.method.toUpperCase(), path: `/api/v1${fill(route.path, { ...values, [param]: "Unknown0000000Id" })}`, ...withBody, what: "unknown id" });
        assert.equal(unknown.status, 404, `${routeName(route)} :${param} unknown: ${unknown.text}`);
        for (const bad of malformedIds) {
          const answer = await send({ method: route.method.toUpperCase(), path: `/api/v1${fill(route.path, { ...values, [param]: bad })}`, ...withBody, what: "malformed id" });
          assert.deepEqual(answer, unknown, `${routeName(route)} :${param} = ${bad.slice(0, 20)}`);
        }
      }
    }
    for (const path of ["", "/definition"]) {
      const unknown = await send({ method: "GET", path: `/f/Unknown0000000Id${path}`, what: "unknown id" });
      for (const bad of malformedIds) assert.deepEqual(await send({ method: "GET", path: `/f/${bad}${path}`, what: "malformed id" }), unknown, `/f/${bad}${path}`);
    }
  });

  it("never answers 5xx, and always {\"error\"} in JSON, whatever arrives", async (t) => {
    const covered = new Map<string, number>();
    const probes: Probe[] = [];
    const add = (name: string, probe: Probe) => {
      probes.push(probe);
      covered.set(name, (covered.get(name) ?? 0) + 1);
    };

    for (const route of routes) {
      const name = routeName(route);
      const method = route.method.toUpperCase();
      const real = realValues(route);
      const realPath = `/api/v1${fill(route.path, real)}`;
      const queryKeys = shapeKeys(route.query);
      const bodyKeys = shapeKeys(route.body);

      for (const param of paramsOf(route.path)) {
        for (const bad of [...badEncodings, ...malformedIds]) add(name, { method, path: `/api/v1${fill(route.path, { ...real, [param]: bad })}`, what: `:${param}` });
      }
      for (const q of [...queryKeys, "stray"]) {
        for (const bad of badQueryValues) add(name, { method, path: `${realPath}?${q}=${bad}`, what: `query ${q}` });
        add(name, { method, path: `${realPath}?${q}=1&${q}=2`, what: `repeated ${q}` });
      }
      // fetch sends no body with a GET: those get the headers alone.
      for (const bad of badBodies(bodyKeys)) add(name, { method, path: realPath, body: method === "GET" ? undefined : bad.body, headers: bad.headers, what: bad.what });
      for (const headers of [{}, { authorization: "Bearer fk-%00\u00ff" }, { authorization: "Bearer " + "x".repeat(5000) }] as Record<string, string>[]) {
        add(name, { method, path: realPath, headers, withKey: false, what: "no or bad key" });
      }

      const randomPaths = fc.sample(fc.record(Object.fromEntries(paramsOf(route.path).map((p) => [p, randomPathValue]))), { seed, numRuns: randomRunsPerRoute });
      const randomQueries = fc.sample(randomQuery(queryKeys), { seed: seed + 1, numRuns: randomRunsPerRoute });
      const randomBodies = fc.sample(randomBody(bodyKeys), { seed: seed + 2, numRuns: randomRunsPerRoute });
      for (let i = 0; i < randomRunsPerRoute; i++) {
        // The real ids half the time, so random queries and bodies reach the handlers of found records.
        const path = `/api/v1${fill(route.path, i % 2 ? real : (randomPaths[i] as Record<string, string>))}`;
        add(name, {
          method,
          path: randomQueries[i] ? `${path}?${randomQueries[i]}` : path,
          body: method === "GET" ? undefined : randomBodies[i],
          headers: { "content-type": "application/json" },
          what: `random #${i}`,
        });
      }
    }

    // The hosted endpoints a respondent's browser uses: JSON ones, and the HTML page and its plain post.
    const hosted = (name: string, probe: Omit<Probe, "what"> & { what?: string }) => add(name, { what: name, ...probe });
    for (const [method, suffix, json] of [["GET", "", false], ["POST", "", false], ["GET", "/definition", true], ["POST", "/uploads", true], ["POST", "/responses", true]] as const) {
      const name = `${method} /f/:id${suffix}`;
      for (const bad of [...badEncodings, ...malformedIds]) hosted(name, { method, path: `/f/${bad}${suffix}`, json });
      for (const bad of badQueryValues) hosted(name, { method, path: `/f/${ids.form}${suffix}?utm_source=${bad}&name=${bad}`, json });
      for (const bad of badBodies(["answers", "version", "hidden", "responseId", "completed"])) {
        hosted(name, { method, path: `/f/${ids.form}${suffix}`, body: method === "GET" ? undefined : bad.body, headers: bad.headers, json });
      }
    }
    const respond = (what: string, body: string) =>
      hosted("POST /f/:id/responses", { method: "POST", path: `/f/${ids.form}/responses`, body, headers: { "content-type": "application/json" }, json: true, what });
    respond("answers 50 deep", JSON.stringify({ answers: { tags: JSON.parse(nested(50)) } }));
    respond("answers 500 deep", `{"answers":{"tags":${nested(500)}}}`);
    respond("answers 9 deep", `{"answers":{"tags":${nested(8)}}}`);
    respond("5000 answers", JSON.stringify({ answers: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`q${i}`, i])) }));
    respond("NUL answer", JSON.stringify({ answers: { name: "a\u0000b" } }));
    respond("NUL hidden", JSON.stringify({ answers: {}, hidden: { utm_source: "\u0000" } }));
    respond("lone surrogate answer", '{"answers":{"name":"\\udfff"},"completed":true}');
    respond("version beyond int32", JSON.stringify({ answers: {}, version: 2 ** 31 }));
    respond("version 1e300", '{"answers":{},"version":1e300}');
    respond("negative version", JSON.stringify({ answers: {}, version: -1 }));
    respond("fractional version", JSON.stringify({ answers: {}, version: 1.5 }));
    respond("NUL responseId", JSON.stringify({ answers: {}, responseId: "a\u0000" }));
    respond("long responseId", JSON.stringify({ answers: {}, responseId: "r".repeat(5000) }));
    respond("answers array", JSON.stringify({ answers: [] }));
    const plainPost = (what: string, body: string) =>
      hosted("POST /f/:id", { method: "POST", path: `/f/${ids.form}`, body, headers: { "content-type": "application/x-www-form-urlencoded" }, json: false, what });
    plainPost("5000 fields", Array.from({ length: 5000 }, (_, i) => `f${i}=${i}`).join("&"));
    plainPost("NUL field", "name=a%00b");
    plainPost("bad encoding field", "name=%E0%A4%A&tags=%ED%A0%80");
    plainPost("version beyond int32", "name=Ada&_version=99999999999");
    for (const [what, fileName, type] of [["NUL file name", "a\u0000b.txt", "text/plain"], ["escape in type", "a.txt", "text/plain\u001b"], ["long name", "n".repeat(3000), "text/plain"]]) {
      const form = new FormData();
      form.set("file", new Blob(["hello"], { type }), fileName);
      const encoded = new Response(form);
      const headers = { "content-type": encoded.headers.get("content-type")! };
      hosted("POST /f/:id/uploads", { method: "POST", path: `/f/${ids.form}/uploads`, body: new Uint8Array(await encoded.arrayBuffer()), headers, json: true, what });
    }
    for (let i = 0; i < 3; i++) hosted("POST /f/:id/uploads", { method: "POST", path: `/f/${ids.form}/uploads`, body: "--x\r\n", headers: { "content-type": "multipart/form-data; boundary=x" }, json: true });
    for (const [suffix, json] of [["/responses", true], ["/definition", true], ["", false]] as const) {
      for (const [i, formId] of fc.sample(randomPathValue, { seed: seed + 3, numRuns: randomRunsPerRoute }).entries()) {
        const body = fc.sample(randomBody(["answers", "version", "hidden", "completed", "responseId"]), { seed: seed + 4 + i, numRuns: 1 })[0];
        hosted(`${suffix === "/definition" ? "GET" : "POST"} /f/:id${suffix}`, {
          method: suffix === "/definition" ? "GET" : "POST",
          path: `/f/${i % 2 ? ids.form : formId}${suffix}`,
          body: suffix === "/definition" ? undefined : body,
          headers: { "content-type": suffix === "" ? "application/x-www-form-urlencoded" : "application/json" },
          json,
        });
      }
    }

    // The app's sign-up and sign-in: the CSRF cookie and header first, so requests reach the handlers.
    const session = await fetch(`${sys.url}/app/api/session`);
    const cookies = session.headers.getSetCookie().map((c) => c.split(";")[0]);
    const csrf = cookies.find((c) => /csrf/i.test(c.split("=")[0]))?.split("=")[1] ?? "";
    const app = { cookie: cookies.join("; "), "x-csrf-token": decodeURIComponent(csrf) };
    const wrongPassword = await send({ method: "POST", path: "/app/api/auth/signin", headers: { ...app, "content-type": "application/json" }, body: JSON.stringify({ email: "nobody@example.com", password: "not it at all" }), what: "sign-in" });
    assert.equal(wrongPassword.status, 401, "the fuzzed sign-in requests reach the handler");
    for (const path of ["/app/api/auth/signup", "/app/api/auth/signin"]) {
      const name = `POST ${path}`;
      for (const bad of badBodies(["email", "password", "name"])) add(name, { method: "POST", path, body: bad.body, headers: { ...app, ...bad.headers }, what: bad.what });
      for (const bad of badQueryValues.slice(0, 4)) add(name, { method: "POST", path: `${path}?x=${bad}`, body: "{}", headers: { ...app, "content-type": "application/json" }, what: "query" });
      for (const [i, body] of fc.sample(randomBody(["email", "password", "name"]), { seed: seed + 5, numRuns: randomRunsPerRoute }).entries()) {
        add(name, { method: "POST", path, body, headers: { ...app, "content-type": "application/json" }, what: `random #${i}` });
      }
    }

    await checkAll(probes);

    const summary = `fuzz seed ${seed}: ${tally.requests} requests, ${tally.serverErrors.length} answered 5xx, ${tally.badErrorBodies.length} errors not {"error"}`;
    t.diagnostic(summary);
    console.log(summary);
    assert.deepEqual(tally.serverErrors.slice(0, 20), [], `${tally.serverErrors.length} answers were 5xx`);
    assert.deepEqual(tally.badErrorBodies.slice(0, 20), [], `${tally.badErrorBodies.length} errors were not {"error": string}`);
    assert.ok(tally.requests >= 2000, `a few thousand requests (${tally.requests})`);

    // Every /api/v1 operation the served reference documents (paths without a server of their own) is
    // a route of the table, and each route was fuzzed.
    const reference = (await (await fetch(`${sys.url}/developers/openapi.json`)).json()) as { paths: Record<string, object> };
    const operations = Object.values(reference.paths)
      .filter((item) => !("servers" in item))
      .flatMap((item) => Object.keys(item).filter((k) => ["get", "post", "put", "patch", "delete"].includes(k)));
    t.diagnostic(`${routes.length} /api/v1 routes fuzzed; the reference documents ${operations.length} /api/v1 operations`);
    assert.equal(routes.length, operations.length);
    const apiCovered = routes.filter((r) => (covered.get(routeName(r)) ?? 0) >= randomRunsPerRoute);
    assert.equal(apiCovered.length, routes.length, "every /api/v1 route is fuzzed");
    for (const name of ["GET /f/:id", "POST /f/:id", "GET /f/:id/definition", "POST /f/:id/uploads", "POST /f/:id/responses", "POST /app/api/auth/signup", "POST /app/api/auth/signin"]) {
      assert.ok((covered.get(name) ?? 0) >= randomRunsPerRoute, `${name} is fuzzed`);
    }
  });

  it("answers 503 with Retry-After while a service is down, and recovers", async () => {
    const api = (path: string) => send({ method: "GET", path: `/api/v1${path}`, what: "service down" });
    await sys.system.kill("submissions", "SIGKILL");
    try {
      const res = await fetch(`${sys.url}/api/v1/forms/${ids.form}/submissions`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(res.status, 503);
      assert.ok(Number(res.headers.get("retry-after")) >= 1, "Retry-After in seconds");
      assert.deepEqual(await res.json(), { error: "service temporarily unavailable, try again shortly" });
    } finally {
      await sys.system.start("submissions");
    }
    assert.equal((await api(`/forms/${ids.form}/submissions`)).status, 200);
  });
});
