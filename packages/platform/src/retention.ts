// Retention: what each service removes on its own as rows age (finished deliveries, consumed outbox rows,
// expired sessions, sent mail ...), the operator's `prune` over RPC, and each table's size on /metrics.
// A service names its targets once; the periodic pass, the RPC and the CLI all go through them.
import type { ConnectRouter } from "@connectrpc/connect";
import { MaintenanceService } from "@formsvc/proto/maintenance/v1/maintenance_pb.js";
import type { MikroORM } from "./database.ts";
import type { Logger } from "./logger.ts";
import { Counter, Gauge, metrics } from "./metrics.ts";

/** One kind of row a service removes as it ages. */
export interface PruneTarget {
  /** `<schema>.<what>`: the key of `prune`'s output and of the pruned-rows metric. */
  what: string;
  /**
   * The age bound of the periodic pass at `now` (rows older go), or undefined when this target has no bound
   * of its own (it then goes only with the operator's `prune`).
   */
  olderThanAt(now: Date): Date | undefined;
  /** How many rows `remove(olderThan)` would remove now. */
  count(olderThan: Date): Promise<Removed>;
  /** Removes what this target allows older than `olderThan`; how many rows went. */
  remove(olderThan: Date): Promise<Removed>;
}

/** Rows removed: a count of the target's `what`, or counts by `what` for a target that removes several kinds together. */
export type Removed = number | Record<string, number>;

function byWhat(target: PruneTarget, removed: Removed): Record<string, number> {
  return typeof removed === "number" ? { [target.what]: removed } : removed;
}

/** Rows one statement of a prune deletes: each statement's locks and WAL stay small however much has aged. */
export const pruneBatchRows = 5_000;

/**
 * Vacuums a table a prune has just deleted `removed` rows of, so the space they held is reused at once: a table
 * pruned row by row (a queue, such as the outbox) would otherwise keep growing until autovacuum comes, which
 * some servers turn off and which by default waits for a fifth of the table to be dead. Only the table's own
 * pages are read; nothing is locked against reads or writes.
 */
export async function vacuumAfterPrune(orm: MikroORM, table: string, removed: number): Promise<void> {
  if (removed > 0) await orm.em.getConnection().execute(`vacuum ${table}`, [], "run");
}

/**
 * Vacuums tables a service churns on its own (a queue it deletes from as it consumes, a row per key it inserts
 * and deletes over and over) every `intervalMs`: for the same reason as `vacuumAfterPrune`, such a table grows
 * with every change until vacuumed, and autovacuum may never come. `stop` waits for a vacuum under way.
 */
export function startChurnVacuum(orm: MikroORM, tables: readonly string[], options: { logger: Logger; intervalMs?: number }) {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(async () => {
      for (const table of tables) {
        try {
          await orm.em.getConnection().execute(`vacuum ${table}`, [], "run");
        } catch (err) {
          options.logger.warn({ err, table }, "vacuum failed (tried again next interval)");
        }
      }
    });
  }, options.intervalMs ?? 60_000);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}

/** One table's aged rows, for `tableRetention`. */
export interface TableRetention {
  /** The table, in the ORM's schema; the target's `what` is `<schema>.<table>`. */
  table: string;
  olderThanAt(now: Date): Date | undefined;
  /** The condition (SQL with `?` parameters) picking the rows that go for `olderThan`; an index should serve it. */
  where(olderThan: Date): { sql: string; params: unknown[] };
  /** A statement run before each batch's delete in the batch's own transaction: a setting the table's guard trigger checks. */
  beforeDelete?: string;
}

/**
 * A target over one table's rows that `where` picks: `count` counts them and `remove` deletes them
 * `pruneBatchRows` at a time, a statement each, until a batch comes up short.
 */
export function tableRetention(orm: MikroORM, spec: TableRetention): PruneTarget {
  const schema = orm.config.get("schema") ?? "public";
  const table = `"${schema}"."${spec.table}"`;
  const connection = () => orm.em.getConnection();
  return {
    what: `${schema}.${spec.table}`,
    olderThanAt: spec.olderThanAt,
    async count(olderThan) {
      const { sql, params } = spec.where(olderThan);
      const [row] = await connection().execute<{ rows: number }[]>(`select count(*)::int as "rows" from ${table} where ${sql}`, params);
      return row.rows;
    },
    async remove(olderThan) {
      const { sql, params } = spec.where(olderThan);
      let removed = 0;
      for (;;) {
        // The batch is picked by the condition's index and deleted by row address (a TID scan): a key list
        // `in (select ...)` plans as a semi-join that reads every aged row again per batch. The condition is
        // checked again on each row deleted: one changed since it was picked (an expired Idempotency-Key
        // claimed anew, say) stays.
        const statement = `with gone as (delete from ${table} where ctid = any(array(select ctid from ${table} where ${sql} limit ${pruneBatchRows})) and ${sql} returning 1)
           select count(*)::int as "rows" from gone`;
        const { beforeDelete } = spec;
        const [row] = beforeDelete
          ? await orm.em.fork().transactional(async (em) => {
              await em.execute(beforeDelete);
              return em.execute<{ rows: number }[]>(statement, [...params, ...params]);
            })
          : await connection().execute<{ rows: number }[]>(statement, [...params, ...params]);
        removed += row.rows;
        if (row.rows < pruneBatchRows) break;
      }
      await vacuumAfterPrune(orm, table, removed);
      return removed;
    },
  };
}

const rowsPruned = new Counter({
  name: "retention_rows_pruned_total",
  help: "Rows removed by retention (periodic passes and the operator's prune), by what",
  labelNames: ["what"] as const,
  registers: [metrics],
});

