import { isDeepStrictEqual } from "node:util";
import { z } from "zod";
import { errorSchema, formWebhookPayloadSchema, partialWebhookPayloadSchema, webhookPayloadSchema } from "@formsvc/api-records/schemas";
import { takesIdempotencyKey } from "../routes/api-door.ts";
import type { ApiRoute } from "../routes/route.ts";
import { eventTypeNames, formResponseEventType } from "@formsvc/platform/events.ts";
import { webhookRequestHeaders } from "@formsvc/platform/webhook-headers.ts";
import { hostedOperations, type HostedOperation } from "./hosted-operations.ts";
import { pageLanguages } from "../hosted/page-messages.ts";

type JsonSchema = Record<string, unknown>;

const errorDescriptions: Record<number, string> = {
  400: "Invalid JSON, parameters or body; the message names the field (`body.workspaceId: ...`)",
  401: "The key is missing, malformed or deleted",
  403: "The change is refused for this workspace (for example `branding: false` without the entitlement); on a hosted form, a response rule's refusal (its `code`: no usable single-use link, no password, no confirmed address, no valid captcha)",
  404: "Not found or not the caller's (deliberately the same answer); also forms in the Trash",
  409: "The change conflicts with the record's state, or a request with the same `Idempotency-Key` is still running",
  413: "The body is too large (over 1 MiB; /api/v1 reads a body sent with any method, so a GET with one can answer this too)",
  415: "The body is not JSON",
  422: "The `Idempotency-Key` was already used with a different request in the last 24 hours; nothing was done",
  429: "Rate limited: wait `Retry-After` seconds",
  500: "Something failed at our end; the body says no more",
  503: "A service behind the gateway is briefly unavailable: try again after `Retry-After` seconds",
};

/** Statuses every operation can answer: the key, the limits, and our own failures. */
const everyOperationErrors = [401, 429, 500, 503];

/** Headers the sliding-window limiter (`gateway/src/rate-limit/`) sets on every answer, the tighter of the address and key limits. */
const rateLimitHeaders: Record<string, JsonSchema> = {
  "RateLimit-Limit": { description: "Requests allowed in the window", schema: { type: "integer", examples: [100] } },
  "RateLimit-Remaining": { description: "Requests left in the window", schema: { type: "integer", examples: [99] } },
  "RateLimit-Reset": { description: "Seconds until a request slot frees up", schema: { type: "integer", examples: [60] } },
  "RateLimit-Policy": { description: "The limit and its window in seconds", schema: { type: "string", examples: ["100;w=60"] } },
};
const retryAfterHeader: JsonSchema = { description: "Whole seconds to wait before trying again", schema: { type: "integer", examples: [12] } };
const requestIdHeader: JsonSchema = {
  description: "The request's id (the caller's own `X-Request-Id`, else a new one); quote it when reporting a problem",
  schema: { type: "string" },
};

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });
const commonHeaders = Object.fromEntries([...Object.keys(rateLimitHeaders), "X-Request-Id"].map((name) => [name, headerRef(name)]));

