// The outbox backlog on the process's shared registry, counted in the database on each scrape.
import { Gauge, metrics } from "@formsvc/platform/metrics.ts";
import type { MikroORM } from "@formsvc/platform/database.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { OutboxEntity } from "../entities/index.ts";

/** Rows not yet published: the Kafka relay's backlog. It keeps growing on the embedded bus. */
export async function outboxBacklog(orm: MikroORM): Promise<number> {
  return orm.em.fork().count(OutboxEntity, { publishedAt: null });
}

/** Registers `outbox_backlog` (rows not yet published) over `orm`; returns the gauge. */
export function registerOutboxBacklog(orm: MikroORM, logger?: Logger): Gauge {
  metrics.removeSingleMetric("outbox_backlog");
  return new Gauge({
    name: "outbox_backlog",
    help: "Outbox rows not yet published (on the embedded bus it only grows: delivery reads it by cursor)",
    registers: [metrics],
    async collect() {
      try {
        this.set(await outboxBacklog(orm));
      } catch (err) {
        // The database being away must not fail the whole scrape.
        logger?.warn({ err }, "outbox backlog could not be counted");
      }
    },
  });
}
