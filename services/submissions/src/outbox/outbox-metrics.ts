// The outbox backlog on the process's shared registry, counted in the database on each scrape.
import { Gauge, metrics } from "@formsvc/platform/metrics.ts";
import { qualifiedTable, type MikroORM } from "@formsvc/platform/database.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { OutboxEntity } from "../entities/index.ts";
import { outboxFollowersTable, type OutboxBus } from "./outbox-retention.ts";

/**
 * The rows waiting on the bus: with Kafka those not yet published (by the partial index of unpublished rows);
 * on the embedded bus those after the position the stream's follower has acknowledged (by the txid index;
 * every row while none has acknowledged yet). The lowest follower counts when there are several.
 */
export async function outboxBacklog(orm: MikroORM, bus: OutboxBus): Promise<number> {
  if (bus === "kafka") return orm.em.fork().count(OutboxEntity, { publishedAt: null });
  const [{ count }] = await orm.em.getConnection().execute<{ count: string }[]>(
    `select count(*)::text as "count" from ${qualifiedTable(orm, OutboxEntity)}
      where "txid" > coalesce((select "position" from ${outboxFollowersTable(orm)} order by "position" limit 1), '0'::xid8)`,
    [],
    "all",
  );
  return Number(count);
}

/** Registers `outbox_backlog` (the rows waiting on `bus`) over `orm`; returns the gauge. */
export function registerOutboxBacklog(orm: MikroORM, bus: OutboxBus, logger?: Logger): Gauge {
  metrics.removeSingleMetric("outbox_backlog");
  return new Gauge({
    name: "outbox_backlog",
    help: "Outbox rows waiting on the bus: with Kafka not yet published; on the embedded bus after the position delivery's stream last acknowledged (every few seconds)",
    registers: [metrics],
    async collect() {
      try {
        this.set(await outboxBacklog(orm, bus));
      } catch (err) {
        // The database being away must not fail the whole scrape.
        logger?.warn({ err }, "outbox backlog could not be counted");
      }
    },
  });
}
