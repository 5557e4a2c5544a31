// The embedded bus (no KAFKA_BROKERS): submissions streams its outbox from a cursor on
// (StreamCompletions). What has arrived is handled as one batch (one statement stores its deliveries
// and the new cursor), so a restart resumes right after the last batch handled, and an event is never skipped (at worst
// seen twice, which creates nothing twice). When the stream ends or fails (submissions restarting,
// webhooks not answering), it is opened again from the durable cursor after a growing pause. Every few
// seconds (and once on stop) it tells submissions how far it has durably handled the outbox
// (AcknowledgeCompletions), so submissions' retention may remove the rows up to there.
import type { Client } from "@connectrpc/connect";
import type { MikroORM } from "@formsvc/platform/database.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { contextOf } from "@formsvc/platform/tracing.ts";
import type { StreamCompletionsResponse, SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { envelopeOf, eventFacts } from "@formsvc/platform/events.ts";
import type { Event } from "@formsvc/proto/events/v1/events_pb.js";
import { tablesOf } from "../entities/rows.ts";
import { maxEventsPerStatement, saveCursor, type AcceptEvents } from "./accept-event.ts";
import { withConsumerSpans } from "./consumer-spans.ts";
import { inBatches } from "./in-batches.ts";

/** The cursor row of the submissions outbox. */
export const outboxCursorName = "submissions-outbox";

export interface EmbeddedStreamOptions {
  orm: MikroORM;
  submissions: Pick<Client<typeof SubmissionsService>, "streamCompletions" | "acknowledgeCompletions">;
  acceptEvents: AcceptEvents;
  logger: Logger;
  cursorName?: string;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** The least time between two acknowledgments of the durable cursor to submissions (ms). 5,000 when absent. */
  acknowledgeEveryMs?: number;
}

export interface EmbeddedStream {
  stop(): Promise<void>;
}

/**
 * How long after delivery starts a failing stream is only a debug line: the services start together, so
 * submissions may not answer yet (the launcher gives each 30 s to be ready).
 */
const startQuietMs = 30_000;

/** The last cursor handled durably; 0 before the first event. */
export async function readCursor(orm: MikroORM, name: string = outboxCursorName): Promise<bigint> {
  const { cursor } = tablesOf(orm);
  const [row]: { position: string }[] = await orm.em.getConnection().execute(`select "position" from ${cursor} where "name" = ?`, [name], "all");
  return row ? BigInt(row.position) : 0n;
}


/** How long one acknowledgment may take (ms): it is never waited for but on stop. */
const acknowledgeTimeoutMs = 3_000;

/**
 * Tells submissions the durable cursor (AcknowledgeCompletions), off the stream's path: `saved` only notes
 * the cursor of a batch handled; a timer sends the latest one every `everyMs` when it moved, one call at a
 * time, and `stop` sends what is left. A failure is only logged (the next acknowledgment carries the cursor
 * on; until then submissions keeps rows longer): the first of a run as a warning, the others at debug, and
 * on stop at debug too (submissions may have stopped first).
 */
function cursorAcknowledger(options: { submissions: Pick<Client<typeof SubmissionsService>, "acknowledgeCompletions">; follower: string; everyMs: number; logger: Logger }) {
  const { logger } = options;
  let saved: bigint | undefined;
  let acknowledged: bigint | undefined;
  let sending: Promise<void> | undefined;
  let failures = 0;
  let stopping = false;
  const send = (): Promise<void> => {
    if (sending) return sending;
    if (saved === undefined || saved === acknowledged) return Promise.resolve();
    const cursor = saved;
    sending = options.submissions
      .acknowledgeCompletions({ follower: options.follower, cursor }, { timeoutMs: acknowledgeTimeoutMs })
      .then(
        () => {
          acknowledged = cursor;
          failures = 0;
        },
        (err: unknown) => {
          failures += 1;
          logger[failures === 1 && !stopping ? "warn" : "debug"](
            { error: err instanceof Error ? err.message : String(err), cursor: cursor.toString(), failures },
            "the outbox cursor could not be acknowledged to submissions: trying again later",
          );
        },
      )
      .finally(() => (sending = undefined));
    return sending;
  };
  const timer = setInterval(() => void send(), options.everyMs);
  timer.unref();
  return {
    saved(cursor: bigint) {
      if (saved === undefined || cursor > saved) saved = cursor;
    },
    async stop() {
      stopping = true;
      clearInterval(timer);
      await sending;
      await send();
    },
  };
}

/** A streamed outbox row's event: the envelope, or a FORM_RESPONSE written before it. */
function streamedEvent(message: StreamCompletionsResponse): Event | undefined {
  if (message.envelope?.event.case) return message.envelope;
  return message.event ? envelopeOf(message.event) : undefined;
}

export function startEmbeddedStream(options: EmbeddedStreamOptions): EmbeddedStream {
  const { orm, logger } = options;
  const name = options.cursorName ?? outboxCursorName;
  const batchSize = maxEventsPerStatement;
  const minBackoff = options.minBackoffMs ?? 200;
  const maxBackoff = options.maxBackoffMs ?? 10_000;
  const acknowledger = cursorAcknowledger({ submissions: options.submissions, follower: name, everyMs: options.acknowledgeEveryMs ?? 5_000, logger });
  let running = true;
  let abort = new AbortController();
  let pause: { timer: NodeJS.Timeout; resolve: () => void } | undefined;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      pause = { timer: setTimeout(resolve, ms), resolve };
    });

  async function follow(): Promise<boolean> {
    const after = await readCursor(orm, name);
    // Durable already: acknowledged too (one sent on the last stop may have failed).
    if (after > 0n) acknowledger.saved(after);
    const call = (abort = new AbortController());
    logger.debug({ afterCursor: after.toString() }, "following the submissions outbox");
    const stream = options.submissions.streamCompletions({ afterCursor: after }, { signal: call.signal });
    try {
      return await handleBatches(stream);
    } finally {
      // However the batches end (a failure to store one included), the call ends with them.
      call.abort();
    }
  }

  async function handleBatches(stream: AsyncIterable<StreamCompletionsResponse>): Promise<boolean> {
    let handled = false;
    for await (const messages of inBatches(stream, batchSize)) {
      const cursor = { name, position: messages.at(-1)!.cursor };
      const incoming = messages.flatMap((m) => {
        const event = streamedEvent(m);
        return event ? [{ event, eventId: eventFacts(event).eventId, requestId: m.requestId || undefined, parent: contextOf(m.traceParent) }] : [];
      });
      if (incoming.length === 0) {
        await saveCursor(orm, cursor);
      } else {
        await withConsumerSpans("process submissions outbox", "formsvc-outbox", incoming, (traces) =>
          options.acceptEvents(
            incoming.map(({ event, requestId }, i) => ({ event, requestId, trace: traces[i] })),
            { cursor },
          ),
        );
      }
      // Stored: submissions hears of it with the next acknowledgment.
      acknowledger.saved(cursor.position);
      handled = true;
      if (!running) break;
    }
    return handled;
  }

  const startedAt = performance.now();
  /** Once the stream has brought a batch; before, submissions may simply not be up yet. */
  let followedOnce = false;
  const done = (async () => {
    let backoff = minBackoff;
    while (running) {
      try {
        if (await follow()) {
          backoff = minBackoff;
          followedOnce = true;
        }
        if (running) logger.info("the submissions outbox stream ended: reconnecting");
      } catch (err) {
        if (!running) break;
        // Expected while submissions starts beside delivery (quiet for the first startQuietMs) or
        // restarts: one line, without a stack.
        const starting = !followedOnce && performance.now() - startedAt < startQuietMs;
        logger[starting ? "debug" : "warn"]({ error: err instanceof Error ? err.message : String(err), retryInMs: backoff }, "the submissions outbox stream failed: reconnecting");
      }
      if (!running) break;
      await sleep(backoff);
      backoff = Math.min(backoff * 2, maxBackoff);
    }
  })();

  return {
    async stop() {
      running = false;
      abort.abort();
      if (pause) {
        clearTimeout(pause.timer);
        pause.resolve();
      }
      await done;
      await acknowledger.stop();
    },
  };
}