const description = (publicUrl: string) => `
The REST API of the form service: the same reach over forms that a person has in the app.

## Authentication
Create a key in the app under **Settings → API keys** (or with the operator CLI,
\`npm run -s cli -- key:create --email you@example.com --name my-script\`). A key starts with \`fk-\`,
is shown once, and only its hash is stored. Send it on every request:

    curl -H "Authorization: Bearer fk-..." ${publicUrl}/api/v1/users/me

A key acts as the person who created it and sees that person's workspaces and forms.
A missing, malformed or deleted key answers **401**; a deleted key is refused on its very next use.

## Errors
Every error is JSON \`{"error": "<message>"}\` with the matching status: 400 invalid input (the message
names the field), 401 key, 403 refused for this workspace, 404 not found **or not yours** (the same answer,
so existence is never confirmed; also forms in the Trash and any unknown path under \`/api/v1\`),
409 conflict, 413 body too large (1 MiB), 415 body not JSON, 429 rate limited, 500 our failure (no details),
503 a service briefly unavailable (retry after \`Retry-After\` seconds).

## Limits
Requests a minute per key and per client address (100 and 300 unless the operator changed them), counted over
a sliding minute. Over either: **429** with \`Retry-After\` (whole seconds). Every answer carries
\`RateLimit-Limit\`, \`RateLimit-Remaining\`, \`RateLimit-Reset\` and \`RateLimit-Policy\` (\`100;w=60\`) for the
tighter of the two. Webhook pushes do not count.

## Pagination
List endpoints take \`page\` (from 1) and \`limit\` (1 to 500, default 50) and answer
\`{items, page, limit, hasMore}\`; \`hasMore\` is true while further pages exist. Out-of-range values are a 400.

## Hosted forms
The public endpoints under \`/f\` (no key) are what the hosted form page uses; they are documented under
**Hosted forms** for people who build their own front end: read a published form's definition, upload files,
and post answers.

Two response rules refuse a completion with **403** and a message saying why. A form with
\`settings.requireSingleUseLink\` takes saves only with a usable single-use link's token, \`?t=TOKEN\`; mint
links with \`POST /api/v1/forms/{id}/links\` (one or up to 1000 at once, optional \`expiresAt\`; each
token is shown once and completes one response). A form with \`settings.proofOfWork\` needs, with its
completion, \`captcha\`: the base64 payload of an ALTCHA solution of \`GET /f/{formId}/captcha\`'s challenge
(the \`altcha\` widget, served at \`/f/assets/altcha.js\`, makes it); each solution is good once.

A form may also ask first, before its questions: \`settings.password\` (post \`{password}\` to
\`POST /f/{formId}/password\`: its pass is the HttpOnly cookie \`hf_pass\`, two hours, ten tries a minute) and
\`settings.requireEmailVerification\` (\`POST /f/{formId}/email {email}\` mails a 6-digit code and answers
\`{verificationId}\`; \`POST /f/{formId}/email/confirm {verificationId, code}\` sets the cookie \`hf_email\`; a code
works 10 minutes and 5 tries, and each address completes one response). Saves without them are a 403. The confirmed
address is an extension on the submission record and the response payloads: \`verifiedEmail\`, present only for such
a form. A form with \`settings.captcha\` (Cloudflare Turnstile, hCaptcha or reCAPTCHA with the owner's keys; the
secret key is never answered, only \`secretHint\`) needs the provider widget's token as \`captcha\` with the
completion, which the server verifies with the provider.

Every refusal of these rules carries a stable **\`code\`** beside \`error\`: \`linkMissing\`, \`linkUnknown\`,
\`linkUsed\`, \`linkExpired\`, \`linkRevoked\`, \`passwordRequired\`, \`passwordWrong\`, \`emailRequired\`,
\`emailCodeWrong\`, \`emailCodeExpired\`, \`emailCodeAttempts\`, \`emailUsed\`, \`captchaMissing\`, \`captchaInvalid\`,
\`captchaExpired\`, \`captchaReplayed\` (403) and \`captchaUnavailable\` (503): show your own words for each.

## Languages
A form's \`settings.language\` (a BCP 47 tag, default \`en\`) is the language of its own texts and of its hosted
page; \`settings.languages\` adds further languages, each with a translation of every owner text by where it is
(\`title\`, \`<blockId>.question\`, \`<blockId>.options.<optionId>\`, \`thankYou.title\`, ...: ids, never texts, so
answers in every language are filed under the same keys). Publishing is refused (409) while a translation misses a
text; the error names each (\`cannot publish: the de translation misses a text: b_meal.options.o_meat ("Meat")\`).
The page comes in \`?lang=<tag>\` when the form offers it, else in the best match of the browser's
\`Accept-Language\` among the form's languages, else in \`settings.language\`, and offers a switch. Its own texts
(buttons, validation messages, the thank-you and closed defaults) come in ${pageLanguages.join(", ")}; any other
language gets the closest of them, else English; ar and he pages run right to left.

Each submission (\`language\`) and each \`FORM_RESPONSE\` and \`FORM_RESPONSE_PARTIAL\` payload (\`data.language\`)
carries the language the respondent answered in; labels and option texts stay in the form's own language. It is
null for responses stored before languages were recorded. A page you build yourself names it with \`language\` in
the body of \`POST /f/{formId}/responses\` (one the form does not offer is recorded as the form's own).

## Webhooks
Each completed response is POSTed as JSON to the form's enabled webhooks (see **Webhooks** below), at least
once: use \`eventId\` (also the \`webhook-id\` header), stable across retries, for idempotency. When the webhook
has a secret, two signatures come with it, both over the raw body bytes (verify before any JSON parsing):
\`X-Service-Signature: base64(HMAC-SHA256(raw body, secret))\` and the Standard Webhooks
\`webhook-signature\`. The TypeScript SDK's \`verifyWebhook(rawBody, headers, secret)\` checks both:

    const expected = crypto.createHmac("sha256", secret).update(rawBody).digest("base64");
    const ok = crypto.timingSafeEqual(Buffer.from(expected), Buffer.from(req.headers["x-service-signature"]));

A 2xx answer ends the delivery, a 3xx or 4xx fails it without retry; 5xx, refused connections and answers slower
than ten seconds are retried.

Deliveries to one receiver (scheme, host and port) run up to 4 at a time; while it answers 2xx within 250 ms
each 2xx allows one more, up to 32 (the operator's \`WEBHOOK_MAX_ORIGIN_CONCURRENCY\`), and any other answer
brings it back to 4. So a receiver sees concurrent POSTs, in no guaranteed order: order by \`submittedAt\`.

## Integrations (extensions of the spec)
For automation tools (n8n, Zapier, Make) that subscribe a webhook when a workflow is switched on and delete it
when it is switched off: \`POST /webhooks\` takes \`subscriber\` (\`"n8n"\`, \`"zapier"\`); the same \`formId\`,
\`url\` and \`subscriber\` again answer the existing webhook (200) instead of a duplicate. A subscriber's webhook
is deleted, not only disabled, when its receiver answers 410 Gone, and when the API key that subscribed it is
deleted. \`GET /forms/{id}/sample-events\` answers the bodies of the form's latest events in exactly the webhook
body's shape (one made-up body with \`"test": true\` while there is none), to map fields before the first
response. A webhook's \`format\` (\`slack\`, \`discord\`) sends a chat message (Slack Block Kit, a Discord embed) to
their incoming-webhook URLs instead of the JSON event. An operator may let webhooks reach receivers on a private
network with \`WEBHOOK_ALLOWED_CIDRS\`.

## Audit log
\`GET /workspaces/{id}/audit-events\` (beyond the spec) lists what happened in a workspace, newest first: each change
of its forms, webhooks, members and plan, its members' API keys and sign-ins (failed ones too), and response
exports, with when, who (\`actor\`: a user, an API key with its person, or the system), the client's address, the
action and record, and the fields set (\`changes\`; values only for harmless ones, never a secret, password,
token, key or answer). Only the workspace's owner and admins read it; anyone else gets 404. Page it with
\`cursor\`; filter by \`since\`, \`until\`, \`action\` (\`form.publish\`, or \`form.*\`) and \`actor\`.

## Insights
\`GET /forms/{id}/insights?since=&until=\` (beyond the spec) is the form's funnel over whole UTC days:
\`{views, visitors, starts, completions, completionRate, medianSecondsToComplete, questions: [{key, label, shown,
answered, dropOffs}], days: [{date, views, starts, completions}]}\`. A view is a load of the hosted page by a browser
(robots and \`Sec-Purpose: prefetch\` left out), a start a first answer, a completion a response completed on the
hosted page; per question, how often respondents who started were shown it (questions the rules skip are not),
answered it, and stopped at it without completing. Counted as respondents come, so it answers as fast at any
number of responses; visitors are counted without cookies or kept addresses, by a hash with a secret salt of the
day that is deleted with the day. A form that is not yours is a 404, like every form route.

## Versioning
Every path is under the fixed prefix \`/api/v1\`; there is no version header. This page always describes what
the API serves today.
`;

