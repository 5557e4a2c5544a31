import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { gunzipSync, brotliDecompressSync } from "node:zlib";
import express from "express";
import { referenceDocument } from "./reference-document.ts";
import { developersRoutes } from "./routes.ts";

const document = referenceDocument("https://forms.example.org");
const app = express();
app.use("/developers", developersRoutes(document));
const server = app.listen(0, "127.0.0.1");
let base = "";
before(async () => {
  await new Promise((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());

/** Every `$ref` in `value`, with where it sits. */
function refsOf(value: unknown, at = "#"): [string, string][] {
  if (!value || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, inner]): [string, string][] =>
    key === "$ref" && typeof inner === "string" ? [[at, inner]] : refsOf(inner, `${at}/${key}`),
  );
}

describe("/developers", () => {
  it("serves a document whose every $ref resolves, without zod's integer bounds or a {base_url} placeholder", async () => {
    const res = await fetch(`${base}/developers/openapi.json`, { headers: { "accept-encoding": "br, gzip" } });
    assert.equal(res.headers.get("content-encoding"), "br");
    const served: { servers: { url: string }[]; info: { description: string } } = await res.json();
    assert.deepEqual(served, document);
    const refs = refsOf(served);
    assert.ok(refs.length > 50);
    for (const [at, ref] of refs) {
      const target = ref.slice(2).split("/").reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], served);
      assert.ok(target, `${at}: ${ref} does not resolve`);
    }
    const text = JSON.stringify(served);
    assert.doesNotMatch(text, /9007199254740991|\{base_url\}/);
    assert.equal(served.servers[0].url, "https://forms.example.org/api/v1");
    assert.match(served.info.description, /https:\/\/forms\.example\.org\/api\/v1\/users\/me/);
  });

  it("lists every status an operation can answer, with the error schema and the limiter's headers", () => {
    const paths = document.paths as Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: unknown; parameters: { in: string }[] }>>;
    const responses = (document.components as { responses: Record<string, { headers: Record<string, unknown>; content: unknown }> }).responses;
    for (const [path, operations] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (method === "servers") continue;
        const statuses = Object.keys(operation.responses).map(Number);
        const expected = [401, 429, 500, 503];
        if (operation.requestBody || operation.parameters.length > 0) expected.push(400);
        // /api/v1 reads a body on every operation; the hosted endpoints where they take one.
        if (operation.requestBody || !path.startsWith("/f/")) expected.push(413);
        if (operation.parameters.some((p) => p.in === "path")) expected.push(404);
        for (const status of expected) assert.ok(statuses.includes(status), `${method} ${path} lacks ${status}`);
      }
    }
    assert.ok(paths["/forms/{id}"].get.responses["413"], "getForm documents the 413 of a body over 1 MiB");
    assert.deepEqual(Object.keys(paths["/webhooks"].post.responses), ["200", "201", "400", "401", "404", "409", "413", "415", "422", "429", "500", "503"]);
    for (const status of ["429", "503"]) assert.ok(responses[status].headers["Retry-After"], `${status} documents Retry-After`);
    for (const header of ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy"]) assert.ok(responses["400"].headers[header]);
  });

  it("documents the Idempotency-Key header, 409 and 422 on every POST but a hosted form's steps before answering", () => {
    const paths = document.paths as Record<string, Record<string, { responses: Record<string, unknown>; parameters: { name: string; in: string }[] }>>;
    // A password's or a code's try, or a code mailed: a repeat is another try, with nothing stored to answer again.
    const stepsBeforeAnswering = ["/f/{formId}/password", "/f/{formId}/email", "/f/{formId}/email/confirm"];
    const posts = Object.entries(paths).flatMap(([path, operations]) => (operations.post && !stepsBeforeAnswering.includes(path) ? [[path, operations.post] as const] : []));
    for (const path of stepsBeforeAnswering) assert.ok(paths[path].post, `POST ${path} is documented`);
    assert.ok(posts.length >= 4);
    for (const [path, post] of posts) {
      assert.ok(post.parameters.some((p) => p.in === "header" && p.name === "Idempotency-Key"), `POST ${path} takes Idempotency-Key`);
      for (const status of ["409", "422"]) assert.ok(post.responses[status], `POST ${path} documents ${status}`);
    }
  });

  it("types forms, questions and answers instead of leaving them open", () => {
    const schemas = (document.components as { schemas: Record<string, any> }).schemas;
    assert.deepEqual(schemas.Form.properties.document, { $ref: "#/components/schemas/FormDocument" });
    assert.deepEqual(schemas.Form.properties.settings, { $ref: "#/components/schemas/FormSettings" });
    assert.ok(schemas.FormDocument.properties.blocks.items.oneOf.length >= 16, "blocks are a union by type");
    assert.ok(schemas.QuestionType.enum.includes("RESPONDENT_COUNTRY"));
    assert.ok(schemas.Answer.oneOf.every((answer: any) => Array.isArray(answer.properties.type.enum)));
    const webhook = (document.webhooks as any).FORM_RESPONSE.post;
    assert.deepEqual(
      webhook.parameters.map((p: { name: string }) => p.name),
      ["X-Service-Signature", "webhook-id", "webhook-timestamp", "webhook-signature"],
    );
  });

  it("keeps generators' classes apart and whole lists within their schema (issue 35)", () => {
    const paths = document.paths as Record<string, Record<string, { tags: string[] }>>;
    const restTags = new Set(Object.values(paths).flatMap((operations) => Object.values(operations).flatMap((o) => o.tags ?? [])));
    const eventTags = new Set(Object.values(document.webhooks as Record<string, { post: { tags: string[] } }>).flatMap((w) => w.post.tags));
    assert.deepEqual([...eventTags], ["Webhook events"]);
    assert.ok(!restTags.has("Webhook events"), "the webhook events share no tag with REST operations");
    const schemas = (document.components as { schemas: Record<string, any> }).schemas;
    // A form may have more columns than a page may hold: the questions come whole, and limit says how many.
    assert.equal(schemas.QuestionList.properties.limit.maximum, undefined);
    assert.equal(schemas.WebhookPage.properties.limit.maximum, 500);
  });

  it("serves Scalar without hosted-service buttons, compressed, cached for good under a versioned URL, with an ETag", async () => {
    const html = await (await fetch(`${base}/developers`)).text();
    for (const setting of ['"hideClientButton":true', '"showToolbar":"never"', '"showDeveloperTools":"never"', '"agent":{"disabled":true}', '"mcp":{"disabled":true}', '"telemetry":false']) {
      assert.ok(html.includes(setting), setting);
    }
    const src = /<script src="([^"]+\/standalone\.js)"/.exec(html)?.[1];
    assert.match(src ?? "", /^\/developers\/scalar\/\d+\.\d+\.\d+\/standalone\.js$/);

    const plain = await fetch(base + src, { headers: { "accept-encoding": "identity" } });
    const bytes = Buffer.from(await plain.arrayBuffer());
    assert.equal(plain.headers.get("cache-control"), "public, max-age=31536000, immutable");
    assert.match(plain.headers.get("content-type") ?? "", /javascript/);

    const [br, gz] = await Promise.all(
      ["br", "gzip"].map(async (encoding) => {
        // fetch would decompress; node:http-level bytes are what travel.
        const res = await fetch(base + src, { headers: { "accept-encoding": encoding } });
        return { res, etag: res.headers.get("etag"), length: Number(res.headers.get("content-length")) };
      }),
    );
    assert.equal(br.res.headers.get("content-encoding"), "br");
    assert.equal(gz.res.headers.get("content-encoding"), "gzip");
    assert.ok(br.length < bytes.length / 3, `brotli ${br.length} of ${bytes.length} bytes`);
    assert.ok(gz.length < bytes.length / 3, `gzip ${gz.length} of ${bytes.length} bytes`);
    assert.notEqual(br.etag, gz.etag);
    await Promise.all([br.res.arrayBuffer(), gz.res.arrayBuffer()]);

    const again = await fetch(base + src, { headers: { "accept-encoding": "br", "if-none-match": br.etag! } });
    assert.equal(again.status, 304);
    assert.equal(again.headers.get("cache-control"), "public, max-age=31536000, immutable");
    assert.equal((await fetch(`${base}/developers/scalar/0.0.1/standalone.js`)).status, 404);
  });
});
