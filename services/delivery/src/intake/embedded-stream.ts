// The embedded bus (no KAFKA_BROKERS): submissions streams its outbox from a cursor on
// (StreamCompletions). Each event's deliveries are stored in the same transaction as the new cursor,
// so a restart resumes right after the last event handled, and an event is never skipped (at worst
// seen twice, which creates nothing twice). When the stream ends or fails (submissions restarting,
// webhooks not answering), it is opened again from the durable cursor after a growing pause.
import type { Client } from "@connectrpc/connect";
import type { MikroORM } from "@formsvc/platform/database.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { runWithRequestId } from "@formsvc/platform/request-context.ts";
import { contextOf, inSpan, SpanKind } from "@formsvc/platform/tracing.ts";
import type { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { tablesOf } from "../entities/rows.ts";
import { saveCursor, type AcceptEvent } from "./accept-event.ts";

/** The cursor row of the submissions outbox. */
export const outboxCursorName = "submissions-outbox";

export interface EmbeddedStreamOptions {
  orm: MikroORM;
  submissions: Pick<Client<typeof SubmissionsService>, "streamCompletions">;
  acceptEvent: AcceptEvent;
  logger: Logger;
  cursorName?: string;
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

export interface EmbeddedStream {
  stop(): Promise<void>;
}

/** The last cursor handled durably; 0 before the first event. */
export async function readCursor(orm: MikroORM, name: string = outboxCursorName): Promise<bigint> {
  const { cursor } = tablesOf(orm);
  const [row]: { position: string }[] = await orm.em.fork().execute(`select "position" from ${cursor} where "name" = ?`, [name], "all");
  return row ? BigInt(row.position) : 0n;
}


export function startEmbeddedStream(options: EmbeddedStreamOptions): EmbeddedStream {
  const { orm, logger } = options;
  const name = options.cursorName ?? outboxCursorName;
  const minBackoff = options.minBackoffMs ?? 200;
  const maxBackoff = options.maxBackoffMs ?? 10_000;
  let running = true;
  let abort = new AbortController();
  let pause: { timer: NodeJS.Timeout; resolve: () => void } | undefined;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      pause = { timer: setTimeout(resolve, ms), resolve };
    });

  async function follow(): Promise<boolean> {
    let handled = false;
    const after = await readCursor(orm, name);
    abort = new AbortController();
    logger.debug({ afterCursor: after.toString() }, "following the submissions outbox");
    for await (const message of options.submissions.streamCompletions({ afterCursor: after }, { signal: abort.signal })) {
      const cursor = { name, position: message.cursor };
      if (message.event) {
        const event = message.event;
        const attributes = { "messaging.system": "formsvc-outbox", "messaging.operation.type": "process", "messaging.message.id": event.eventId };
        await inSpan("process submissions outbox", { kind: SpanKind.CONSUMER, parent: contextOf(message.traceParent), attributes }, () =>
          runWithRequestId(message.requestId || undefined, () => options.acceptEvent(event, { cursor })),
        );
      } else {
        await saveCursor(orm, cursor);
      }
      handled = true;
      if (!running) break;
    }
    return handled;
  }

  const done = (async () => {
    let backoff = minBackoff;
    while (running) {
      try {
        if (await follow()) backoff = minBackoff;
        if (running) logger.info("the submissions outbox stream ended: reconnecting");
      } catch (err) {
        if (!running) break;
        // Expected while submissions restarts: one line, without a stack.
        logger.warn({ error: err instanceof Error ? err.message : String(err), retryInMs: backoff }, "the submissions outbox stream failed: reconnecting");
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
    },
  };
}