const tags = [
  { name: "Users", description: "The person an API key belongs to." },
  { name: "Workspaces", description: "Workspaces group forms; a key sees every workspace its person is a member of." },
  { name: "Forms", description: "Forms, their documents (version 1) and settings, and the columns of their responses." },
  { name: "Submissions", description: "Responses to a form, complete or partial, with signed links to their files." },
  { name: "Webhooks", description: "Where completed responses are pushed, the receipt of each push and every attempt." },
  {
    name: "Webhook events",
    description:
      "What the service POSTs to a webhook, one entry per event type (the document's `webhooks`). A tag of their own, so generators " +
      "that make one class per tag (OpenAPI Generator's Java client) do not write the REST operations' class twice.",
  },
  {
    name: "Hosted forms",
    description: "The public, key-less endpoints of a published form under `/f`, for building your own front end.",
  },
];

/** Zod's integer bounds (±2^53-1) say nothing; a date-time's format says what its long pattern does; and the rest below. */
function tidySchema({ jsonSchema }: { jsonSchema: JsonSchema }): void {
  if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
  if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
  if (jsonSchema.format === "date-time") delete jsonSchema.pattern;
  // Zod's number literals (a scale's lowest step, 0 or 1) are `number`; whole ones are integers, which generators
  // make an enum of (OpenAPI Generator's Java client writes a number enum that does not compile).
  if (jsonSchema.type === "number" && Array.isArray(jsonSchema.enum) && jsonSchema.enum.every(Number.isInteger)) jsonSchema.type = "integer";
  mergePlainTypeUnion(jsonSchema);
}

