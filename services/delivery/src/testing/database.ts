// A fresh delivery database for a test file. Imported by tests only.
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { entities } from "../entities/index.ts";
import { migrations } from "../migrations/index.ts";
import { deliveryFromRow, payloadColumn, tablesOf, toDate, type DeliveryRow } from "../entities/rows.ts";
import type { Attempt, Delivery } from "../entities/index.ts";

export interface DeliveryTestDatabase {
  database: TestDatabase;
  orm: MikroORM;
  options: { databaseUrl: string; schema: string; entities: typeof entities; migrations: typeof migrations };
  /** Every delivery, oldest first (optionally of one webhook). */
  deliveries(webhookId?: string): Promise<Delivery[]>;
  attempts(deliveryId: string): Promise<Attempt[]>;
  /** Empties every table. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

export async function openTestDatabase(prefix: string): Promise<DeliveryTestDatabase> {
  const database = await createTestDatabase(prefix);
  const options = { databaseUrl: database.databaseUrl, schema: "delivery", entities, migrations };
  const orm = await openDatabase({ ...options, poolSize: 20 });
  const t = tablesOf(orm);
  const sql = <T>(query: string, params: unknown[] = []) => orm.em.fork().execute(query, params, "all") as Promise<T>;
  return {
    database,
    orm,
    options,
    async deliveries(webhookId) {
      const rows = await sql<DeliveryRow[]>(
        `select d.*, ${payloadColumn(t)} from ${t.deliveries} d ${webhookId ? `where "webhook_id" = ?` : ""} order by "created_at", "id"`,
        webhookId ? [webhookId] : [],
      );
      return rows.map(deliveryFromRow);
    },
    async attempts(deliveryId) {
      const rows = await sql<any[]>(`select * from ${t.attempts} where "delivery_id" = ? order by "number"`, [deliveryId]);
      return rows.map((r) => ({
        id: r.id,
        deliveryId: r.delivery_id,
        eventAt: toDate(r.event_at),
        number: r.number,
        statusCode: r.status_code,
        durationMs: r.duration_ms,
        error: r.error,
        responseBody: r.response_body,
        manual: r.manual,
        createdAt: toDate(r.created_at),
      })) as Attempt[];
    },
    async reset() {
      await sql(`truncate ${t.attempts}, ${t.deliveries}, ${t.payloads}, ${t.cursor}, ${t.failingWebhooks}`);
    },
    async close() {
      await orm.close(true);
      await database.drop();
    },
  };
}
