// One delivery attempt, whoever asked for it: the worker (automatic, on the schedule), a retry by hand
// (manual) or a test event (test). The request is the delivery's stored bytes, signed, with the webhook's
// headers as it is now; it is sent once; the result is recorded with the delivery (record.ts), counted,
// logged, and the rules that disable a webhook are applied (webhook-disabling.ts). Only the trigger
// differs: an automatic attempt goes through its origin's breaker and under the worker's lease; one by
// hand is sent at once, past the breaker, and never changes the automatic schedule.
import type { Logger } from "@formsvc/platform/logger.ts";
import type { Webhook } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { observeAttempt } from "../delivery-metrics.ts";
import type { Delivery } from "../entities/index.ts";
import { originOf, type OriginBreakers } from "../sender/breaker.ts";
import { postWebhook, type WebhookRequest } from "../sender/http-client.ts";
import { classify, type Outcome, type SendResult } from "../sender/send-result.ts";
import type { AllowedRanges } from "@formsvc/platform/blocked-addresses.ts";
import { formatBody } from "../sender/chat-formats.ts";
import type { GroupCommit } from "@formsvc/platform/group-commit.ts";
import { recordAttempt, type RecordedDelivery, type RecordedSuccess, type RecordSuccessOptions } from "./record.ts";
import { applyDisablingRules, type WebhookDisablingOptions } from "./webhook-disabling.ts";

export interface AttemptSettings extends WebhookDisablingOptions {
  /** Seconds between automatic attempts after the first (WEBHOOK_RETRY_SCHEDULE). */
  retrySchedule: readonly number[];
  /** WEBHOOK_ALLOW_PRIVATE_URLS. */
  allowPrivateUrls: boolean;
  /** WEBHOOK_ALLOWED_CIDRS; none unless given. */
  allowedCidrs?: AllowedRanges;
  /** PUBLIC_URL: chat bodies (slack, discord) link to the response in the app; without it they carry no link. */
  publicUrl?: string;
  /** The most attempts at a time to one origin (WEBHOOK_MAX_ORIGIN_CONCURRENCY): as many connections to it are kept. */
  maxPerOriginConcurrency?: number;
  /** The hard limit of one exchange; 10 s. */
  timeoutMs?: number;
  /** The jitter of the schedule's delays. */
  random?: () => number;
}

/**
 * Who asked for the attempt: the worker, holding the delivery's lease, the origins' breakers and the recorder
 * its successes are written with together, or a person.
 */
export type AttemptKind = { trigger: "automatic"; leaseId: string; breakers: OriginBreakers; successes: GroupCommit<RecordSuccessOptions, RecordedSuccess | undefined> } | { trigger: "manual" | "test" };

/**
 * The end of an attempt: sent and recorded (`delivery` as it now is, undefined when it no longer
 * exists), or not sent because the origin's breaker is open until `retryAt` (automatic attempts only).
 */
export type AttemptEnd =
  | { sent: true; result: SendResult; delivery: RecordedDelivery | undefined }
  | { sent: false; origin: string; retryAt: Date };

type Attempted = Pick<Delivery, "id" | "eventAt" | "webhookId" | "eventId" | "payload">;

/** The request of one attempt of `delivery` to `webhook` as it is now. */
function webhookRequest(delivery: Attempted, webhook: Webhook, publicUrl: string | undefined): WebhookRequest {
  return {
    url: webhook.url,
    body: formatBody(webhook.format, delivery.payload, publicUrl),
    eventId: delivery.eventId,
    secret: webhook.secret,
    previousSecret: webhook.previousSecret,
    headers: { ...webhook.headers },
  };
}

export async function attemptDelivery(settings: AttemptSettings, delivery: Attempted, webhook: Webhook, kind: AttemptKind): Promise<AttemptEnd> {
  const origin = originOf(webhook.url);
  const send = () => postWebhook(webhookRequest(delivery, webhook, settings.publicUrl), { allowPrivateUrls: settings.allowPrivateUrls, allowedCidrs: settings.allowedCidrs, timeoutMs: settings.timeoutMs, keptPerOrigin: settings.maxPerOriginConcurrency });
  let result: SendResult;
  if (kind.trigger === "automatic") {
    const verdict = await kind.breakers.run(origin, send);
    if (verdict.kind === "open") return { sent: false, origin, retryAt: verdict.retryAt };
    result = verdict.result;
  } else {
    result = await send();
  }
  const manual = kind.trigger !== "automatic";
  const outcome = classify(result);
  const recorded =
    kind.trigger === "automatic" && outcome === "succeeded"
      ? withPayload(await kind.successes.add({ deliveryId: delivery.id, eventAt: delivery.eventAt, leaseId: kind.leaseId, result, origin }), delivery.payload)
      : await recordAttempt(settings.orm, {
          deliveryId: delivery.id,
          eventAt: delivery.eventAt,
          leaseId: kind.trigger === "automatic" ? kind.leaseId : undefined,
          result,
          manual,
          origin,
          retrySchedule: settings.retrySchedule,
          random: settings.random,
        });
  observeAttempt(outcome, kind.trigger, delivery.payload);
  if (settings.logger) {
    const fields = { deliveryId: delivery.id, webhookId: delivery.webhookId, eventId: delivery.eventId, origin, ...(manual ? { manual } : {}) };
    logAttempt(settings.logger, fields, result, outcome, recorded);
  }
  await applyDisablingRules(settings, delivery.webhookId, result, recorded?.failingSince);
  return { sent: true, result, delivery: recorded };
}

/** A recorded success with the payload it was sent with. */
function withPayload(recorded: RecordedSuccess | undefined, payload: string): RecordedDelivery | undefined {
  return recorded && { ...recorded, payload };
}

/** One line per attempt: never the body, the URL (it may hold a token) or the secret. */
function logAttempt(logger: Logger, fields: Record<string, unknown>, result: SendResult, outcome: Outcome, recorded: RecordedDelivery | undefined): void {
  const line = {
    ...fields,
    attempt: recorded?.attempts,
    status: recorded?.status,
    statusCode: result.statusCode,
    durationMs: result.durationMs,
    outcome,
    error: result.error,
  };
  if (outcome === "succeeded") logger.info(line, "webhook delivered");
  else logger.warn(line, "webhook attempt failed");
}