/** The keywords that constrain only values of one type, so schemas of different types can share one object. */
const keywordsOfOneType: Record<string, string[]> = {
  string: ["minLength", "maxLength", "pattern", "format"],
  number: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"],
  integer: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"],
  array: ["items", "minItems", "maxItems", "uniqueItems"],
  object: ["properties", "required", "additionalProperties", "propertyNames", "minProperties", "maxProperties"],
  boolean: [],
  null: [],
};

/**
 * An anyOf or oneOf of plain schemas of different types (`string[] | null`, `string | number | string[]`) said JSON
 * Schema's own way, as one schema with a type array: the same values (of different types, any of them is one of
 * them), and OpenAPI Generator's Java client compiles it (an array inside anyOf or oneOf becomes
 * `List<String>.class` there, which does not: OpenAPITools/openapi-generator#17745).
 */
function mergePlainTypeUnion(schema: JsonSchema): void {
  const union = Array.isArray(schema.anyOf) ? "anyOf" : "oneOf";
  const branches = schema[union] as JsonSchema[] | undefined;
  if (!Array.isArray(branches) || branches.length < 2) return;
  const types: string[] = [];
  const merged: JsonSchema = {};
  for (const branch of branches) {
    const type = branch.type;
    if (typeof type !== "string" || !(type in keywordsOfOneType) || types.includes(type)) return;
    // number and integer share their keywords, so only one of them can be merged
    if ((type === "number" && types.includes("integer")) || (type === "integer" && types.includes("number"))) return;
    for (const [keyword, value] of Object.entries(branch)) {
      if (keyword === "type") continue;
      if (!keywordsOfOneType[type].includes(keyword)) return;
      merged[keyword] = value;
    }
    types.push(type);
  }
  delete schema[union];
  Object.assign(schema, merged, { type: types });
}

type ZodJsonSchema = JsonSchema & { $defs?: Record<string, JsonSchema> };

