// Outbox rows and acknowledgments for tests of outbox retention and the backlog. Imported by tests only.
import type { MikroORM } from "@formsvc/platform/database.ts";
import { newId } from "@formsvc/platform/ids.ts";
import { acknowledgeCompletions } from "../outbox/outbox-retention.ts";

/** Writes an outbox row in a transaction of its own, written at `createdAt`; its id and txid. */
export async function addOutboxRow(orm: MikroORM, createdAt = new Date(), published = false): Promise<{ id: string; txid: bigint }> {
  const [row] = await orm.em.getConnection().execute<{ id: string; txid: string }[]>(
    `insert into "submissions"."outbox" ("event_id", "form_id", "payload", "created_at", "published_at")
       values (?, 'f1', '\\x00', ?, ?) returning "id"::text as "id", "txid"::text as "txid"`,
    [newId(), createdAt, published ? new Date() : null],
  );
  return { id: row.id, txid: BigInt(row.txid) };
}

/** The outbox's row ids, in order. */
export async function outboxIds(orm: MikroORM): Promise<string[]> {
  const rows = await orm.em.getConnection().execute<{ id: string }[]>(`select "id"::text as "id" from "submissions"."outbox" order by "id"`);
  return rows.map((r) => r.id);
}

/**
 * Acknowledges `txid` for `follower` once StreamCompletions could have streamed it (no transaction older
 * than it still running, in any database of the server): before, the acknowledgment is held below it.
 */
export async function acknowledgeWhenReadable(orm: MikroORM, follower: string, txid: bigint): Promise<void> {
  for (let tries = 0; ; tries++) {
    await acknowledgeCompletions(orm, follower, txid);
    const [row] = await orm.em
      .getConnection()
      .execute<{ position: string }[]>(`select "position"::text as "position" from "submissions"."outbox_followers" where "name" = ?`, [follower]);
    if (BigInt(row.position) >= txid) return;
    if (tries > 500) throw new Error(`the acknowledgment stays at ${row.position}, before ${txid}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
