import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Client, type ConnectRouter, type ServiceImpl } from "@connectrpc/connect";
import { upstreamFailure } from "@formsvc/platform/upstream-failure.ts";
import { asCaller, requireCaller } from "@formsvc/platform/caller.ts";
import type { MikroORM } from "@formsvc/platform/database.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { pageOf, pageWindow } from "@formsvc/platform/paging.ts";
import { newId } from "@formsvc/platform/ids.ts";
import {
  AttemptSchema,
  DeliverySchema,
  DeliveryService,
  DeliveryStatus,
} from "@formsvc/proto/delivery/v1/delivery_pb.js";
import type { Webhook, WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { AttemptEntity, DeliveryEntity, type Attempt, type Delivery, type DeliveryStatusName } from "../entities/index.ts";
import { deliveryFromRow, tablesOf, type DeliveryRow } from "../entities/rows.ts";
import { webhooksCallTimeoutMs } from "../intake/accept-event.ts";
import { originOf } from "../sender/breaker.ts";
import { postWebhook } from "../sender/http-client.ts";
import { testEventType, testPayload } from "../sender/payload.ts";
import { observeAttempt } from "../delivery-metrics.ts";
import { classify } from "../worker/outcome.ts";
import { recordAttempt } from "../worker/record.ts";
import { logAttempt, webhookRequest } from "../worker/worker.ts";

export interface DeliveryHandlersDeps {
  orm: MikroORM;
  /** GetWebhook as the caller (is the webhook theirs?), GetWebhookForDelivery for the URL and secret. */
  webhooks: Pick<Client<typeof WebhooksService>, "getWebhook" | "getWebhookForDelivery">;
  logger?: Logger;
  /** WEBHOOK_RETRY_SCHEDULE (a manual attempt never uses it, but records through the same path). */
  retrySchedule: readonly number[];
  allowPrivateUrls: boolean;
  /** The hard limit of one exchange; 10 s. */
  timeoutMs?: number;
}

const statusNames: Record<DeliveryStatusName, DeliveryStatus> = {
  pending: DeliveryStatus.PENDING,
  retrying: DeliveryStatus.RETRYING,
  succeeded: DeliveryStatus.SUCCEEDED,
  failed: DeliveryStatus.FAILED,
};

const webhookNotFoundMessage = "webhook not found";
const webhookNotFound = () => new ConnectError(webhookNotFoundMessage, Code.NotFound);
const deliveryNotFound = () => new ConnectError("delivery not found", Code.NotFound);

/** The receipt. `nextAttemptAt` only while another automatic attempt is to come. */
export type Receipt = Pick<
  Delivery,
  "id" | "webhookId" | "eventId" | "status" | "attempts" | "lastError" | "lastStatusCode" | "nextAttemptAt" | "submissionId" | "eventType" | "createdAt" | "updatedAt"
>;

export function deliveryMessage(d: Receipt): MessageInitShape<typeof DeliverySchema> {
  const waiting = d.status === "pending" || d.status === "retrying";
  return {
    id: d.id,
    webhookId: d.webhookId,
    eventId: d.eventId,
    status: statusNames[d.status],
    attempts: d.attempts,
    lastError: d.lastError,
    lastStatusCode: d.lastStatusCode,
    nextAttemptAt: waiting && d.nextAttemptAt ? timestampFromDate(d.nextAttemptAt) : undefined,
    submissionId: d.submissionId,
    eventType: d.eventType,
    createdAt: timestampFromDate(d.createdAt),
    updatedAt: timestampFromDate(d.updatedAt),
  };
}

export function attemptMessage(a: Attempt): MessageInitShape<typeof AttemptSchema> {
  return {
    id: a.id,
    number: a.number,
    statusCode: a.statusCode,
    durationMs: a.durationMs,
    error: a.error,
    responseBody: a.responseBody,
    manual: a.manual,
    createdAt: timestampFromDate(a.createdAt),
  };
}

export function createDeliveryHandlers(deps: DeliveryHandlersDeps): ServiceImpl<typeof DeliveryService> {
  const { orm, webhooks } = deps;

  /** The webhook, when the caller may see it (webhooks checks the form); NOT_FOUND otherwise. */
  async function callerWebhook(caller: string, webhookId: string): Promise<void> {
    if (!webhookId) throw webhookNotFound();
    const res = await webhooks
      .getWebhook({ id: webhookId }, { ...asCaller(caller), timeoutMs: webhooksCallTimeoutMs })
      .catch((err: unknown) => upstreamFailure("webhooks", err, { notFoundMessage: webhookNotFoundMessage, logger: deps.logger }));
    if (!res.webhook) throw webhookNotFound();
  }

  /** The webhook as it is now (URL, secret, headers), for an attempt asked for by hand. */
  async function enabledWebhook(webhookId: string, what: string): Promise<Webhook> {
    let webhook: Webhook | undefined;
    try {
      webhook = (await webhooks.getWebhookForDelivery({ id: webhookId }, { timeoutMs: webhooksCallTimeoutMs })).webhook;
    } catch (err) {
      upstreamFailure("webhooks", err, { notFoundMessage: webhookNotFoundMessage, logger: deps.logger });
    }
    if (!webhook) throw webhookNotFound();
    if (!webhook.enabled) throw new ConnectError(`the webhook is disabled; enable it to ${what}`, Code.FailedPrecondition);
    return webhook;
  }

  async function webhookDelivery(webhookId: string, deliveryId: string): Promise<Delivery> {
    const delivery = deliveryId ? await orm.em.fork().findOne(DeliveryEntity, { id: deliveryId, webhookId }) : null;
    if (!delivery) throw deliveryNotFound();
    return delivery;
  }

  /** One attempt asked for by hand: sent, recorded (never changing the schedule), counted and logged. */
  async function attemptByHand(delivery: Delivery, webhook: Webhook, trigger: "manual" | "test"): Promise<{ updated: Delivery }> {
    const origin = originOf(webhook.url);
    const result = await postWebhook(webhookRequest(delivery, webhook), { allowPrivateUrls: deps.allowPrivateUrls, timeoutMs: deps.timeoutMs });
    const updated = await recordAttempt(orm, { deliveryId: delivery.id, result, manual: true, origin, retrySchedule: deps.retrySchedule });
    if (!updated) throw deliveryNotFound();
    observeAttempt(classify(result), trigger, delivery.payload);
    if (deps.logger) {
      const fields = { deliveryId: delivery.id, webhookId: delivery.webhookId, eventId: delivery.eventId, origin, manual: true };
      logAttempt(deps.logger, fields, result, updated.status, updated.attempts);
    }
    return { updated };
  }

  return {
    async listDeliveries(req, ctx) {
      const caller = requireCaller(ctx);
      const window = pageWindow(req.page, req.limit);
      await callerWebhook(caller, req.webhookId);
      const rows = await orm.em.fork().find(
        DeliveryEntity,
        { webhookId: req.webhookId },
        { orderBy: [{ createdAt: "desc" }, { id: "desc" }], limit: window.fetch, offset: window.offset, exclude: ["payload"] },
      );
      const page = pageOf(rows, window.limit);
      return { deliveries: page.items.map((d) => deliveryMessage(d)), hasMore: page.hasMore };
    },

    async listAttempts(req, ctx) {
      const caller = requireCaller(ctx);
      await callerWebhook(caller, req.webhookId);
      const delivery = await webhookDelivery(req.webhookId, req.deliveryId);
      const rows = await orm.em.fork().find(AttemptEntity, { deliveryId: delivery.id }, { orderBy: { number: "asc" } });
      return { attempts: rows.map(attemptMessage) };
    },

    async retryDelivery(req, ctx) {
      const caller = requireCaller(ctx);
      await callerWebhook(caller, req.webhookId);
      const delivery = await webhookDelivery(req.webhookId, req.deliveryId);
      const webhook = await enabledWebhook(req.webhookId, "send its deliveries again");
      // Sent at once, past the origin's breaker: someone asked for exactly this attempt.
      const { updated } = await attemptByHand(delivery, webhook, "manual");
      return { delivery: deliveryMessage(updated) };
    },

    async sendTestEvent(req, ctx) {
      const caller = requireCaller(ctx);
      await callerWebhook(caller, req.webhookId);
      const webhook = await enabledWebhook(req.webhookId, "send a test event");
      const { deliveries } = tablesOf(orm);
      const eventId = `test_${newId()}`;
      const responseId = `test_${newId()}`;
      const origin = originOf(webhook.url);
      const payload = JSON.stringify(testPayload({ eventId, formId: webhook.formId, responseId, at: new Date() }));
      // Stored before it is sent, without a due time: no worker ever claims it; only this call and a
      // retry by hand send it.
      const [row]: DeliveryRow[] = await orm.em.getConnection().execute(
        `insert into ${deliveries} ("id", "webhook_id", "event_id", "event_type", "form_id", "submission_id", "origin", "payload",
           "status", "attempts", "last_error", "last_status_code", "next_attempt_at", "schedule_step", "created_at", "updated_at")
         values (?, ?, ?, ?, ?, '', ?, ?, 'pending', 0, '', 0, null, 0, now(), now())
         returning *`,
        [newId(), webhook.id, eventId, testEventType, webhook.formId, origin, payload],
        "all",
      );
      let { updated } = await attemptByHand(deliveryFromRow(row), webhook, "test");
      if (updated.status === "pending") {
        // Sent once: a test that did not succeed has failed.
        const [failed]: DeliveryRow[] = await orm.em.getConnection().execute(
          `update ${deliveries} set "status" = 'failed', "updated_at" = now() where "id" = ? and "status" = 'pending' returning *`,
          [updated.id],
          "all",
        );
        if (failed) updated = deliveryFromRow(failed);
      }
      return { delivery: deliveryMessage(updated) };
    },
  };
}

export function routes(router: ConnectRouter, handlers: ServiceImpl<typeof DeliveryService>): void {
  router.service(DeliveryService, handlers);
}