/**
 * Zod's JSON Schema of `schema`. Zod names a recursive part it was given no name for `__schema<n>`, counting
 * afresh in every call; `z.json()`, the only one we use, becomes `JsonValue`, stated without recursion (any
 * JSON value) because generated TypeScript cannot name a type through itself.
 */
function jsonSchemaOf(schema: z.ZodType, io: "input" | "output"): ZodJsonSchema {
  const generated = z.toJSONSchema(schema, { io, unrepresentable: "any", override: tidySchema }) as ZodJsonSchema;
  let text = JSON.stringify(generated);
  for (const [name, def] of Object.entries(generated.$defs ?? {})) {
    if (!name.startsWith("__schema")) continue;
    if (JSON.stringify(def) !== JSON.stringify(zodJsonValue).replaceAll('"#/$defs/__schema0"', `"#/$defs/${name}"`)) {
      throw new Error(`give the recursive schema ${name} a name with .meta({ id })`);
    }
    text = text.replaceAll(`"#/$defs/${name}"`, '"#/$defs/JsonValue"');
  }
  const out = JSON.parse(text) as ZodJsonSchema;
  for (const name of Object.keys(out.$defs ?? {})) {
    if (name.startsWith("__schema")) {
      delete out.$defs![name];
      out.$defs!.JsonValue = { description: "Any JSON value" };
    }
  }
  return out;
}
const zodJsonValue = (z.toJSONSchema(z.object({ value: z.json() }), { override: tidySchema }) as ZodJsonSchema).$defs!.__schema0;

/** JSON Schemas of zod schemas, the named ones (`.meta({ id })`) collected once into `components.schemas`. */
class SchemaComponents {
  readonly schemas: Record<string, JsonSchema> = {};

  /** `schema` for requests (`input`) or answers (`output`); its named parts become references. */
  of(schema: z.ZodType, io: "input" | "output"): JsonSchema {
    const { $schema: _dialect, $defs, ...root } = jsonSchemaOf(schema, io);
    for (const [name, def] of Object.entries($defs ?? {})) this.add(name, componentRefs(def));
    return componentRefs(root);
  }

  private add(name: string, schema: JsonSchema): void {
    const known = this.schemas[name];
    // One name, one shape: a schema whose input and output differ needs two names.
    if (known && !isDeepStrictEqual(known, schema)) throw new Error(`schema ${name} differs between its uses`);
    this.schemas[name] = schema;
  }
}

/** Zod refers to named schemas as `#/$defs/<name>`; in the document they live under components. */
function componentRefs(schema: JsonSchema): JsonSchema {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/$defs/', '"#/components/schemas/'));
}

function parameters(route: Pick<ApiRoute, "params" | "query">, schemas: SchemaComponents): JsonSchema[] {
  const out: JsonSchema[] = [];
  for (const [where, schema] of [["path", route.params], ["query", route.query]] as const) {
    if (!schema) continue;
    const object = schemas.of(schema, "input") as { properties: Record<string, JsonSchema>; required?: string[] };
    for (const [name, property] of Object.entries(object.properties)) {
      const { description: text, ...propertySchema } = property;
      out.push({ name, in: where, required: where === "path" || (object.required ?? []).includes(name), description: text, schema: propertySchema });
    }
  }
  return out;
}

/** The header of operations that take an Idempotency-Key, which may then answer 409 and 422. */
const idempotencyKeyParameter: JsonSchema = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "A unique value per operation (a UUID), so a request can be retried safely: a repeat with the same key and body within " +
    "24 hours answers the first answer (status and body, with `Idempotent-Replayed: true`) without doing the work again, even " +
    "after a time-out or a server restart; the same key with another body is a 422; a repeat while the first is still running " +
    "is a 409 (repeat it shortly). Keys are scoped per API key; a respondent's per form and client address, so another client " +
    "that learnt a key gets an answer of its own; an upload's repeat is the same bytes, name and type. An error answer is not kept: " +
    "a repeat after one runs the request again.",
  schema: { type: "string", pattern: "^[\\x21-\\x7E]{1,255}$", examples: ["5f1c9a36-2b7e-4d0a-9c8e-1f2a3b4c5d6e"] },
};

