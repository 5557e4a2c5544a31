// StreamCompletions: the outbox in commit order, from a cursor, for delivery's embedded stream.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { qualifiedTable, type MikroORM } from "@formsvc/platform/database.ts";
import { decodeEvent } from "@formsvc/platform/events.ts";
import type { StreamCompletionsResponseSchema } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { OutboxEntity } from "../entities/index.ts";
import type { CompletionNotifier } from "./completion-notifier.ts";

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

/** The outbox's rows after `afterCursor`, then each row as it commits, until `signal` aborts. */
export async function* outboxStream(orm: MikroORM, options: OutboxStreamOptions): AsyncGenerator<MessageInitShape<typeof StreamCompletionsResponseSchema>> {
  const { signal, completions } = options;
  const outboxTable = qualifiedTable(orm, OutboxEntity);
  // The cursor is a transaction id. Only rows of transactions older than the oldest one still
  // running are read: any row committed later belongs to a newer transaction, so it sorts after
  // the cursor and is never skipped, while completions commit concurrently.
  let cursor = options.afterCursor < 0n ? 0n : options.afterCursor;
  while (!signal.aborted) {
    const rows = (await orm.em.getConnection().execute(
      `select "event_type", "payload", "request_id", "trace_parent", "txid"::text as "txid" from ${outboxTable}
        where "txid" > ?::text::xid8 and "txid" < pg_snapshot_xmin(pg_current_snapshot())
        order by "txid", "id" limit ?`,
      [cursor.toString(), streamBatch],
    )) as { event_type: string | null; payload: Buffer; request_id: string | null; trace_parent: string | null; txid: string }[];
    // One completion per transaction; should a batch end inside one, read that one again whole.
    const whole = rows.length === streamBatch ? rows.filter((r) => r.txid !== rows.at(-1)!.txid) : rows;
    for (const row of whole.length ? whole : rows) {
      if (signal.aborted) return;
      cursor = BigInt(row.txid);
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
    if (rows.length < streamBatch) await completions.next(options.pollMs, signal);
  }
}
