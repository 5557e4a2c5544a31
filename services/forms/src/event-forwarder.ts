// Forwards forms' outbox (form events written with their change) to the submissions outbox, each form's
// in order (eight forms at once), marking the rows once submissions has taken them. At least once: a row whose mark was lost is
// sent again, and RecordFormEvent adds nothing for an event id it has. It looks every second and at
// once when told (an event was written); while submissions does not answer it waits, doubling to 10 s.
import type { Client } from "@connectrpc/connect";
import type { MikroORM } from "@formsvc/platform/database.ts";
import { fromBinary } from "@bufbuild/protobuf";
import { eventTypeOf } from "@formsvc/platform/events.ts";
import { EventSchema } from "@formsvc/proto/events/v1/events_pb.js";
import type { Logger } from "@formsvc/platform/logger.ts";
import type { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { FormEventEntity } from "./entities/index.ts";

export interface EventForwarderOptions {
  orm: MikroORM;
  submissions: Pick<Client<typeof SubmissionsService>, "recordFormEvent">;
  logger: Logger;
  pollIntervalMs?: number;
  maxBackoffMs?: number;
}

export interface EventForwarder {
  /** Forwards now instead of at the next poll. */
  wake(): void;
  /** Forwards what is waiting once; the number of events forwarded (tests). */
  forwardOnce(): Promise<number>;
  stop(): Promise<void>;
}

const batchSize = 100;
/** Forms whose events are forwarded at once. */
const formsAtOnce = 8;
/** A call to submissions that takes longer fails, and is tried again later. */
const callTimeoutMs = 5_000;

export function startEventForwarder(options: EventForwarderOptions): EventForwarder {
  const { orm, logger } = options;
  const pollMs = options.pollIntervalMs ?? 1_000;
  const maxBackoffMs = options.maxBackoffMs ?? 10_000;
  let running = true;
  let wakeUp: (() => void) | undefined;
  let woken = false;
  // One round at a time: a round asked for (tests, a wake) while the loop's is in flight waits for it,
  // so the two never read the same unmarked rows and send them twice.
  let roundInFlight: Promise<unknown> = Promise.resolve();
  function forwardOnce(): Promise<number> {
    const round = roundInFlight.catch(() => undefined).then(forwardRound);
    roundInFlight = round;
    return round;
  }

  async function forwardRound(): Promise<number> {
    const em = orm.em.fork();
    const rows = await em.find(FormEventEntity, { forwardedAt: null }, { orderBy: { id: "asc" }, limit: batchSize });
    // Each form's events in order; forms side by side (their order does not matter to one another).
    const byForm = new Map<string, typeof rows>();
    for (const row of rows) byForm.set(row.formId, [...(byForm.get(row.formId) ?? []), row]);
    const forwarded: string[] = [];
    const forwardForm = async (formRows: typeof rows) => {
      for (const row of formRows) {
        const event = fromBinary(EventSchema, row.payload);
        await options.submissions.recordFormEvent({ event, requestId: row.requestId ?? "", traceParent: row.traceParent ?? "" }, { timeoutMs: callTimeoutMs });
        forwarded.push(row.id);
        logger.debug({ eventId: row.eventId, formId: row.formId, eventType: eventTypeOf(event) }, "form event forwarded");
      }
    };
    const queue = [...byForm.values()];
    const lanes = Array.from({ length: Math.min(formsAtOnce, queue.length) }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) await forwardForm(next);
    });
    const results = await Promise.allSettled(lanes);
    // One mark for all that submissions took; a row sent but not marked (a crash) is sent again, and adds nothing.
    if (forwarded.length > 0) await em.nativeUpdate(FormEventEntity, { id: { $in: forwarded } }, { forwardedAt: new Date() });
    const failed = results.find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
    return forwarded.length;
  }

  const sleep = (ms: number) =>
    woken
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          const timer = setTimeout(done, ms);
          function done() {
            clearTimeout(timer);
            wakeUp = undefined;
            resolve();
          }
          wakeUp = done;
        });

  const loop = (async () => {
    let backoff = pollMs;
    while (running) {
      woken = false;
      try {
        const forwarded = await forwardOnce();
        backoff = pollMs;
        if (forwarded === batchSize) continue;
      } catch (err) {
        logger.warn({ error: err instanceof Error ? err.message : String(err), retryInMs: backoff }, "forwarding form events failed: trying again");
        backoff = Math.min(backoff * 2, maxBackoffMs);
      }
      if (running) await sleep(backoff);
    }
  })();

  return {
    wake() {
      woken = true;
      wakeUp?.();
    },
    forwardOnce,
    async stop() {
      running = false;
      wakeUp?.();
      await loop;
    },
  };
}