/** Whether an operation takes an Idempotency-Key: every POST of /api/v1, and the hosted ones marked so. */
function isIdempotent(route: ApiRoute | HostedOperation): boolean {
  return "public" in route ? route.idempotent === true : takesIdempotencyKey(route);
}

/** Every status an operation can answer besides success: its own, the ones its inputs imply, and the common ones. */
function errorStatuses(route: (ApiRoute | HostedOperation) & Pick<ApiRoute, "query">, bodyType: string): number[] {
  const statuses = new Set([...route.errors, ...everyOperationErrors]);
  if (isIdempotent(route)) [409, 422].forEach((status) => statuses.add(status));
  if (route.params || route.query || route.body) statuses.add(400);
  // /api/v1 reads a JSON body on every operation (api-door.ts), one that takes none too.
  if (route.body || !("public" in route)) statuses.add(413);
  if (route.body && bodyType === "application/json") statuses.add(415);
  if (route.params) statuses.add(404);
  return [...statuses].sort((a, b) => a - b);
}

function errorResponse(status: number): JsonSchema {
  return { $ref: `#/components/responses/${status}` };
}

function errorResponses(): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const [status, text] of Object.entries(errorDescriptions)) {
    const waits = status === "429" || status === "503";
    out[status] = {
      description: text,
      headers: { ...commonHeaders, ...(waits ? { "Retry-After": headerRef("Retry-After") } : {}) },
      content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
    };
  }
  return out;
}

function successResponse(success: ApiRoute["success"], schemas: SchemaComponents): JsonSchema {
  return {
    description: success.description,
    headers: commonHeaders,
    ...(success.schema ? { content: { "application/json": { schema: schemas.of(success.schema, "output") } } } : {}),
  };
}

function operation(route: ApiRoute | HostedOperation, schemas: SchemaComponents): JsonSchema {
  const bodyType = ("bodyType" in route && route.bodyType) || "application/json";
  const responses: Record<string, JsonSchema> = { [route.success.status]: successResponse(route.success, schemas) };
  const also = "also" in route.success ? route.success.also : undefined;
  if (also) responses[also.status] = successResponse({ ...route.success, ...also }, schemas);
  for (const status of errorStatuses(route, bodyType)) responses[status] = errorResponse(status);
  return {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    ...("public" in route ? { security: [] } : {}),
    parameters: [...parameters(route, schemas), ...(isIdempotent(route) ? [idempotencyKeyParameter] : [])],
    ...(route.body ? { requestBody: { required: true, content: { [bodyType]: { schema: schemas.of(route.body, "input") } } } } : {}),
    responses,
  };
}

const openApiPath = (path: string) => path.replace(/:(\w+)/g, "{$1}");

