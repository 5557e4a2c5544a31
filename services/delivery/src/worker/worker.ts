// The delivery loop: claim due deliveries, attempt each (attempt/attempt.ts), repeat. It looks every
// ~200 ms, and at once when told: new deliveries were stored due, or a slot became free while due
// deliveries may be waiting for one. New deliveries mostly skip the claim: the intake reserves slots for
// them and stores them already leased to this worker, which starts them as the statement returns (reserve).
//
// Spreading the work: per receiver origin, `perOriginConcurrency` (4) attempts at a time, widened one by
// one up to `maxPerOriginConcurrency` (32) while the receiver answers 2xx within `quickAnswerMs` (250 ms)
// and halved when it answers slowly, not at all, or asks for less (origin-slots.ts); `maxInFlight` (128) in all. So a receiver that
// keeps up gets a burst in parallel, and one slow receiver (10 s per attempt) holds only its own 4 slots
// and never the others'. A claim takes at most each origin's free slots (none of a full one); a claimed
// delivery whose origin filled up meanwhile waits in memory for its next free slot (given back to the
// table if that takes a third of its lease).
//
// Before each attempt the webhook is read as it is now (GetWebhookForDelivery): deleted => the
// delivery fails "webhook deleted", disabled => "webhook disabled", both without an attempt; webhooks
// not answering => the delivery waits 5 s, also without an attempt. The origin's breaker may push the
// delivery back to when it half-opens, again without an attempt.
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { Logger } from "@formsvc/platform/logger.ts";
import { newId } from "@formsvc/platform/ids.ts";
import { contextOf, inSpan } from "@formsvc/platform/tracing.ts";
import type { Webhook, WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { attemptDelivery, type AttemptSettings } from "../attempt/attempt.ts";
import { successRecorder } from "../attempt/record.ts";
import { watchBreakers } from "../delivery-metrics.ts";
import { webhooksCallTimeoutMs } from "../intake/accept-event.ts";
import { OriginBreakers, type BreakerOptions } from "../sender/breaker.ts";
import { OriginSlots } from "./origin-slots.ts";
import { claimDue, deferDelivery, defaultLeaseMs, failWithoutAttempt, releaseLease, type ClaimedDelivery, type SlotReservation } from "./claim.ts";

export interface WorkerOptions extends AttemptSettings {
  webhooks: Pick<Client<typeof WebhooksService>, "getWebhookForDelivery" | "disableWebhook" | "webhookGone">;
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
  /** Slots reserved by the intake and not settled yet. */
  private reserved = 0;
  /**
   * Leased deliveries whose origin had no slot free when they came (its limit narrowed, or the intake took
   * the room a claim counted on), per origin: each starts as a slot of its origin frees, or is given back
   * after `leaseMs / 3`.
   */
  private readonly waiting = new Map<string, { delivery: ClaimedDelivery; since: number }[]>();
  /** A claim is under way: a slot freed meanwhile wakes the loop (the claim may have left its origin out). */
  private claiming = false;
  /**
   * Due deliveries may be waiting for a slot (a claim left origins out or filled its batch, or some were
   * stored without a lease): a slot that becomes free then wakes the loop. Otherwise only polling looks.
   */
  private dueMayWait = true;
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
    // A reservation made before the stop settles once its statement returns (its deliveries then go back).
    while (this.reserved > 0) await new Promise((resolve) => setTimeout(resolve, 10));
    this.giveBackWaiting(() => true);
    await Promise.allSettled([...this.inFlight]);
    this.breakers.shutdown();
    this.unwatchBreakers?.();
  }

  private get pollIntervalMs(): number {
    return this.options.pollIntervalMs ?? workerDefaults.pollIntervalMs;
  }

  private get maxInFlight(): number {
    return this.options.maxInFlight ?? workerDefaults.maxInFlight;
  }

  private get leaseMs(): number {
    return this.options.leaseMs ?? defaultLeaseMs;
  }

  /**
   * Takes a slot for each of `origins` that has one free while the worker has room, for deliveries the
   * intake is about to store already leased to this worker: they are attempted without a claim.
   */
  reserve(origins: readonly string[]): SlotReservation {
    let busy = this.busy;
    const taken = origins.map((origin) => {
      if (!this.running || busy >= this.maxInFlight || !this.slots.take(origin)) return false;
      this.reserved++;
      busy++;
      return true;
    });
    let settled = false;
    return {
      leaseId: newId(),
      leaseMs: this.leaseMs,
      taken,
      settle: (stored) => {
        if (settled) return;
        settled = true;
        // Every slot back, then taken again by the deliveries stored, in the same turn: none is lost to a claim.
        origins.forEach((origin, i) => {
          if (!taken[i]) return;
          this.reserved--;
          this.slots.give(origin);
        });
        if (!this.running) {
          // Stopped meanwhile: they go back to the table, due, for whoever runs next.
          this.giveBack(stored);
          return;
        }
        for (const delivery of stored) this.dispatch(delivery);
        // Slots reserved for deliveries not stored: deliveries waiting for them, or due ones, may go.
        if (stored.length < taken.filter(Boolean).length) {
          for (const origin of new Set(origins.filter((_, i) => taken[i]))) this.startWaiting(origin);
          if (this.dueMayWait) this.wake();
        }
      },
    };
  }

  /**
   * Attempts under way or about to be. A claim under way is not counted: the intake may reserve meanwhile, so
   * for the moment both last, up to twice `maxInFlight` may be in flight (each origin's slots still hold).
   */
  private get busy(): number {
    let waiting = 0;
    for (const queue of this.waiting.values()) waiting += queue.length;
    return this.inFlight.size + this.reserved + waiting;
  }

  /** New deliveries were stored due (without a lease): look for them now. */
  dueStored(): void {
    this.dueMayWait = true;
    this.wake();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      this.woken = false;
      const staleSince = performance.now() - this.leaseMs / 3;
      this.giveBackWaiting((since) => since < staleSince);
      const free = this.maxInFlight - this.busy;
      let claimed = 0;
      let passedOver = false;
      if (free > 0) {
        // Anything stored due from now on sets it again; a slot freed meanwhile wakes the loop anyway.
        this.dueMayWait = false;
        this.claiming = true;
        try {
          const rooms = { of: this.slots.rooms(), otherwise: this.options.perOriginConcurrency ?? workerDefaults.perOriginConcurrency };
          for (const origin of this.waiting.keys()) rooms.of.set(origin, 0);
          const claim = await claimDue(this.options.orm, { limit: free, leaseMs: this.leaseMs, rooms });
          claimed = claim.deliveries.length;
          passedOver = claim.passedOver;
          if (passedOver || claimed === free || [...rooms.of.values()].includes(0)) this.dueMayWait = true;
          for (const delivery of claim.deliveries) this.dispatch(delivery);
        } catch (err) {
          this.dueMayWait = true;
          this.options.logger.error({ err }, "claiming due deliveries failed");
        } finally {
          this.claiming = false;
        }
      }
      // A full batch, or one cut short by an origin's room: more may be due at once (each pass takes some or ends).
      if (this.running && free > 0 && (claimed === free || (passedOver && claimed > 0)) && this.busy < this.maxInFlight) continue;
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

  /** Attempts a leased delivery in a slot of its origin, or keeps it waiting for one. */
  private dispatch(delivery: ClaimedDelivery): void {
    if (!this.slots.take(delivery.origin)) {
      const queue = this.waiting.get(delivery.origin) ?? [];
      queue.push({ delivery, since: performance.now() });
      this.waiting.set(delivery.origin, queue);
      return;
    }
    this.startAttempt(delivery);
  }

  /** Attempts a delivery in the slot of its origin it holds. */
  private startAttempt(delivery: ClaimedDelivery): void {
    const attempt = this.attempt(delivery).catch((err: unknown) =>
      // Its lease runs out and the delivery is tried again: at least once.
      this.options.logger.error({ err, deliveryId: delivery.id }, "delivery attempt could not be completed"),
    );
    this.track(attempt, delivery.origin);
  }

  /** Starts the deliveries waiting for `origin` while it has slots free, in the order they came. */
  private startWaiting(origin: string): boolean {
    const queue = this.waiting.get(origin);
    let started = false;
    while (queue && queue.length > 0 && this.slots.take(origin)) {
      this.startAttempt(queue.shift()!.delivery);
      started = true;
    }
    if (queue?.length === 0) this.waiting.delete(origin);
    return started;
  }

  /** Gives leased deliveries back to the table, due as before: one statement per lease (tracked, so stop() waits for them). */
  private giveBack(deliveries: readonly ClaimedDelivery[]): void {
    if (deliveries.length === 0) return;
    this.dueMayWait = true;
    const byLease = new Map<string, string[]>();
    for (const { id, leaseId } of deliveries) {
      const ids = byLease.get(leaseId);
      if (ids) ids.push(id);
      else byLease.set(leaseId, [id]);
    }
    for (const [leaseId, ids] of byLease) {
      const released = releaseLease(this.options.orm, ids, leaseId)
        .then(() => this.wake())
        .catch((err: unknown) => this.options.logger.error({ err, leaseId, deliveries: ids.length }, "giving back claimed deliveries failed"));
      this.track(released, undefined);
    }
  }

  /** Gives back the waiting deliveries `stale` picks (by when they began to wait). */
  private giveBackWaiting(stale: (since: number) => boolean): void {
    const given: ClaimedDelivery[] = [];
    for (const [origin, queue] of this.waiting) {
      const kept: typeof queue = [];
      for (const entry of queue) {
        if (stale(entry.since)) given.push(entry.delivery);
        else kept.push(entry);
      }
      if (kept.length > 0) this.waiting.set(origin, kept);
      else this.waiting.delete(origin);
    }
    this.giveBack(given);
  }

  private track(work: Promise<void>, origin: string | undefined): void {
    const tracked: Promise<void> = work.finally(() => {
      this.inFlight.delete(tracked);
      if (origin === undefined) return;
      this.slots.give(origin);
      // A slot is free: a delivery waiting for it goes, or due ones may (a claim under way may have missed it).
      if (!this.startWaiting(origin) && (this.dueMayWait || this.claiming)) this.wake();
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
      this.slots.observe(delivery.origin, attempt.result);
    } else {
      await deferDelivery(orm, delivery, attempt.retryAt.getTime() - Date.now(), attempt.origin);
      logger.debug({ ...log, origin: attempt.origin, retryAt: attempt.retryAt }, "receiver's breaker open: delivery put off");
    }
  }
}
