// The delivery tables' partitions (deliveries, attempts, payloads; by the event's time, `event_at`): made
// ahead of time, dropped behind once every delivery in them has finished and DELIVERY_RETENTION_DAYS has
// passed. The three tables are partitioned alike (a partition of each per span, named by its start), so
// a span's deliveries, their attempts and their payloads go together. Dropping a partition costs the
// same whatever it holds; only the rare rows that cannot go with their partition (a delivery still
// retrying when its span expires, rows in the default partition, an operator's `prune` to a time inside a
// span) are deleted row by row.
import type { MikroORM } from "@formsvc/platform/database.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import type { PruneTarget } from "@formsvc/platform/retention.ts";

/** The partitioned tables, all split at the same bounds. */
const partitioned = ["payloads", "deliveries", "attempts"] as const;
const schema = "delivery";

/** How long making or dropping a partition waits for the parent's lock before giving up until the next pass. */
const lockTimeout = "2s";

export interface Partition {
  /** The suffix every table's partition of this span shares: `<table>_<suffix>`. */
  suffix: string;
  /** Null for the default partition. */
  from: Date | null;
  to: Date | null;
}

/** `2026-11-27 00:00:00+00` (Postgres' text of a timestamptz bound) as a Date. */
function boundOf(text: string): Date {
  const m = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?)([+-]\d\d)(?::?(\d\d))?$/.exec(text);
  if (!m) throw new Error(`unexpected partition bound: ${text}`);
  return new Date(`${m[1]}T${m[2]}${m[3]}:${m[4] ?? "00"}`);
}

/** The partitions of one of the tables, oldest first, the default last. */
export async function listPartitions(orm: MikroORM, table: (typeof partitioned)[number] = "deliveries"): Promise<Partition[]> {
  const rows: { name: string; bound: string }[] = await orm.em.getConnection().execute(
    `select c."relname" as "name", pg_get_expr(c."relpartbound", c."oid") as "bound"
     from pg_inherits i join pg_class c on c."oid" = i."inhrelid"
     where i."inhparent" = ?::regclass`,
    [`"${schema}"."${table}"`],
    "all",
  );
  const partitions = rows.map(({ name, bound }) => {
    const suffix = name.slice(table.length + 1);
    if (bound === "DEFAULT") return { suffix, from: null, to: null };
    const m = /FROM \('([^']+)'\) TO \('([^']+)'\)/.exec(bound);
    if (!m) throw new Error(`unexpected partition bound of ${name}: ${bound}`);
    return { suffix, from: boundOf(m[1]), to: boundOf(m[2]) };
  });
  return partitions.sort((a, b) => (a.from === null ? 1 : b.from === null ? -1 : +a.from - +b.from));
}

/** `20261127t220000`: a partition's name by its start, in UTC. */
function suffixOf(from: Date): string {
  return from.toISOString().slice(0, 19).replace(/[-:]/g, "").replace("T", "t");
}

function partitionTable(table: (typeof partitioned)[number], suffix: string): string {
  return `"${schema}"."${table}_${suffix}"`;
}

/**
 * DDL in a transaction of its own, waiting at most `lockTimeout` for its locks. Each touches one table (and its
 * partition) only, so it never closes a cycle with the statements that use two of the tables (the intake writes
 * payloads then deliveries; a claim reads deliveries then payloads): no deadlock.
 */
async function ddl(orm: MikroORM, sql: string): Promise<void> {
  await orm.em.transactional(async (em) => {
    await em.execute(`set local lock_timeout = '${lockTimeout}'`);
    await em.execute(sql);
  });
}

/**
 * Makes the partitions of the coming spans: for each table, from where its last one ends (or the span `now`
 * falls in) until `aheadSpans` spans past `now`. A partition is made apart (`create table ... like`) and then
 * attached, which locks the parent only against other DDL, never against reads and writes. Replicas may run
 * it at once. Returns the suffixes this call made.
 */
