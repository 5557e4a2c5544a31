import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Client, type ConnectRouter, type ServiceImpl } from "@connectrpc/connect";
import { upstreamFailure } from "@formsvc/platform/upstream-failure.ts";
import { asCaller, requireCaller } from "@formsvc/platform/caller.ts";
import { keysetAfter, pageOf, pageRequest } from "@formsvc/platform/paging.ts";
import { newId } from "@formsvc/platform/ids.ts";
import {
  AttemptSchema,
  DeliverySchema,
  DeliveryService,
  DeliveryStatus,
} from "@formsvc/proto/delivery/v1/delivery_pb.js";
import type { Webhook, WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import type { FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import type { FileLinks } from "@formsvc/platform/file-links.ts";
import { AttemptEntity, DeliveryEntity, type Attempt, type Delivery, type DeliveryRecord, type DeliveryStatusName } from "../entities/index.ts";
import { deliveryFromRow, payloadColumn, tablesOf, type DeliveryRow } from "../entities/rows.ts";
import { webhooksCallTimeoutMs } from "../intake/accept-event.ts";
import { originOf } from "../sender/breaker.ts";
import { testPayload } from "../sender/payload.ts";
import { formResponseEventType } from "@formsvc/platform/events.ts";
import { sampleEvent } from "../sender/sample-event.ts";
import { attemptDelivery, type AttemptSettings } from "../attempt/attempt.ts";
import { sampleEventBodies, sampleFormOf, type SampleEventsDeps } from "./sample-events.ts";

/**
 * The attempt settings are the worker's: an attempt by hand records through the same path (it never
 * uses the schedule) and counts toward WEBHOOK_DISABLE_AFTER_FAILING_SECONDS too.
 */
export interface DeliveryHandlersDeps extends AttemptSettings, Pick<SampleEventsDeps, "submissions"> {
  /** GetWebhook as the caller (is the webhook theirs?), GetWebhookForDelivery for the URL and secret. */
  webhooks: Pick<Client<typeof WebhooksService>, "getWebhook" | "getWebhookForDelivery" | "disableWebhook" | "webhookGone">;
  /** GetForm as the caller: the current questions a test event is built from. */
  forms: Pick<Client<typeof FormsService>, "getForm">;
  /** Signs the file links of payloads. */
  fileLinks: FileLinks;
  /** Told when recovered deliveries are due (the worker looks at once). */
  onRecovered?: () => void;
}

const statusNames: Record<DeliveryStatusName, DeliveryStatus> = {
  pending: DeliveryStatus.PENDING,
  retrying: DeliveryStatus.RETRYING,
  succeeded: DeliveryStatus.SUCCEEDED,
  failed: DeliveryStatus.FAILED,
};

/** The status a ListDeliveries filter names; undefined for all. */
function statusOfMessage(status: DeliveryStatus): DeliveryStatusName | undefined {
  return (Object.keys(statusNames) as DeliveryStatusName[]).find((name) => statusNames[name] === status);
}

const webhookNotFoundMessage = "webhook not found";
const webhookNotFound = () => new ConnectError(webhookNotFoundMessage, Code.NotFound);
const deliveryNotFound = () => new ConnectError("delivery not found", Code.NotFound);

/** The receipt. `nextAttemptAt` only while another automatic attempt is to come. */
export type Receipt = Pick<
  DeliveryRecord,
  | "id"
  | "webhookId"
  | "eventId"
  | "status"
  | "attempts"
  | "lastError"
  | "lastStatusCode"
  | "nextAttemptAt"
  | "submissionId"
  | "eventType"
  | "trigger"
  | "createdAt"
  | "updatedAt"
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
    trigger: d.trigger,
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

  /** The webhook's delivery with the body it sends; NOT_FOUND when there is none (or it was pruned). */
  async function webhookDelivery(webhookId: string, deliveryId: string): Promise<Delivery> {
    const tables = tablesOf(orm);
    const [row]: DeliveryRow[] = deliveryId
      ? await orm.em.getConnection().execute(`select d.*, ${payloadColumn(tables)} from ${tables.deliveries} d where d."id" = ? and d."webhook_id" = ?`, [deliveryId, webhookId], "all")
      : [];
    if (!row) throw deliveryNotFound();
    return deliveryFromRow(row);
  }

  /** One attempt asked for by hand: sent at once, past the origin's breaker (someone asked for exactly this attempt). */
  async function attemptByHand(delivery: Delivery, webhook: Webhook, trigger: "manual" | "test"): Promise<Delivery> {
    const attempt = await attemptDelivery(deps, delivery, webhook, { trigger });
    if (!attempt.sent || !attempt.delivery) throw deliveryNotFound();
    return attempt.delivery;
  }

  return {
    async listDeliveries(req, ctx) {
      const caller = requireCaller(ctx);
      const window = pageRequest(req);
      await callerWebhook(caller, req.webhookId);
      const after = window.after ? [keysetAfter(tablesOf(orm).deliveries, "created_at", "desc", window.after)] : [];
      const status = statusOfMessage(req.status);
      const rows = await orm.em.fork().find(
        DeliveryEntity,
        { $and: [{ webhookId: req.webhookId }, ...(status ? [{ status }] : []), ...after] },
        { orderBy: [{ createdAt: "desc" }, { id: "desc" }], limit: window.fetch, offset: window.offset },
      );
      const page = pageOf(rows, window.limit, (d) => d.createdAt);
      return { deliveries: page.items.map((d) => deliveryMessage(d)), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },

    async listAttempts(req, ctx) {
      const caller = requireCaller(ctx);
      await callerWebhook(caller, req.webhookId);
      const delivery = await webhookDelivery(req.webhookId, req.deliveryId);
      const rows = await orm.em.fork().find(AttemptEntity, { deliveryId: delivery.id, eventAt: delivery.eventAt }, { orderBy: { number: "asc" } });
      return { attempts: rows.map(attemptMessage) };
    },

    async retryDelivery(req, ctx) {
      const caller = requireCaller(ctx);
      await callerWebhook(caller, req.webhookId);
      const delivery = await webhookDelivery(req.webhookId, req.deliveryId);
      const webhook = await enabledWebhook(req.webhookId, "send its deliveries again");
      return { delivery: deliveryMessage(await attemptByHand(delivery, webhook, "manual")) };
    },

    async deleteFormDeliveries(req) {
      // Internal (forms' PurgeForm, once the form's webhooks are gone: nothing new arrives for it). A
      // batch at a time, each delivery with its attempts and its event's payload (answers and file links).
      if (!req.formId) throw new ConnectError("formId: is required", Code.InvalidArgument);
      const { deliveries, attempts, payloads, failingWebhooks } = tablesOf(orm);
      // The failing periods of the form's (deleted) webhooks, found through their deliveries.
      await orm.em.fork().execute(
        `delete from ${failingWebhooks} where "webhook_id" in (select distinct "webhook_id" from ${deliveries} where "form_id" = ?)`,
        [req.formId],
      );
      const batchSize = 1000;
      let deleted = 0;
      for (;;) {
        const gone = (await orm.em.fork().execute(
          `with "gone" as (
             delete from ${deliveries} where ("id", "event_at") in (select "id", "event_at" from ${deliveries} where "form_id" = ? limit ?)
             returning "id", "event_id", "event_at"),
           "gone_attempts" as (delete from ${attempts} a using "gone" g where a."delivery_id" = g."id" and a."event_at" = g."event_at"),
           "gone_payloads" as (delete from ${payloads} p using "gone" g where p."event_id" = g."event_id" and p."event_at" = g."event_at")
           select 1 from "gone"`,
          [req.formId, batchSize],
        )) as unknown[];
        deleted += gone.length;
        if (gone.length < batchSize) return { deleted: BigInt(deleted) };
      }
    },

    async recoverDeliveries(req, ctx) {
      const caller = requireCaller(ctx);
      if (!req.since) throw new ConnectError("since is required", Code.InvalidArgument);
      const since = timestampDate(req.since);
      const until = req.until ? timestampDate(req.until) : undefined;
      if (until && until <= since) throw new ConnectError("until must be after since", Code.InvalidArgument);
      await callerWebhook(caller, req.webhookId);
      await enabledWebhook(req.webhookId, "recover its deliveries");
      const { deliveries } = tablesOf(orm);
      // Due now, from the start of the schedule, as if new; attempts and their history stay.
      const recovered = await orm.em.getConnection().execute(
        `update ${deliveries} set "status" = 'retrying', "next_attempt_at" = now(), "schedule_step" = 0,
           "locked_until" = null, "lease_id" = null, "updated_at" = now()
         where "webhook_id" = ? and "status" = 'failed' and "trigger" = 'event' and "created_at" >= ? ${until ? `and "created_at" < ?` : ""}`,
        [req.webhookId, since, ...(until ? [until] : [])],
        "run",
      );
      const count = Number((recovered as { affectedRows?: number }).affectedRows ?? 0);
      if (count > 0) deps.onRecovered?.();
      deps.logger?.info({ webhookId: req.webhookId, recovered: count, since, until }, "failed deliveries recovered");
      return { recovered: count };
    },

    async listSampleEvents(req, ctx) {
      return { bodies: await sampleEventBodies(deps, req, requireCaller(ctx)) };
    },

    async sendTestEvent(req, ctx) {
      const caller = requireCaller(ctx);
      await callerWebhook(caller, req.webhookId);
      const webhook = await enabledWebhook(req.webhookId, "send a test event");
      // One of the types it receives: a test shows what it will get.
      const eventType = req.eventType || webhook.eventTypes[0] || formResponseEventType;
      if (!webhook.eventTypes.includes(eventType)) {
        throw new ConnectError(`eventType: the webhook does not receive ${eventType.slice(0, 60)}; it receives ${webhook.eventTypes.join(", ")}`, Code.InvalidArgument);
      }
      const tables = tablesOf(orm);
      const { deliveries, payloads } = tables;
      const eventId = `test_${newId()}`;
      const responseId = `test_${newId()}`;
      const origin = originOf(webhook.url);
      const { form } = await deps.forms
        .getForm({ id: webhook.formId }, { ...asCaller(caller), timeoutMs: webhooksCallTimeoutMs })
        .catch((err: unknown) => upstreamFailure("forms", err, { notFoundMessage: webhookNotFoundMessage, logger: deps.logger }));
      if (!form) throw webhookNotFound();
      const sample = sampleFormOf(form);
      // The test's time is its event's (whole milliseconds, as every event_at: it goes with the id in lookups).
      const sentAt = new Date();
      const event = sampleEvent(eventType, { eventId, responseId, form: sample, at: sentAt });
      const payload = JSON.stringify(testPayload(event, deps.fileLinks));
      // Stored before it is sent, without a due time: no worker ever claims it; only this call and a
      // retry by hand send it.
      const [row]: DeliveryRow[] = await orm.em.getConnection().execute(
        `with "payload" as (insert into ${payloads} ("event_id", "event_at", "body") values (?, ?, ?))
         insert into ${deliveries} ("id", "event_at", "webhook_id", "event_id", "event_type", "trigger", "form_id", "submission_id", "origin",
           "status", "attempts", "last_error", "last_status_code", "next_attempt_at", "schedule_step", "created_at", "updated_at")
         values (?, ?, ?, ?, ?, 'test', ?, '', ?, 'pending', 0, '', 0, null, 0, now(), now())
         returning *, ?::text as "payload"`,
        [eventId, sentAt, payload, newId(), sentAt, webhook.id, eventId, eventType, webhook.formId, origin, payload],
        "all",
      );
      let updated = await attemptByHand(deliveryFromRow(row), webhook, "test");
      if (updated.status === "pending") {
        // Sent once: a test that did not succeed has failed.
        const [failed]: DeliveryRow[] = await orm.em.getConnection().execute(
          `update ${deliveries} d set "status" = 'failed', "updated_at" = now() where "id" = ? and "event_at" = ? and "status" = 'pending' returning *, ${payloadColumn(tables)}`,
          [updated.id, updated.eventAt],
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