/** Removes (or only counts) every target's rows older than `olderThan`; counts by `what`. */
export async function prune(targets: readonly PruneTarget[], olderThan: Date, dryRun: boolean): Promise<Record<string, number>> {
  const removed: Record<string, number> = {};
  for (const target of targets) {
    const counts = byWhat(target, dryRun ? await target.count(olderThan) : await target.remove(olderThan));
    Object.assign(removed, counts);
    if (!dryRun) for (const [what, n] of Object.entries(counts)) rowsPruned.inc({ what }, n);
  }
  return removed;
}

/** One periodic pass: each target with its own bound; one log line with what went. */
export async function retentionPass(targets: readonly PruneTarget[], logger: Logger, now = new Date()): Promise<Record<string, number>> {
  const started = performance.now();
  const removed: Record<string, number> = {};
  for (const target of targets) {
    const olderThan = target.olderThanAt(now);
    if (!olderThan) continue;
    try {
      const counts = byWhat(target, await target.remove(olderThan));
      Object.assign(removed, counts);
      for (const [what, n] of Object.entries(counts)) rowsPruned.inc({ what }, n);
    } catch (err) {
      logger.warn({ err, what: target.what }, "retention: pruning failed (tried again next pass)");
    }
  }
  logger.info({ removed, ms: Math.round(performance.now() - started) }, "retention pass");
  return removed;
}

/** Runs a pass soon after start and then every `intervalMs`; `stop` waits for a pass under way. */
export function startRetention(targets: readonly PruneTarget[], options: { intervalMs: number; logger: Logger; firstAfterMs?: number }) {
  let running: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const run = () => {
    if (stopped) return;
    running = retentionPass(targets, options.logger).catch(() => undefined);
  };
  const first = setTimeout(run, options.firstAfterMs ?? Math.min(options.intervalMs, 5_000));
  const timer = setInterval(() => void running.then(run), options.intervalMs);
  first.unref();
  timer.unref();
  return {
    /** Runs a pass now (after any under way); resolves with what it removed. */
    passNow: () => (running = running.then(() => retentionPass(targets, options.logger))) as Promise<Record<string, number>>,
    stop: async () => {
      stopped = true;
      clearTimeout(first);
      clearInterval(timer);
      await running.catch(() => undefined);
    },
  };
}

/** Serves MaintenanceService.Prune over the service's targets. */
export function maintenanceRoutes(router: ConnectRouter, targets: readonly PruneTarget[], logger: Logger): void {
  router.service(MaintenanceService, {
    async prune(request) {
      const olderThan = new Date(Number(request.olderThanMs));
      const removed = await prune(targets, olderThan, request.dryRun);
      logger.info({ removed, olderThan, dryRun: request.dryRun }, "prune by the operator");
      return { removed: Object.fromEntries(Object.entries(removed).map(([what, n]) => [what, BigInt(n)])) };
    },
  });
}

type TableSize = { table: string; rows: string; bytes: string };

/** The schemas whose tables the gauges below report (one process may host several services). */
const sizeSources = new Map<string, { read: () => Promise<TableSize[]>; logger?: Logger }>();

// One catalogue read per schema and scrape serves both gauges.
let scrape: Promise<Map<string, TableSize[]>> | undefined;
function sizesOfEverySchema(): Promise<Map<string, TableSize[]>> {
  return (scrape ??= (async () => {
    const sizes = new Map<string, TableSize[]>();
    for (const [schema, source] of sizeSources) {
      try {
        sizes.set(schema, await source.read());
      } catch (err) {
        // The database being away must not fail the whole scrape.
        source.logger?.warn({ err }, "table sizes could not be read");
      }
    }
    return sizes;
  })().finally(() => setTimeout(() => (scrape = undefined), 100).unref()));
}

function sizeGauge(name: string, help: string, pick: (row: TableSize) => string): Gauge {
  return new Gauge({
    name,
    help,
    labelNames: ["table"] as const,
    registers: [metrics],
    async collect() {
      for (const [schema, rows] of await sizesOfEverySchema()) for (const row of rows) this.set({ table: `${schema}.${row.table}` }, Number(pick(row)));
    },
  });
}

sizeGauge("table_rows", "Rows of each table (the planner's estimate; partitions summed)", (row) => row.rows);
sizeGauge("table_bytes", "Bytes of each table with its indexes and TOAST (partitions summed)", (row) => row.bytes);

/**
 * Reports `table_rows` (the planner's estimate) and `table_bytes` (with indexes and TOAST) of every table of
 * `schema` on /metrics, a partitioned table as the sum of its partitions; read from the catalogue on each scrape.
 */
export function registerTableSizes(orm: MikroORM, schema: string, logger?: Logger): () => void {
  const source = {
    logger,
    read: () =>
      orm.em.getConnection().execute<TableSize[]>(
        `select c."relname" as "table", coalesce(sum(greatest(p."reltuples", 0)), 0)::bigint::text as "rows",
           coalesce(sum(pg_total_relation_size(p."oid")), 0)::bigint::text as "bytes"
         from pg_class c join pg_namespace n on n."oid" = c."relnamespace"
         cross join lateral (
           select t."relid" from pg_partition_tree(c."oid") t where t."isleaf" and c."relkind" = 'p' union all select c."oid" where c."relkind" = 'r') leaf
         join pg_class p on p."oid" = leaf."relid"
         where n."nspname" = ? and c."relkind" in ('r', 'p') and not c."relispartition"
         group by c."relname"`,
        [schema],
        "all",
      ),
  };
  sizeSources.set(schema, source);
  return () => {
    if (sizeSources.get(schema) === source) sizeSources.delete(schema);
  };
}
