// The delivery loop: claim due deliveries, attempt each, record the result, repeat. It looks every
// ~200 ms and at once when told (a new event was accepted, or a slot became free).
//
// Spreading the work: at most `perOriginConcurrency` (4) attempts run at a time per receiver origin,
// and `maxInFlight` (32) in all, so one slow receiver (10 s per attempt) holds only its own slots and
// never the others'. A claim leaves out the origins that are full; a claimed delivery whose origin
// filled up meanwhile is given back at once.
//
// Before each attempt the webhook is read as it is now (GetWebhookForDelivery): deleted => the
// delivery fails "webhook deleted", disabled => "webhook disabled", both without an attempt; webhooks
// not answering => the delivery waits 5 s, also without an attempt. The origin's breaker may push the
// delivery back to when it half-opens, again without an attempt.
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { MikroORM } from "@formsvc/platform/database.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { contextOf, inSpan } from "@formsvc/platform/tracing.ts";
import type { Webhook, WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { webhooksCallTimeoutMs } from "../intake/accept-event.ts";
import { OriginBreakers, originOf, type BreakerOptions } from "../sender/breaker.ts";
import { postWebhook, type SendResult, type WebhookRequest } from "../sender/http-client.ts";
import { claimDue, defaultLeaseMs, releaseClaim, type ClaimedDelivery } from "./claim.ts";
import { classify } from "./outcome.ts";
import { observeAttempt, watchBreakers } from "../delivery-metrics.ts";
import { deferDelivery, failWithoutAttempt, recordAttempt } from "./record.ts";
import { applyDisablingRules } from "./webhook-disabling.ts";

export interface WorkerOptions {
  orm: MikroORM;
  webhooks: Pick<Client<typeof WebhooksService>, "getWebhookForDelivery" | "disableWebhook">;
  logger: Logger;
  /** Seconds between automatic attempts after the first (WEBHOOK_RETRY_SCHEDULE). */
  retrySchedule: readonly number[];
  /** WEBHOOK_ALLOW_PRIVATE_URLS. */
  allowPrivateUrls: boolean;
  /** WEBHOOK_DISABLE_AFTER_FAILING_SECONDS. */
  disableAfterFailingSeconds: number;
  /** The hard limit of one exchange; 10 s. */
  timeoutMs?: number;
  pollIntervalMs?: number;
  leaseMs?: number;
  perOriginConcurrency?: number;
  maxInFlight?: number;
  /** How long a delivery waits when webhooks does not answer. */
  webhooksUnavailableDelayMs?: number;
  breakers?: BreakerOptions;
  random?: () => number;
}

const workerDefaults = {
  pollIntervalMs: 200,
  perOriginConcurrency: 4,
  maxInFlight: 32,
  webhooksUnavailableDelayMs: 5_000,
} as const;

/** The request of one attempt of `delivery` to `webhook` as it is now. */
export function webhookRequest(delivery: { eventId: string; payload: string }, webhook: Webhook): WebhookRequest {
  return {
    url: webhook.url,
    body: delivery.payload,
    eventId: delivery.eventId,
    secret: webhook.secret,
    previousSecret: webhook.previousSecret,
    headers: { ...webhook.headers },
  };
}

export class DeliveryWorker {
  private readonly options: WorkerOptions;
  private readonly breakers: OriginBreakers;
  private readonly perOrigin = new Map<string, number>();
  private readonly inFlight = new Set<Promise<void>>();
  private running = false;
  private loopDone: Promise<void> | undefined;
  private woken = false;
  private wakeUp: (() => void) | undefined;
  private unwatchBreakers: (() => void) | undefined;

  constructor(options: WorkerOptions) {
    this.options = options;
    this.breakers = new OriginBreakers({ logger: options.logger, ...options.breakers });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.unwatchBreakers = watchBreakers(this.breakers);
    this.loopDone = this.loop();
  }

  /** Looks for due deliveries now instead of at the next poll. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** Stops claiming, then waits for the attempts under way to be recorded. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loopDone;
    await Promise.allSettled([...this.inFlight]);
    this.breakers.shutdown();
    this.unwatchBreakers?.();
  }

  private get pollIntervalMs(): number {
    return this.options.pollIntervalMs ?? workerDefaults.pollIntervalMs;
  }

  private get perOriginConcurrency(): number {
    return this.options.perOriginConcurrency ?? workerDefaults.perOriginConcurrency;
  }

  private async loop(): Promise<void> {
    const maxInFlight = this.options.maxInFlight ?? workerDefaults.maxInFlight;
    while (this.running) {
      this.woken = false;
      const free = maxInFlight - this.inFlight.size;
      let claimed = 0;
      if (free > 0) {
        try {
          const full = [...this.perOrigin].filter(([, n]) => n >= this.perOriginConcurrency).map(([origin]) => origin);
          const rows = await claimDue(this.options.orm, { limit: free, leaseMs: this.options.leaseMs ?? defaultLeaseMs, excludeOrigins: full });
          claimed = rows.length;
          for (const row of rows) this.dispatch(row);
        } catch (err) {
          this.options.logger.error({ err }, "claiming due deliveries failed");
        }
      }
      // A full batch: more may be due at once.
      if (this.running && free > 0 && claimed === free && this.inFlight.size < maxInFlight) continue;
      await this.sleep(this.pollIntervalMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.woken || !this.running) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = undefined;
        done();
      };
    });
  }

  private dispatch(delivery: ClaimedDelivery): void {
    const origin = delivery.origin;
    const busy = this.perOrigin.get(origin) ?? 0;
    if (busy >= this.perOriginConcurrency) {
      const released = releaseClaim(this.options.orm, delivery).catch((err: unknown) =>
        this.options.logger.error({ err, deliveryId: delivery.id }, "giving back a claimed delivery failed"),
      );
      this.track(released, undefined);
      return;
    }
    this.perOrigin.set(origin, busy + 1);
    const attempt = this.attempt(delivery).catch((err: unknown) =>
      // Its lease runs out and the delivery is tried again: at least once.
      this.options.logger.error({ err, deliveryId: delivery.id }, "delivery attempt could not be completed"),
    );
    this.track(attempt, origin);
  }

  private track(work: Promise<void>, origin: string | undefined): void {
    const tracked: Promise<void> = work.finally(() => {
      this.inFlight.delete(tracked);
      if (origin !== undefined) {
        const left = (this.perOrigin.get(origin) ?? 1) - 1;
        if (left > 0) this.perOrigin.set(origin, left);
        else this.perOrigin.delete(origin);
        // A slot is free: its origin's waiting deliveries may go.
        this.wake();
      }
    });
    this.inFlight.add(tracked);
  }

  /** One attempt, as a span of the event's trace (the one that made the delivery). */
  private attempt(delivery: ClaimedDelivery): Promise<void> {
    const attributes = { "formsvc.delivery.id": delivery.id, "formsvc.webhook.id": delivery.webhookId, "formsvc.event.id": delivery.eventId };
    return inSpan("deliver webhook", { parent: contextOf(delivery.traceParent), attributes }, () => this.attemptOnce(delivery));
  }

  private async attemptOnce(delivery: ClaimedDelivery): Promise<void> {
    const { orm, logger } = this.options;
    const log = { deliveryId: delivery.id, webhookId: delivery.webhookId, eventId: delivery.eventId };

    let webhook: Webhook | undefined;
    try {
      // Bounded, so the attempt always ends well within its lease.
      webhook = (await this.options.webhooks.getWebhookForDelivery({ id: delivery.webhookId }, { timeoutMs: webhooksCallTimeoutMs })).webhook;
    } catch (err) {
      const connectErr = ConnectError.from(err);
      if (connectErr.code !== Code.NotFound) {
        logger.warn({ ...log, error: connectErr.message }, "webhooks did not answer: delivery put off");
        await deferDelivery(orm, delivery, this.options.webhooksUnavailableDelayMs ?? workerDefaults.webhooksUnavailableDelayMs);
        return;
      }
    }
    if (!webhook) {
      await failWithoutAttempt(orm, delivery, "webhook deleted");
      logger.info(log, "webhook deleted: delivery stopped");
      return;
    }
    if (!webhook.enabled) {
      await failWithoutAttempt(orm, delivery, "webhook disabled");
      logger.info(log, "webhook disabled: delivery stopped");
      return;
    }

    const origin = originOf(webhook.url);
    const request = webhookRequest(delivery, webhook);
    const verdict = await this.breakers.run(origin, () =>
      postWebhook(request, { allowPrivateUrls: this.options.allowPrivateUrls, timeoutMs: this.options.timeoutMs }),
    );
    if (verdict.kind === "open") {
      await deferDelivery(orm, delivery, verdict.retryAt.getTime() - Date.now(), origin);
      logger.debug({ ...log, origin, retryAt: verdict.retryAt }, "receiver's breaker open: delivery put off");
      return;
    }
    const updated = await recordAttempt(orm, {
      deliveryId: delivery.id,
      leaseId: delivery.leaseId,
      result: verdict.result,
      manual: false,
      origin,
      retrySchedule: this.options.retrySchedule,
      random: this.options.random,
    });
    observeAttempt(classify(verdict.result), "automatic", delivery.payload);
    logAttempt(logger, { ...log, origin }, verdict.result, updated?.status, updated?.attempts);
    await applyDisablingRules(this.options, delivery.webhookId, verdict.result, updated?.failingSince);
  }
}

/** One line per attempt: never the body, the URL (it may hold a token) or the secret. */
export function logAttempt(
  logger: Logger,
  fields: Record<string, unknown>,
  result: SendResult,
  status: string | undefined,
  attempts: number | undefined,
): void {
  const line = {
    ...fields,
    attempt: attempts,
    status,
    statusCode: result.statusCode,
    durationMs: result.durationMs,
    outcome: classify(result),
    error: result.error,
  };
  if (classify(result) === "succeeded") logger.info(line, "webhook delivered");
  else logger.warn(line, "webhook attempt failed");
}
