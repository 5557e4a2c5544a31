// StreamCompletions: the outbox in commit order, from a cursor, for delivery's embedded stream.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { MikroORM } from "@formsvc/platform/database.ts";
import { decodeEvent } from "@formsvc/platform/events.ts";
import type { StreamCompletionsResponseSchema } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import type { CompletionNotifier } from "./completion-notifier.ts";
import { outboxPauses } from "./outbox-pauses.ts";
import { wholeTransactionsAfter } from "./outbox-rows.ts";

/** Outbox rows read per query by StreamCompletions. */
const streamBatch = 100;

export interface OutboxStreamOptions {
  /** The cursor of the last row the reader has (a transaction id); from the start when 0 or less. */
  afterCursor: bigint;
  /** Ends the stream. */
  signal: AbortSignal;
  /** Completions of this process: each one wakes an idle stream at once. */
  completions: CompletionNotifier;
  /** How often an idle stream looks for rows committed by other replicas (ms). */
  pollMs: number;
}

/**
 * The outbox's rows after `afterCursor`, then each row as it commits, until `signal` aborts. A completion
 * that commits while a pass reads ends the next pause at once, so no row waits for a poll.
 */
export async function* outboxStream(orm: MikroORM, options: OutboxStreamOptions): AsyncGenerator<MessageInitShape<typeof StreamCompletionsResponseSchema>> {
  const { signal } = options;
  const pauses = outboxPauses(options.completions);
  const stop = () => pauses.stop();
  signal.addEventListener("abort", stop, { once: true });
  // The cursor is a transaction id: a row carries its transaction's id only when it is the transaction's
  // last, the others the cursor before it, so a reader that keeps the cursor of any row it has taken
  // reads a transaction it took only in part again whole (a delivery is made once per event anyway).
  let cursor = options.afterCursor < 0n ? 0n : options.afterCursor;
  try {
    while (pauses.running && !signal.aborted) {
      pauses.beginPass();
      const { rows, read } = await wholeTransactionsAfter<{ event_type: string | null; payload: Buffer; request_id: string | null; trace_parent: string | null; txid: string }>(
        orm,
        `"event_type", "payload", "request_id", "trace_parent"`,
        cursor.toString(),
        streamBatch,
      );
      for (const [i, row] of rows.entries()) {
        if (signal.aborted) return;
        if (rows[i + 1]?.txid !== row.txid) cursor = BigInt(row.txid);
        const envelope = decodeEvent(row.payload, row.event_type);
        yield {
          cursor,
          envelope,
          // Also bare, for a delivery older than the envelope (it reads completions only).
          event: envelope.event.case === "formResponse" ? envelope.event.value : undefined,
          requestId: row.request_id ?? "",
          traceParent: row.trace_parent ?? "",
        };
      }
      await pauses.afterPass(read, options.pollMs);
    }
  } finally {
    signal.removeEventListener("abort", stop);
    pauses.stop();
  }
}
