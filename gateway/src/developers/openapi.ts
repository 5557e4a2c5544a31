import { z } from "zod";
import { formDocumentSchema, formSettingsSchema } from "@formsvc/form-document";
import type { ApiRoute } from "../api/route-table.ts";
import { errorSchema, webhookPayloadSchema } from "../api/schemas.ts";

type JsonSchema = Record<string, unknown>;

const commonErrors: Record<number, string> = {
  400: "Invalid parameters or body; the message names the field",
  401: "The key is missing, malformed or deleted",
  403: "The change is refused for this workspace (for example `branding: false` without the entitlement)",
  404: "Not found or not the caller's (deliberately the same answer); also forms in the Trash",
  410: "The link has expired",
  409: "The change conflicts with the record's state",
  413: "The body is too large (1 MiB at most)",
  415: "The body is not JSON",
  429: "Rate limited: `Retry-After` gives the seconds to wait",
  500: "Something failed at our end; the body says no more",
};

const rateLimitHeaders = {
  "RateLimit-Limit": { description: "Requests allowed in the window", schema: { type: "integer" } },
  "RateLimit-Remaining": { description: "Requests left in the window", schema: { type: "integer" } },
  "RateLimit-Reset": { description: "Seconds until a request slot frees up", schema: { type: "integer" } },
};

const description = `
The REST API of the form service: the same reach over forms that a person has in the app.

## Authentication
Create a key in the app under **Settings → API keys** (or with the operator CLI,
\`npm run -s cli -- key:create --email you@example.com --name my-script\`). A key starts with \`fk-\`,
is shown once, and only its hash is stored. Send it on every request:

    curl -H "Authorization: Bearer fk-..." {base_url}/api/v1/users/me

A key acts as the person who created it and sees that person's workspaces and forms.
A missing, malformed or deleted key answers **401**; a deleted key is refused on its very next use.

## Errors
Every error is JSON \`{"error": "<message>"}\` with the matching status: 400 invalid input (the message
names the field), 401 key, 403 refused for this workspace, 404 not found **or not yours** (the same answer,
so existence is never confirmed; also forms in the Trash and any unknown path under \`/api/v1\`),
409 conflict, 413 body too large, 415 body not JSON, 429 rate limited, 500 our failure (no details).

## Limits
100 requests a minute per key and 300 a minute per client address, counted over a sliding minute.
Over either: **429** with \`Retry-After\` (whole seconds). Every answer carries \`RateLimit-Limit\`,
\`RateLimit-Remaining\` and \`RateLimit-Reset\`. Webhook pushes do not count.

## Pagination
List endpoints take \`page\` (from 1) and \`limit\` (1 to 500, default 50) and answer
\`{items, page, limit, hasMore}\`; \`hasMore\` is true while further pages exist. Out-of-range values are a 400.

## Webhooks
Each completed response is POSTed as JSON to the form's enabled webhooks (see **Webhooks** below), at least
once: use \`eventId\`, stable across retries, for idempotency. When the webhook has a secret, the header
\`X-Service-Signature\` holds \`base64(HMAC-SHA256(raw body bytes, secret))\`. Compute it over the raw bytes
before any JSON parsing:

    const expected = crypto.createHmac("sha256", secret).update(rawBody).digest("base64");
    const ok = crypto.timingSafeEqual(Buffer.from(expected), Buffer.from(req.headers["x-service-signature"]));

A 2xx answer ends the delivery, a 4xx fails it without retry; 5xx, refused connections and answers slower
than ten seconds are retried.

## Versioning
Every path is under the fixed prefix \`/api/v1\`; there is no version header. This page always describes what
the API serves today.
`;

/** JSON Schema of a zod schema, with named schemas collected into `components`. */
function jsonSchema(schema: z.ZodType, io: "input" | "output", components: Record<string, JsonSchema>): JsonSchema {
  const { $schema: _drop, $defs, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonSchema & {
    $defs?: Record<string, JsonSchema>;
  };
  for (const [name, def] of Object.entries($defs ?? {})) components[name] = def;
  return JSON.parse(JSON.stringify(rest).replaceAll('"#/$defs/', '"#/components/schemas/'));
}

function parameters(route: ApiRoute, components: Record<string, JsonSchema>): JsonSchema[] {
  const out: JsonSchema[] = [];
  for (const [where, schema] of [["path", route.params], ["query", route.query]] as const) {
    if (!schema) continue;
    const object = jsonSchema(schema, "input", components) as { properties: Record<string, JsonSchema>; required?: string[] };
    for (const [name, property] of Object.entries(object.properties)) {
      const { description: text, ...propertySchema } = property;
      out.push({ name, in: where, required: where === "path" || (object.required ?? []).includes(name), description: text, schema: propertySchema });
    }
  }
  return out;
}

function errorResponse(status: number): JsonSchema {
  return {
    description: commonErrors[status] ?? "Error",
    ...(status === 429 ? { headers: { "Retry-After": { description: "Seconds to wait", schema: { type: "integer" } } } } : {}),
    content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
  };
}

export function buildOpenApiDocument(routes: ApiRoute[], baseUrl: string): JsonSchema {
  const components: Record<string, JsonSchema> = {};
  jsonSchema(errorSchema, "output", components);
  components.FormDocument = jsonSchema(formDocumentSchema, "input", components);
  components.FormSettings = jsonSchema(formSettingsSchema, "output", components);

  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, "{$1}");
    const responses: Record<string, JsonSchema> = {
      [route.success.status]: {
        description: route.success.description,
        headers: rateLimitHeaders,
        ...(route.success.schema
          ? { content: { "application/json": { schema: jsonSchema(route.success.schema, "output", components) } } }
          : {}),
      },
    };
    for (const status of [...route.errors, 401, 429, 500].sort()) responses[status] = errorResponse(status);
    (paths[path] ??= {})[route.method] = {
      operationId: route.operationId,
      tags: [route.tag],
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      parameters: parameters(route, components),
      ...(route.body
        ? { requestBody: { required: true, content: { "application/json": { schema: jsonSchema(route.body, "input", components) } } } }
        : {}),
      responses,
    };
  }

  const payload = jsonSchema(webhookPayloadSchema, "output", components);
  return {
    openapi: "3.1.0",
    info: { title: "Form service API", version: "1", description },
    servers: [{ url: `${baseUrl}/api/v1` }],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: "Users" },
      { name: "Workspaces" },
      { name: "Forms" },
      { name: "Submissions" },
      { name: "Webhooks" },
    ],
    paths,
    webhooks: {
      FORM_RESPONSE: {
        post: {
          summary: "A response was completed",
          description:
            "Sent to every enabled webhook of the form. Headers: `Content-Type: application/json`, " +
            "`X-Service-Signature: base64(HMAC-SHA256(raw body, secret))` when the webhook has a secret, and the webhook's own headers.",
          parameters: [
            { name: "X-Service-Signature", in: "header", required: false, schema: { type: "string" }, description: "base64 HMAC-SHA256 of the raw body" },
          ],
          requestBody: { required: true, content: { "application/json": { schema: payload } } },
          responses: {
            "200": { description: "Any 2xx ends the delivery" },
            "400": { description: "Any 4xx fails the delivery without retry" },
            "500": { description: "5xx, refused connections and time-outs (10 s) are retried" },
          },
        },
      },
    },
    components: {
      schemas: components,
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", description: "An API key, `fk-...`" },
      },
    },
  };
}
