// The outbox rows submissions writes, each in the statement or transaction of what it tells of (a
// completion, a partial save that reaches another page, a forwarded form event).
import { qualifiedTable, type MikroORM } from "@formsvc/platform/database.ts";
import { currentRequestId } from "@formsvc/platform/request-context.ts";
import { traceparentOf } from "@formsvc/platform/tracing.ts";
import { encodeEvent, eventFacts, eventTypeOf } from "@formsvc/platform/events.ts";
import type { Event } from "@formsvc/proto/events/v1/events_pb.js";
import { OutboxEntity } from "../entities/index.ts";

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
 * fills `limit` alone is read whole, and a batch never ends inside one. `more`: rows may follow at once.
 */
export async function wholeTransactionsAfter<Row extends { txid: string }>(
  orm: MikroORM,
  columns: string,
  cursor: string,
  limit: number,
): Promise<{ rows: Row[]; more: boolean }> {
  const outboxTable = qualifiedTable(orm, OutboxEntity);
  const connection = orm.em.getConnection();
  const rows = await connection.execute<Row[]>(
    `select ${columns}, "txid"::text as "txid" from ${outboxTable}
      where "txid" > ?::text::xid8 and "txid" < pg_snapshot_xmin(pg_current_snapshot())
      order by "txid", "id" limit ?`,
    [cursor, limit],
  );
  if (rows.length < limit) return { rows, more: false };
  const lastTxid = rows.at(-1)!.txid;
  if (rows[0].txid !== lastTxid) return { rows: rows.filter((row) => row.txid !== lastTxid), more: true };
  const whole = await connection.execute<Row[]>(`select ${columns}, "txid"::text as "txid" from ${outboxTable} where "txid" = ?::text::xid8 order by "id"`, [lastTxid]);
  return { rows: whole, more: true };
}
