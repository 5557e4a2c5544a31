// The outbox rows submissions writes, each in the statement or transaction of what it tells of (a
// completion, a partial save that reaches another page, a forwarded form event).
import { qualifiedTable, type MikroORM } from "@formsvc/platform/database.ts";
import { currentRequestId } from "@formsvc/platform/request-context.ts";
import { traceparentOf } from "@formsvc/platform/tracing.ts";
import { encodeEvent, eventFacts, eventTypeOf } from "@formsvc/platform/events.ts";
import type { Event } from "@formsvc/proto/events/v1/events_pb.js";
import { OutboxEntity } from "../entities/index.ts";
import type { OutboxRead } from "./outbox-pauses.ts";

export type OutboxRow = ReturnType<typeof outboxRow>;

/** The outbox row of an event; the row's txid (a column default) orders it for the event stream. */
export function outboxRow(event: Event, createdAt: Date) {
  const { eventId, formId } = eventFacts(event);
  return {
    eventId,
    formId,
    eventType: eventTypeOf(event),
    payload: encodeEvent(event),
    requestId: currentRequestId() ?? null,
    traceParent: traceparentOf(),
    createdAt,
  };
}

/** The columns an insert of an outbox row names, in the order of `outboxParams`. */
export const outboxColumns = `("event_id", "form_id", "event_type", "payload", "request_id", "trace_parent", "created_at")`;

export function outboxParams(outbox: OutboxRow): unknown[] {
  return [outbox.eventId, outbox.formId, outbox.eventType, Buffer.from(outbox.payload), outbox.requestId, outbox.traceParent, outbox.createdAt];
}

/**
 * The outbox in commit order after `cursor` (a transaction id), for its followers (StreamCompletions, the
 * notifier): at most about `limit` rows, of whole transactions only, committed before every transaction
 * still running (any row committed later belongs to a newer transaction, so it sorts after the cursor and is
 * never skipped). A transaction may hold many rows (new responses are stored by group commit), so one that
 * fills `limit` alone is read whole, and a batch never ends inside one. `read`: what follows them (see
 * OutboxRead), for the follower's pause (OutboxPauses.afterPass).
 */
export async function wholeTransactionsAfter<Row extends { txid: string }>(
  orm: MikroORM,
  columns: string,
  cursor: string,
  limit: number,
): Promise<{ rows: Row[]; read: OutboxRead }> {
  const outboxTable = qualifiedTable(orm, OutboxEntity);
  const connection = orm.em.getConnection();
  // Rows beyond the horizon sort after every row before it (their transaction ids are higher), so the
  // readable ones come first, each transaction whole. The horizon is taken once (a scalar subquery), not per
  // row; the order is the column's (the index's), not the text "txid" of the output.
  const found = await connection.execute<(Row & { readable: boolean })[]>(
    `select ${columns}, o."txid"::text as "txid", o."txid" < (select pg_snapshot_xmin(pg_current_snapshot())) as "readable" from ${outboxTable} o
      where o."txid" > ?::text::xid8
      order by o."txid", o."id" limit ?`,
    [cursor, limit],
  );
  const firstHeld = found.findIndex((row) => !row.readable);
  if (firstHeld >= 0) return { rows: found.slice(0, firstHeld), read: "held back" };
  if (found.length < limit) return { rows: found, read: "caught up" };
  const lastTxid = found.at(-1)!.txid;
  if (found[0].txid !== lastTxid) return { rows: found.filter((row) => row.txid !== lastTxid), read: "more" };
  const whole = await connection.execute<Row[]>(`select ${columns}, "txid"::text as "txid" from ${outboxTable} where "txid" = ?::text::xid8 order by "id"`, [lastTxid]);
  return { rows: whole, read: "more" };
}
