import type { Client } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { z } from "zod";
import { instant } from "./instant.ts";
import { attemptJson, deliveryJson, webhookJson } from "@formsvc/api-records";
import { attemptSchema, deliverySchema, formWebhookPayloadSchema, partialWebhookPayloadSchema, webhookPayloadSchema, webhookSchema } from "@formsvc/api-records/schemas";
import { defaultSampleEvents, eventTypes, formResponseEventType, maxSampleEvents } from "@formsvc/platform/events.ts";
import { webhookFormats } from "@formsvc/platform/webhook-headers.ts";
import { maxPageSize } from "@formsvc/platform/page-size.ts";
import { DeliveryStatus, type DeliveryService } from "@formsvc/proto/delivery/v1/delivery_pb.js";
import type { WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { appPage, cursorPagingQuerySchema, envelope, envelopeOf, items, pagingQuerySchema, wholeList } from "./paging.ts";
import { defineRoute, idParamsSchema, noQuery, recordIdSchema, Reply } from "./route.ts";

const url = z.string().min(1).max(2000).describe("http or https URL, without credentials");
const webhookSecretSchema = z
  .string()
  .max(256)
  .describe(
    "Signs each body (X-Service-Signature and webhook-signature). When none is given at creation, a `whsec_` secret is generated. " +
      "The creation's answer shows it whole; every other answer shows it masked (`whsec_…` and its last 4 characters). " +
      "A `whsec_` secret must be padded standard base64 of 24 to 64 bytes, so Standard Webhooks libraries can decode it.",
  );
const webhookHeadersSchema = z
  .record(z.string().min(1).max(100), z.string().max(1000))
  .describe("Sent with every request; content type, host and signature headers are reserved");

const webhookEventTypesSchema = z
  .array(z.string().max(64))
  .min(1)
  .max(eventTypes.length)
  .describe(`The events it receives, at least one of ${eventTypes.join(", ")} (each payload is under \`webhooks\`)`);

const webhookFormatSchema = z
  .enum(webhookFormats)
  .describe(
    "Extension: `standard` (default) sends the JSON event; `slack` and `discord` send a chat message made from it (Slack Block Kit, a " +
      "Discord embed: the form's name, the answers by label with option texts, files as links, a link to the response in the app) for " +
      "their incoming-webhook URLs",
  );
const createWebhookBodySchema = z.strictObject({
  formId: z.string().min(1).describe("The form whose events are pushed"),
  url,
  secret: webhookSecretSchema.optional(),
  headers: webhookHeadersSchema.optional(),
  eventTypes: webhookEventTypesSchema.optional().describe("Default `[\"FORM_RESPONSE\"]`: completed responses"),
  enabled: z.boolean().optional().describe("Default true"),
  format: webhookFormatSchema.optional(),
  subscriber: z
    .string()
    .max(40)
    .optional()
    .describe(
      "Extension: the automation tool subscribing (`n8n`, `zapier`; lowercase letters, digits, `.`, `_`, `-`). A POST with the same " +
        "`formId`, `url` and `subscriber` as an existing webhook answers that webhook (200, its secret masked) instead of making another. " +
        "A subscriber's webhook is deleted, not disabled, when its receiver answers 410 Gone, and when the API key that subscribed it is deleted.",
    ),
});
const updateWebhookBodySchema = z.strictObject({
  url: url.optional(),
  secret: webhookSecretSchema.nullable().optional().describe("null or an empty string removes the secret"),
  headers: webhookHeadersSchema.optional().describe("Replaces every header"),
  eventTypes: webhookEventTypesSchema.optional().describe("Replaces the event types"),
  enabled: z.boolean().optional().describe("true enables a disabled webhook again (clearing disabledReason)"),
  format: webhookFormatSchema.optional(),
});
const listWebhooksQuerySchema = cursorPagingQuerySchema.extend({ formId: recordIdSchema.describe("The form (required)") });
const deliveryParamsSchema = idParamsSchema.extend({ did: z.string().min(1).describe("Delivery id") });
const deliveryStatuses = { pending: DeliveryStatus.PENDING, retrying: DeliveryStatus.RETRYING, succeeded: DeliveryStatus.SUCCEEDED, failed: DeliveryStatus.FAILED };
const listDeliveriesQuerySchema = cursorPagingQuerySchema.extend({
  status: deliverySchema.shape.status.optional().describe("Only receipts in this status (keep it on every page of a cursor walk)"),
});
const recoverBodySchema = z
  .strictObject({
    since: instant("failed deliveries created at or after it are sent again"),
    until: instant("and before it (default: now)").optional(),
  })
  .refine((body) => !body.until || body.until > body.since, { message: "must be after since", path: ["until"] });
const recoveredSchema = z
  .object({ recovered: z.number().int().describe("How many failed deliveries are due again") })
  .meta({ id: "RecoveredDeliveries", examples: [{ recovered: 3 }] });

const sampleEventsQuerySchema = z.object({
  eventType: z
    .enum(eventTypes as [string, ...string[]])
    .default(formResponseEventType)
    .describe(`The event type, default ${formResponseEventType}`),
  limit: z.coerce.number().int().min(1).max(maxSampleEvents).default(defaultSampleEvents).describe(`How many, 1 to ${maxSampleEvents}`),
});
const sampleEventListSchema = z
  .object({ items: z.array(z.union([webhookPayloadSchema, partialWebhookPayloadSchema, formWebhookPayloadSchema])).describe("Newest first") })
  .meta({ id: "SampleEventList" });

/** The app's bodies: the URL as typed into its field, trimmed, and named when missing; the form is in the path. */
const appUrl = z.string().trim().min(1, "is required").max(2000);
const appCreateWebhookBodySchema = createWebhookBodySchema.omit({ formId: true, subscriber: true }).extend({ url: appUrl });
const appUpdateWebhookBodySchema = updateWebhookBodySchema.extend({ url: appUrl.optional() });

export function webhookRoutes(webhooks: Client<typeof WebhooksService>, delivery: Client<typeof DeliveryService>) {
  /** The app has a form's webhooks under the form. */
  const underTheForm = { path: "/forms/:id/webhooks", params: idParamsSchema };
  return [
    defineRoute({
      method: "get",
      path: "/webhooks",
      query: listWebhooksQuerySchema,
      success: { status: 200, description: "A page of webhooks", schema: envelopeOf(webhookSchema, "WebhookPage") },
      handle: ({ query, asUser }) => webhooks.listWebhooks({ formId: query.formId, page: query.page, limit: query.limit, cursor: query.cursor }, asUser),
      api: {
        operationId: "listWebhooks",
        tag: "Webhooks",
        summary: "A form's webhooks",
        description: "Every webhook of one form (`formId` is required).",
        errors: [404],
        answer: (page, { query }) => envelope(page.webhooks.map(webhookJson), query, page),
      },
      // All of them at once.
      app: {
        ...underTheForm,
        query: noQuery,
        input: ({ params }) => ({ query: { formId: params.id, page: 1, limit: maxPageSize } }),
        answer: (page) => items(page.webhooks.map(webhookJson)),
      },
    }),
    defineRoute({
      method: "post",
      path: "/webhooks",
      body: createWebhookBodySchema,
      success: {
        status: 201,
        description: "The created webhook",
        schema: webhookSchema,
        also: { status: 200, description: "The subscriber's existing webhook of this form and url (its secret masked)" },
      },
      handle: async ({ body, asUser, apiKeyId }) => {
        const { webhook, existing } = await webhooks.createWebhook(
          {
            formId: body.formId,
            url: body.url,
            secret: body.secret ?? "",
            headers: body.headers ?? {},
            eventTypes: body.eventTypes ?? [],
            enabled: body.enabled,
            subscriber: body.subscriber ?? "",
            format: body.format ?? "",
            apiKeyId,
          },
          asUser,
        );
        return existing ? new Reply(200, webhookJson(webhook!)) : webhookJson(webhook!);
      },
      api: {
        operationId: "createWebhook",
        tag: "Webhooks",
        summary: "Add a webhook to a form",
        description: "Every event of the form of one of its `eventTypes` (by default each completed response) is POSTed to `url` while the webhook is enabled.",
        errors: [404, 409],
      },
      app: { ...underTheForm, body: appCreateWebhookBodySchema, input: ({ params }) => ({ body: { formId: params.id } }) },
    }),
    defineRoute({
      method: "get",
      path: "/webhooks/:id",
      params: idParamsSchema,
      success: { status: 200, description: "The webhook", schema: webhookSchema },
      handle: async ({ params, asUser }) => webhookJson((await webhooks.getWebhook({ id: params.id }, asUser)).webhook!),
      api: {
        operationId: "getWebhook",
        tag: "Webhooks",
        summary: "One webhook",
        description: "The webhook with its URL, secret, headers and whether it is enabled.",
        errors: [],
      },
    }),
    defineRoute({
      method: "patch",
      path: "/webhooks/:id",
      params: idParamsSchema,
      body: updateWebhookBodySchema,
      success: { status: 200, description: "The updated webhook", schema: webhookSchema },
      handle: async ({ params, body, asUser }) =>
        webhookJson(
          (
            await webhooks.updateWebhook(
              {
                id: params.id,
                url: body.url,
                secret: body.secret === null ? "" : body.secret,
                headers: body.headers ? { values: body.headers } : undefined,
                eventTypes: body.eventTypes ? { values: body.eventTypes } : undefined,
                enabled: body.enabled,
                format: body.format,
              },
              asUser,
            )
          ).webhook!,
        ),
      api: {
        operationId: "updateWebhook",
        tag: "Webhooks",
        summary: "Change a webhook's url, secret, headers, event types or enabled",
        description:
          "Only the given properties change; `headers` replaces every header, `eventTypes` the event types, and a null or empty `secret` removes the secret.",
        errors: [],
      },
      app: { body: appUpdateWebhookBodySchema },
    }),
    defineRoute({
      method: "delete",
      path: "/webhooks/:id",
      params: idParamsSchema,
      success: { status: 204, description: "Removed" },
      handle: async ({ params, asUser }) => {
        await webhooks.deleteWebhook({ id: params.id }, asUser);
      },
      api: {
        operationId: "deleteWebhook",
        tag: "Webhooks",
        summary: "Remove a webhook",
        description: "Its pending deliveries stop.",
        errors: [],
      },
      app: {},
    }),
    defineRoute({
      method: "get",
      path: "/webhooks/:id/deliveries",
      params: idParamsSchema,
      query: pagingQuerySchema,
      success: { status: 200, description: "A page of receipts", schema: envelopeOf(deliverySchema, "DeliveryPage") },
      handle: ({ params, query, asUser }) =>
        delivery.listDeliveries(
          {
            webhookId: params.id,
            page: query.page,
            limit: query.limit,
            cursor: query.cursor,
            status: query.status ? deliveryStatuses[query.status] : DeliveryStatus.UNSPECIFIED,
          },
          asUser,
        ),
      api: {
        operationId: "listDeliveries",
        tag: "Webhooks",
        summary: "Delivery receipts of a webhook, newest first",
        description:
          "One receipt per completed response pushed to this webhook (and per test event): its status, attempts so far and when the next is due. " +
          "`status` keeps only the receipts in that status. Receipts are kept for the instance's delivery retention " +
          "(`DELIVERY_RETENTION_DAYS`, 90 days by default): a finished delivery (succeeded or failed) goes, with its attempts and body, " +
          "once its event is older than that; one still pending or retrying stays until it finishes.",
        errors: [],
        query: listDeliveriesQuerySchema,
        answer: (page, { query }) => envelope(page.deliveries.map(deliveryJson), query, page),
      },
      app: { answer: (page, { query }) => appPage(page.deliveries.map(deliveryJson), query, page.hasMore) },
    }),
    defineRoute({
      method: "get",
      path: "/webhooks/:id/deliveries/:did/attempts",
      params: deliveryParamsSchema,
      success: { status: 200, description: "The attempts, in one page", schema: envelopeOf(attemptSchema, "AttemptList", "whole") },
      handle: async ({ params, asUser }) =>
        (await delivery.listAttempts({ webhookId: params.id, deliveryId: params.did }, asUser)).attempts.map(attemptJson),
      api: {
        operationId: "listDeliveryAttempts",
        tag: "Webhooks",
        summary: "Every attempt of one delivery",
        description: "Status code, duration, error and up to 4 KiB of the receiver's answer for each attempt, oldest first.",
        errors: [],
        answer: wholeList,
      },
      app: { answer: items },
    }),
    defineRoute({
      method: "post",
      path: "/webhooks/:id/deliveries/:did/retry",
      params: deliveryParamsSchema,
      success: { status: 200, description: "The receipt after the attempt", schema: deliverySchema },
      handle: async ({ params, asUser }) =>
        deliveryJson((await delivery.retryDelivery({ webhookId: params.id, deliveryId: params.did }, asUser)).delivery!),
      api: {
        operationId: "retryDelivery",
        tag: "Webhooks",
        summary: "Send a delivery again, now",
        description:
          "Sends the same body with the same eventId and records the attempt. A manual retry that fails does not restart the automatic schedule.",
        errors: [409],
      },
      app: {},
    }),
    defineRoute({
      method: "post",
      path: "/webhooks/:id/test",
      params: idParamsSchema,
      body: z.strictObject({ eventType: z.string().max(64).optional().describe("One of the webhook's eventTypes; default its first") }),
      success: { status: 200, description: "The test delivery's receipt after its attempt", schema: deliverySchema },
      handle: async ({ params, body, asUser }) =>
        deliveryJson((await delivery.sendTestEvent({ webhookId: params.id, eventType: body.eventType ?? "" }, asUser)).delivery!),
      api: {
        operationId: "sendTestEvent",
        tag: "Webhooks",
        summary: "Send a test event, now",
        description:
          "Sends an event of `eventType` (one the webhook receives; by default its first) with `\"test\": true`, built from the form as it is now " +
          "(a response's answers are made up), signed and with the webhook's headers like any delivery, once, and records it as a receipt whose " +
          "`trigger` is `test`. It is never retried automatically; the retry endpoint sends it again. 409 when the webhook is disabled. " +
          "The body may be left out.",
        errors: [409],
      },
      app: {},
    }),
    defineRoute({
      method: "post",
      path: "/webhooks/:id/recover",
      params: idParamsSchema,
      body: recoverBodySchema,
      success: { status: 200, description: "How many deliveries are sent again", schema: recoveredSchema },
      handle: async ({ params, body, asUser }) => {
        const { recovered } = await delivery.recoverDeliveries(
          { webhookId: params.id, since: timestampFromDate(body.since), until: body.until ? timestampFromDate(body.until) : undefined },
          asUser,
        );
        return { recovered };
      },
      api: {
        operationId: "recoverDeliveries",
        tag: "Webhooks",
        summary: "Send every failed delivery of a time window again",
        description:
          "Every failed delivery created in [`since`, `until`) is due again at once, with the same eventId and body, and retried on the schedule " +
          "from its start (as Svix's recover). Test deliveries are left out. 409 when the webhook is disabled: enable it first.",
        errors: [409],
      },
    }),
    defineRoute({
      method: "get",
      path: "/forms/:id/sample-events",
      params: idParamsSchema,
      query: sampleEventsQuerySchema,
      success: { status: 200, description: "Webhook bodies, newest first", schema: sampleEventListSchema },
      handle: async ({ params, query, asUser }) => {
        const { bodies } = await delivery.listSampleEvents({ formId: params.id, eventType: query.eventType, limit: query.limit }, asUser);
        return { items: bodies.map((body) => JSON.parse(body) as unknown) };
      },
      api: {
        operationId: "listSampleEvents",
        tag: "Webhooks",
        summary: "Sample webhook bodies of a form (extension)",
        description:
          "Extension of the spec, for automation tools that map fields before the first event arrives: the bodies a webhook of the form " +
          "would be sent for its latest events of `eventType`, exactly as sent (the response's answers by question text, option texts in " +
          "`options`, files as signed links). Response events are made from the form's latest responses (completed ones for " +
          "FORM_RESPONSE, partial ones for FORM_RESPONSE_PARTIAL), each `eventId` being `sample_<responseId>`. When there is none yet, and " +
          "always for form events, one body made from the form as it is now, with `\"test\": true` and made-up answers.",
        errors: [],
      },
    }),
    defineRoute({
      method: "post",
      path: "/webhooks/:id/rotate-secret",
      params: idParamsSchema,
      success: { status: 200, description: "The webhook with its new secret", schema: webhookSchema },
      handle: async ({ params, asUser }) => webhookJson((await webhooks.rotateSecret({ id: params.id }, asUser)).webhook!),
      api: {
        operationId: "rotateWebhookSecret",
        tag: "Webhooks",
        summary: "Replace the secret, keeping the old one valid for 24 hours",
        description:
          "Issues a new `whsec_` secret, shown whole in this answer only. For 24 hours (`previousSecretExpiresAt`) every delivery carries both " +
          "signatures in `webhook-signature` (space-separated, as Standard Webhooks specifies), so a receiver can switch secrets without losing " +
          "one; `X-Service-Signature` uses the new secret at once.",
        errors: [],
      },
    }),
  ];
}