export async function ensurePartitions(orm: MikroORM, options: { spanSeconds: number; aheadSpans?: number; now?: Date; logger?: Logger }): Promise<string[]> {
  const span = options.spanSeconds * 1000;
  const now = +(options.now ?? new Date());
  const current = Math.floor(now / span) * span;
  const until = now + span * (options.aheadSpans ?? 3);
  const made = new Set<string>();
  for (const table of partitioned) {
    const ranges = (await listPartitions(orm, table)).filter((p) => p.to !== null);
    // Behind by more than a span (the service was down): start at the current span, not in the past.
    let from = Math.max(ranges.length > 0 ? +ranges[ranges.length - 1].to! : current, current);
    for (; from < until; from += span) {
      const suffix = suffixOf(new Date(from));
      const partition = partitionTable(table, suffix);
      // Replicas making the same partition at once take turns (one table's lock), and the later finds it made.
      await orm.em.transactional(async (em) => {
        await em.execute(`set local lock_timeout = '${lockTimeout}'`);
        await em.execute(`select pg_advisory_xact_lock(hashtext('formsvc:delivery:partitions:${table}'))`);
        const [{ attached }] = await em.execute<{ attached: boolean }[]>(
          `select exists (select 1 from pg_inherits i join pg_class c on c."oid" = i."inhrelid" join pg_namespace n on n."oid" = c."relnamespace"
             where n."nspname" = ? and c."relname" = ?) as "attached"`,
          [schema, `${table}_${suffix}`],
        );
        if (attached) return;
        await em.execute(`create table if not exists ${partition} (like "${schema}"."${table}" including all)`);
        await em.execute(`alter table "${schema}"."${table}" attach partition ${partition} for values from ('${new Date(from).toISOString()}') to ('${new Date(from + span).toISOString()}')`);
        made.add(suffix);
      });
    }
  }
  if (made.size > 0) options.logger?.info({ partitions: [...made] }, "delivery partitions made");
  return [...made];
}

type Counts = Record<string, number>;

function countsOf(deliveries: number, attempts: number, payloads: number): Counts {
  return { [`${schema}.deliveries`]: deliveries, [`${schema}.attempts`]: attempts, [`${schema}.payloads`]: payloads };
}

function add(into: Counts, more: Counts): Counts {
  for (const [what, n] of Object.entries(more)) into[what] = (into[what] ?? 0) + n;
  return into;
}

/**
 * What goes of one partition for `olderThan`: all of it when the span ended before and none of its
 * deliveries is still pending or retrying ("drop"); otherwise its finished deliveries of events before
 * `olderThan`, with their attempts and the payloads no unfinished delivery still needs ("rows").
 */
async function planOf(orm: MikroORM, partition: Partition, olderThan: Date): Promise<"drop" | "rows" | "none"> {
  if (partition.from !== null && +partition.from >= +olderThan) return "none";
  if (partition.to === null || +partition.to > +olderThan) return "rows";
  const [row]: { unfinished: boolean }[] = await orm.em.getConnection().execute(
    `select exists (select 1 from ${partitionTable("deliveries", partition.suffix)} where "status" in ('pending', 'retrying')) as "unfinished"`,
    [],
    "all",
  );
  return row.unfinished ? "rows" : "drop";
}

/** The finished rows of a partition before `olderThan`, counted or deleted in one statement. */
async function finishedRows(orm: MikroORM, partition: Partition, olderThan: Date, remove: boolean): Promise<Counts> {
  const d = partitionTable("deliveries", partition.suffix);
  const a = partitionTable("attempts", partition.suffix);
  const p = partitionTable("payloads", partition.suffix);
  const finished = `"event_at" < ? and "status" in ('succeeded', 'failed')`;
  // A payload goes once no delivery of its event is left unfinished (the statement sees the rows as they were
  // before it: the finished ones it deletes do not count).
  const unneeded = `not exists (select 1 from ${d} u where u."event_id" = p."event_id" and u."event_at" = p."event_at" and u."status" in ('pending', 'retrying'))`;
  const sql = remove
    ? `with "gone" as (delete from ${d} where ${finished} returning "id", "event_id", "event_at"),
         "gone_attempts" as (delete from ${a} a using "gone" g where a."delivery_id" = g."id" and a."event_at" = g."event_at" returning 1),
         "gone_payloads" as (delete from ${p} p where p."event_at" < ? and ${unneeded} returning 1)
       select (select count(*) from "gone")::int as "d", (select count(*) from "gone_attempts")::int as "a", (select count(*) from "gone_payloads")::int as "p"`
    : `with "gone" as (select "id", "event_id", "event_at" from ${d} where ${finished})
       select (select count(*) from "gone")::int as "d",
         (select count(*) from ${a} a join "gone" g on a."delivery_id" = g."id" and a."event_at" = g."event_at")::int as "a",
         (select count(*) from ${p} p where p."event_at" < ? and ${unneeded})::int as "p"`;
  const [row]: { d: number; a: number; p: number }[] = await orm.em.getConnection().execute(sql, [olderThan, olderThan], "all");
  return countsOf(row.d, row.a, row.p);
}

