import type { Client } from "@connectrpc/connect";
import { z } from "zod";
import { asCaller } from "@formsvc/platform/caller.ts";
import { attemptJson, deliveryJson, webhookJson } from "@formsvc/api-records";
import type { DeliveryService } from "@formsvc/proto/delivery/v1/delivery_pb.js";
import type { WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { defineRoute } from "../route-table.ts";
import { attemptSchema, deliverySchema, envelopeOf, idParamsSchema, pagingQuerySchema, webhookSchema } from "../schemas.ts";

const url = z.string().min(1).max(2000).describe("http or https URL, without credentials");
export const webhookSecretSchema = z.string().max(256).describe("Signs each body: X-Service-Signature = base64(HMAC-SHA256(raw body, secret))");
export const webhookHeadersSchema = z
  .record(z.string().min(1).max(100), z.string().max(1000))
  .describe("Sent with every request; content type, host and signature headers are reserved");

const createWebhookBodySchema = z.strictObject({
  formId: z.string().min(1).describe("The form whose completed responses are pushed"),
  url,
  secret: webhookSecretSchema.optional(),
  headers: webhookHeadersSchema.optional(),
  enabled: z.boolean().optional().describe("Default true"),
});
const updateWebhookBodySchema = z.strictObject({
  url: url.optional(),
  secret: webhookSecretSchema.nullable().optional().describe("null or an empty string removes the secret"),
  headers: webhookHeadersSchema.optional().describe("Replaces every header"),
  enabled: z.boolean().optional(),
});
const listWebhooksQuerySchema = pagingQuerySchema.extend({ formId: z.string().min(1).describe("The form (required)") });
const deliveryParamsSchema = idParamsSchema.extend({ did: z.string().min(1).describe("Delivery id") });

export function webhookRoutes(webhooks: Client<typeof WebhooksService>, delivery: Client<typeof DeliveryService>) {
  return [
    defineRoute({
      method: "get",
      path: "/webhooks",
      operationId: "listWebhooks",
      tag: "Webhooks",
      summary: "A form's webhooks",
      query: listWebhooksQuerySchema,
      success: { status: 200, description: "A page of webhooks", schema: envelopeOf(webhookSchema, "WebhookPage") },
      errors: [400, 404],
      handle: async ({ query, caller }) => {
        const { webhooks: items, hasMore } = await webhooks.listWebhooks(
          { formId: query.formId, page: query.page, limit: query.limit },
          asCaller(caller.userId),
        );
        return { items: items.map(webhookJson), page: query.page, limit: query.limit, hasMore };
      },
    }),
    defineRoute({
      method: "post",
      path: "/webhooks",
      operationId: "createWebhook",
      tag: "Webhooks",
      summary: "Add a webhook to a form",
      description: "Every completed response of the form is POSTed to `url` while the webhook is enabled.",
      body: createWebhookBodySchema,
      success: { status: 201, description: "The created webhook", schema: webhookSchema },
      errors: [400, 404, 409, 413, 415],
      handle: async ({ body, caller }) =>
        webhookJson(
          (
            await webhooks.createWebhook(
              { formId: body.formId, url: body.url, secret: body.secret ?? "", headers: body.headers ?? {}, enabled: body.enabled },
              asCaller(caller.userId),
            )
          ).webhook!,
        ),
    }),
    defineRoute({
      method: "get",
      path: "/webhooks/:id",
      operationId: "getWebhook",
      tag: "Webhooks",
      summary: "One webhook",
      params: idParamsSchema,
      success: { status: 200, description: "The webhook", schema: webhookSchema },
      errors: [404],
      handle: async ({ params, caller }) => webhookJson((await webhooks.getWebhook({ id: params.id }, asCaller(caller.userId))).webhook!),
    }),
    defineRoute({
      method: "patch",
      path: "/webhooks/:id",
      operationId: "updateWebhook",
      tag: "Webhooks",
      summary: "Change a webhook's url, secret, headers or enabled",
      params: idParamsSchema,
      body: updateWebhookBodySchema,
      success: { status: 200, description: "The updated webhook", schema: webhookSchema },
      errors: [400, 404, 413, 415],
      handle: async ({ params, body, caller }) =>
        webhookJson(
          (
            await webhooks.updateWebhook(
              {
                id: params.id,
                url: body.url,
                secret: body.secret === null ? "" : body.secret,
                headers: body.headers ? { values: body.headers } : undefined,
                enabled: body.enabled,
              },
              asCaller(caller.userId),
            )
          ).webhook!,
        ),
    }),
    defineRoute({
      method: "delete",
      path: "/webhooks/:id",
      operationId: "deleteWebhook",
      tag: "Webhooks",
      summary: "Remove a webhook",
      description: "Its pending deliveries stop.",
      params: idParamsSchema,
      success: { status: 204, description: "Removed" },
      errors: [404],
      handle: async ({ params, caller }) => {
        await webhooks.deleteWebhook({ id: params.id }, asCaller(caller.userId));
      },
    }),
    defineRoute({
      method: "get",
      path: "/webhooks/:id/deliveries",
      operationId: "listDeliveries",
      tag: "Webhooks",
      summary: "Delivery receipts of a webhook, newest first",
      params: idParamsSchema,
      query: pagingQuerySchema,
      success: { status: 200, description: "A page of receipts", schema: envelopeOf(deliverySchema, "DeliveryPage") },
      errors: [400, 404],
      handle: async ({ params, query, caller }) => {
        const { deliveries, hasMore } = await delivery.listDeliveries(
          { webhookId: params.id, page: query.page, limit: query.limit },
          asCaller(caller.userId),
        );
        return { items: deliveries.map(deliveryJson), page: query.page, limit: query.limit, hasMore };
      },
    }),
    defineRoute({
      method: "get",
      path: "/webhooks/:id/deliveries/:did/attempts",
      operationId: "listDeliveryAttempts",
      tag: "Webhooks",
      summary: "Every attempt of one delivery",
      description: "Status code, duration, error and up to 4 KiB of the receiver's answer for each attempt, oldest first.",
      params: deliveryParamsSchema,
      success: { status: 200, description: "The attempts, in one page", schema: envelopeOf(attemptSchema, "AttemptList") },
      errors: [404],
      handle: async ({ params, caller }) => {
        const { attempts } = await delivery.listAttempts({ webhookId: params.id, deliveryId: params.did }, asCaller(caller.userId));
        return { items: attempts.map(attemptJson), page: 1, limit: Math.max(1, attempts.length), hasMore: false };
      },
    }),
    defineRoute({
      method: "post",
      path: "/webhooks/:id/deliveries/:did/retry",
      operationId: "retryDelivery",
      tag: "Webhooks",
      summary: "Send a delivery again, now",
      description:
        "Sends the same body with the same eventId and records the attempt. A manual retry that fails does not restart the automatic schedule.",
      params: deliveryParamsSchema,
      success: { status: 200, description: "The receipt after the attempt", schema: deliverySchema },
      errors: [404],
      handle: async ({ params, caller }) =>
        deliveryJson((await delivery.retryDelivery({ webhookId: params.id, deliveryId: params.did }, asCaller(caller.userId))).delivery!),
    }),
  ];
}
