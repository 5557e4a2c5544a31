// Outbox retention: a row goes once every consumer of the outbox has passed it and the safety window
// (RETENTION_SAFETY_SECONDS) since it was written is over. The consumers:
// - the bus: with Kafka the relay (the row is published); on the embedded bus each follower of
//   StreamCompletions, as far as it has acknowledged (AcknowledgeCompletions, `outbox_followers`): delivery
//   keeps its durable cursor in its own schema, which submissions never reads, and tells it every few seconds;
// - the response notifier, by its cursor (`notification_cursor`), while notifications run.
// Cursors are transaction ids (see wholeTransactionsAfter): a follower at position P has every row of a
// transaction up to P, and no transaction up to P can commit any more (P was below the oldest one running
// when it was read), so every row with txid <= P is passed for good.
import { qualifiedTable, type MikroORM } from "@formsvc/platform/database.ts";
import { pruneBatchRows, vacuumAfterPrune, type PruneTarget } from "@formsvc/platform/retention.ts";
import { OutboxEntity } from "../entities/index.ts";

/** The bus the outbox is consumed by. */
export type OutboxBus = "kafka" | "embedded";

export interface OutboxConsumers {
  bus: OutboxBus;
  /** Whether the response notifier follows the outbox (its cursor then holds rows back too). */
  notifications: boolean;
}

function schemaOf(orm: MikroORM): string {
  return orm.config.get("schema") ?? "public";
}

/** The followers' acknowledged positions (name, position xid8, updated_at). */
export function outboxFollowersTable(orm: MikroORM): string {
  return `"${schemaOf(orm)}"."outbox_followers"`;
}

/**
 * Records that `follower` has durably handled the outbox up to `cursor` (a StreamCompletions cursor). A
 * position never moves back (replicas of the follower may acknowledge out of order), and is held at the
 * oldest transaction still running: StreamCompletions never streams a row beyond it, so a cursor past it
 * (a follower that followed another database) cannot let rows go before anyone read them.
 */
export async function acknowledgeCompletions(orm: MikroORM, follower: string, cursor: bigint): Promise<void> {
  const table = outboxFollowersTable(orm);
  await orm.em.getConnection().execute(
    `insert into ${table} as f ("name", "position", "updated_at")
       values (?, least(?::text::xid8, pg_snapshot_xmin(pg_current_snapshot())), now())
     on conflict ("name") do update set "position" = greatest(f."position", excluded."position"), "updated_at" = excluded."updated_at"`,
    [follower, (cursor < 0n ? 0n : cursor).toString()],
    "run",
  );
}

/**
 * The highest txid every cursor-following consumer has passed (null when none follows by cursor: Kafka
 * without notifications), or undefined when a consumer has passed nothing yet (no follower acknowledged).
 */
async function passedUpTo(orm: MikroORM, consumers: OutboxConsumers): Promise<string | null | undefined> {
  const schema = schemaOf(orm);
  const [row] = await orm.em.getConnection().execute<{ followers: string | null; notifier: string | null }[]>(
    `select (select "position" from ${outboxFollowersTable(orm)} order by "position" limit 1)::text as "followers",
            (select "txid" from "${schema}"."notification_cursor")::text as "notifier"`,
    [],
    "all",
  );
  const bounds: (string | null)[] = [];
  if (consumers.bus === "embedded") bounds.push(row.followers);
  if (consumers.notifications) bounds.push(row.notifier);
  if (bounds.length === 0) return null;
  if (bounds.some((b) => b === null)) return undefined;
  return bounds.map((b) => BigInt(b!)).reduce((a, b) => (b < a ? b : a)).toString();
}

/** The rows every consumer has passed, written before `olderThan`, as a where clause over `o` and its parameters. */
async function passedRows(orm: MikroORM, consumers: OutboxConsumers, olderThan: Date): Promise<{ where: string; params: unknown[] } | undefined> {
  const upTo = await passedUpTo(orm, consumers);
  if (upTo === undefined) return undefined;
  const conditions = [`o."created_at" < ?`];
  const params: unknown[] = [olderThan];
  if (upTo !== null) {
    conditions.push(`o."txid" <= ?::text::xid8`);
    params.push(upTo);
  }
  if (consumers.bus === "kafka") conditions.push(`o."published_at" is not null`);
  return { where: conditions.join(" and "), params };
}

export interface OutboxTargetOptions extends OutboxConsumers {
  /** RETENTION_SAFETY_SECONDS: the periodic pass removes rows written longer ago than this. */
  safetySeconds: number;
  /** Rows deleted per statement. `pruneBatchRows` when absent. */
  batchSize?: number;
}

/**
 * `<schema>.outbox`: rows every consumer has passed, written before the bound (the periodic pass: the safety
 * window ago; the operator's prune: its own). Deleted a batch per statement, picked in the order of the
 * ("txid", "id") index and deleted by primary key (an array, so no statement scans the table), until one
 * comes back short.
 */
export function outboxTarget(orm: MikroORM, options: OutboxTargetOptions): PruneTarget {
  const table = qualifiedTable(orm, OutboxEntity);
  const batchSize = options.batchSize ?? pruneBatchRows;
  return {
    what: `${schemaOf(orm)}.outbox`,
    olderThanAt: (now) => new Date(now.getTime() - options.safetySeconds * 1000),
    async count(olderThan) {
      const rows = await passedRows(orm, options, olderThan);
      if (!rows) return 0;
      const [{ count }] = await orm.em.getConnection().execute<{ count: string }[]>(`select count(*)::text as "count" from ${table} o where ${rows.where}`, rows.params, "all");
      return Number(count);
    },
    async remove(olderThan) {
      const rows = await passedRows(orm, options, olderThan);
      if (!rows) return 0;
      let removed = 0;
      for (;;) {
        const result = await orm.em.getConnection().execute(
          `delete from ${table} where "id" = any(array(select o."id" from ${table} o where ${rows.where} order by o."txid", o."id" limit ?))`,
          [...rows.params, batchSize],
          "run",
        );
        const deleted = Number((result as { affectedRows?: number }).affectedRows ?? 0);
        removed += deleted;
        if (deleted < batchSize) break;
      }
      await vacuumAfterPrune(orm, table, removed);
      return removed;
    },
  };
}
