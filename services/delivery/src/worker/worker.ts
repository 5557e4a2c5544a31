// The delivery loop: claim due deliveries, attempt each (attempt/attempt.ts), repeat. It looks every
// ~200 ms and at once when told (a new event was accepted, or a slot became free).
//
// Spreading the work: per receiver origin, `perOriginConcurrency` (4) attempts at a time, widened one by
// one up to `maxPerOriginConcurrency` (32) while the receiver answers 2xx within `quickAnswerMs` (250 ms)
// and narrowed back at any other answer (origin-slots.ts); `maxInFlight` (128) in all. So a receiver that
// keeps up gets a burst in parallel, and one slow receiver (10 s per attempt) holds only its own 4 slots
// and never the others'. A claim leaves out the origins that are full; a claimed delivery whose origin
// filled up meanwhile is given back at once.
//
// Before each attempt the webhook is read as it is now (GetWebhookForDelivery): deleted => the
// delivery fails "webhook deleted", disabled => "webhook disabled", both without an attempt; webhooks
// not answering => the delivery waits 5 s, also without an attempt. The origin's breaker may push the
// delivery back to when it half-opens, again without an attempt.
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { Logger } from "@formsvc/platform/logger.ts";
import { contextOf, inSpan } from "@formsvc/platform/tracing.ts";
import type { Webhook, WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { attemptDelivery, type AttemptSettings } from "../attempt/attempt.ts";
import { successRecorder } from "../attempt/record.ts";
import { watchBreakers } from "../delivery-metrics.ts";
import { webhooksCallTimeoutMs } from "../intake/accept-event.ts";
import { OriginBreakers, type BreakerOptions } from "../sender/breaker.ts";
import { classify } from "../sender/send-result.ts";
import { OriginSlots } from "./origin-slots.ts";
import { claimDue, deferDelivery, defaultLeaseMs, failWithoutAttempt, releaseClaim, type ClaimedDelivery } from "./claim.ts";

export interface WorkerOptions extends AttemptSettings {
  webhooks: Pick<Client<typeof WebhooksService>, "getWebhookForDelivery" | "disableWebhook">;
  logger: Logger;
  pollIntervalMs?: number;
  leaseMs?: number;
  /** Attempts at a time per origin, at first and after any answer that was not a quick success. */
  perOriginConcurrency?: number;
  /** A success within this many ms widens its origin's limit. */
  quickAnswerMs?: number;
  maxInFlight?: number;
  /** How long a delivery waits when webhooks does not answer. */
  webhooksUnavailableDelayMs?: number;
  breakers?: BreakerOptions;
}

const workerDefaults = {
  pollIntervalMs: 200,
  perOriginConcurrency: 4,
  maxPerOriginConcurrency: 32,
  quickAnswerMs: 250,
  maxInFlight: 128,
  webhooksUnavailableDelayMs: 5_000,
} as const;

export class DeliveryWorker {
  private readonly options: WorkerOptions;
  private readonly breakers: OriginBreakers;
  private readonly slots: OriginSlots;
  private readonly successes: ReturnType<typeof successRecorder>;
  private readonly inFlight = new Set<Promise<void>>();
  private running = false;
  private loopDone: Promise<void> | undefined;
  private woken = false;
  private wakeUp: (() => void) | undefined;
  private unwatchBreakers: (() => void) | undefined;

  constructor(options: WorkerOptions) {
    this.options = options;
    this.breakers = new OriginBreakers({ logger: options.logger, ...options.breakers });
    this.successes = successRecorder(options.orm);
    this.slots = new OriginSlots({
      floor: options.perOriginConcurrency ?? workerDefaults.perOriginConcurrency,
      ceiling: options.maxPerOriginConcurrency ?? workerDefaults.maxPerOriginConcurrency,
      quickMs: options.quickAnswerMs ?? workerDefaults.quickAnswerMs,
    });
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

  private async loop(): Promise<void> {
    const maxInFlight = this.options.maxInFlight ?? workerDefaults.maxInFlight;
    while (this.running) {
      this.woken = false;
      const free = maxInFlight - this.inFlight.size;
      let claimed = 0;
      if (free > 0) {
        try {
          const rows = await claimDue(this.options.orm, { limit: free, leaseMs: this.options.leaseMs ?? defaultLeaseMs, excludeOrigins: this.slots.full() });
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
    if (!this.slots.take(origin)) {
      const released = releaseClaim(this.options.orm, delivery).catch((err: unknown) =>
        this.options.logger.error({ err, deliveryId: delivery.id }, "giving back a claimed delivery failed"),
      );
      this.track(released, undefined);
      return;
    }
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
        this.slots.give(origin);
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

    const attempt = await attemptDelivery(this.options, delivery, webhook, { trigger: "automatic", leaseId: delivery.leaseId, breakers: this.breakers, successes: this.successes });
    if (attempt.sent) {
      this.slots.observe(delivery.origin, { succeeded: classify(attempt.result) === "succeeded", durationMs: attempt.result.durationMs });
    } else {
      await deferDelivery(orm, delivery, attempt.retryAt.getTime() - Date.now(), attempt.origin);
      logger.debug({ ...log, origin: attempt.origin, retryAt: attempt.retryAt }, "receiver's breaker open: delivery put off");
    }
  }
}