/**
 * Every row of a span's partitions (those of the tables that still have one: a drop cut short leaves some):
 * counted, or dropped with them, a table at a time.
 */
async function wholePartition(orm: MikroORM, suffix: string, tables: readonly (typeof partitioned)[number][], remove: boolean): Promise<Counts> {
  const counts: Counts = {};
  for (const table of tables) {
    const [row]: { n: number }[] = await orm.em.getConnection().execute(`select count(*)::int as "n" from ${partitionTable(table, suffix)}`, [], "all");
    if (remove) await ddl(orm, `drop table ${partitionTable(table, suffix)}`);
    counts[`${schema}.${table}`] = row.n;
  }
  return counts;
}

async function pruneDeliveries(orm: MikroORM, olderThan: Date, remove: boolean, logger?: Logger): Promise<Counts> {
  const total = countsOf(0, 0, 0);
  const dropped: string[] = [];
  // Every span any table has a partition of; `of` names the tables that have it.
  const spans = new Map<string, { partition: Partition; of: (typeof partitioned)[number][] }>();
  for (const table of partitioned) {
    for (const partition of await listPartitions(orm, table)) {
      const span = spans.get(partition.suffix) ?? spans.set(partition.suffix, { partition, of: [] }).get(partition.suffix)!;
      span.of.push(table);
    }
  }
  for (const { partition, of } of spans.values()) {
    // A span whose deliveries partition is gone (a drop cut short) has nothing unfinished: the rest goes whole.
    const plan = of.includes("deliveries") ? await planOf(orm, partition, olderThan) : partition.to !== null && +partition.to <= +olderThan ? "drop" : "none";
    if (plan === "drop") {
      add(total, await wholePartition(orm, partition.suffix, of, remove));
      dropped.push(partition.suffix);
    } else if (plan === "rows" && of.length === partitioned.length) {
      add(total, await finishedRows(orm, partition, olderThan, remove));
    }
  }
  if (remove && dropped.length > 0) logger?.info({ partitions: dropped }, "delivery partitions dropped");
  return total;
}

export interface DeliveryRetentionOptions {
  /** DELIVERY_RETENTION_DAYS in milliseconds. */
  retentionMs: number;
  /** The span of a partition (RETENTION_PARTITION_SECONDS). */
  spanSeconds: number;
  logger?: Logger;
}

/**
 * Finished deliveries, their attempts and payloads, older than the retention: the periodic pass makes the
 * coming partitions, then drops the expired ones. Its bound is the start of the span the retention's
 * cut-off falls in, so it only ever drops whole partitions (no row by row delete of the span under way).
 */
export function deliveryRetention(orm: MikroORM, options: DeliveryRetentionOptions): PruneTarget {
  const span = options.spanSeconds * 1000;
  return {
    what: `${schema}.deliveries`,
    olderThanAt: (now) => new Date(Math.floor((+now - options.retentionMs) / span) * span),
    count: (olderThan) => pruneDeliveries(orm, olderThan, false),
    async remove(olderThan) {
      await ensurePartitions(orm, { spanSeconds: options.spanSeconds, logger: options.logger });
      return pruneDeliveries(orm, olderThan, true, options.logger);
    },
  };
}