function webhooks(schemas: SchemaComponents): JsonSchema {
  const header = (name: string, text: string, required: boolean, example: string) => ({
    name,
    in: "header",
    required,
    description: text,
    schema: { type: "string", examples: [example] },
  });
  // One entry per event type a webhook may receive (its `eventTypes`); all are sent and signed alike.
  const types = [
    [formResponseEventType, "formResponseWebhook", "A response was completed", webhookPayloadSchema],
    [eventTypeNames.formResponsePartial, "formResponsePartialWebhook", "A respondent saved a partial response on reaching another page (at most one per page change)", partialWebhookPayloadSchema],
    [eventTypeNames.formPublished, "formPublishedWebhook", "The form was published (or reopened)", formWebhookPayloadSchema],
    [eventTypeNames.formClosed, "formClosedWebhook", "The form was closed", formWebhookPayloadSchema],
    [eventTypeNames.formDeleted, "formDeletedWebhook", "The form was moved to the Trash", formWebhookPayloadSchema],
  ] as const;
  const operation = (operationId: string, summary: string, payload: z.ZodType) => ({
      post: {
        operationId,
        tags: ["Webhook events"],
        summary,
        description:
          "POSTed to every enabled webhook of the form whose `eventTypes` include it, at least once, with `Content-Type: application/json`, " +
          "`User-Agent`, the signature headers below and the webhook's own headers. Both signatures are over the exact " +
          "raw body bytes: verify them before parsing the JSON, and reject a `webhook-timestamp` more than five minutes " +
          "away from your clock. Without a secret, neither signature is sent (`webhook-id` and `webhook-timestamp` still are). " +
          "A test event (the test endpoint, the app) has the same shape with `\"test\": true`.",
        parameters: [
          header(
            webhookRequestHeaders.serviceSignature,
            "`base64(HMAC-SHA256(raw body, key))`; the key is the webhook secret's UTF-8 bytes, exactly as the secret was set. Sent when the webhook has a secret.",
            false,
            "k3N0bQ5a2u1dJ5m8mF0b1nq0sZ3w9N2ZC7cQ1x4vP8A=",
          ),
          header(webhookRequestHeaders.id, "Standard Webhooks: the event's id, the same as the body's `eventId` on every attempt.", true, "evt_3x9Qm2Lr8TzKcV1a"),
          header(webhookRequestHeaders.timestamp, "Standard Webhooks: this attempt's time in Unix seconds.", true, "1795000000"),
          header(
            webhookRequestHeaders.signature,
            "Standard Webhooks: `v1,` + `base64(HMAC-SHA256(\"<webhook-id>.<webhook-timestamp>.<raw body>\", key))`. " +
              "For a secret of the form `whsec_<base64>` the key is the bytes that base64 decodes to (what the standardwebhooks " +
              "and Svix libraries expect); for any other secret it is the secret's UTF-8 bytes. Sent when the webhook has a secret. " +
              "For 24 hours after a secret rotation it lists two signatures, space-separated: the new secret's, then the previous one's.",
            false,
            "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
          ),
        ],
        requestBody: { required: true, content: { "application/json": { schema: schemas.of(payload, "output") } } },
        responses: {
          "200": { description: "Any 2xx ends the delivery" },
          "400": { description: "Any 3xx or 4xx but 408, 410 and 429 fails the delivery without retry" },
          "410": { description: "Fails the delivery and disables the webhook at once (a subscriber's webhook is deleted: extension)" },
          "429": { description: "Retried on the schedule, no sooner than `Retry-After` (seconds or an HTTP date; 408 likewise)" },
          "500": { description: "5xx, refused connections and time-outs (10 s) are retried on the schedule" },
        },
      },
  });
  return Object.fromEntries(types.map(([type, operationId, summary, payload]) => [type, operation(operationId, summary, payload)]));
}

/**
 * The OpenAPI 3.1 document of the REST API (from the route table), the hosted-form endpoints and the
 * webhook, as served at `/developers/openapi.json`; the SDK's types are generated from it.
 */
export function buildOpenApiDocument(routes: ApiRoute[], publicUrl: string): JsonSchema {
  const schemas = new SchemaComponents();
  schemas.of(errorSchema, "output");

  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) (paths[openApiPath(route.path)] ??= {})[route.method] = operation(route, schemas);
  for (const route of hostedOperations) {
    const path = (paths[openApiPath(route.path)] ??= { servers: [{ url: publicUrl, description: "Public form endpoints, outside /api/v1" }] });
    path[route.method] = operation(route, schemas);
  }

  return {
    openapi: "3.1.0",
    info: { title: "Form service API", version: "1", description: description(publicUrl) },
    servers: [{ url: `${publicUrl}/api/v1`, description: "This installation" }],
    security: [{ bearerAuth: [] }],
    tags,
    paths,
    webhooks: webhooks(schemas),
    components: {
      schemas: schemas.schemas,
      responses: errorResponses(),
      headers: { ...rateLimitHeaders, "Retry-After": retryAfterHeader, "X-Request-Id": requestIdHeader },
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", description: "An API key, `fk-...`" },
      },
    },
  };
}
