// ExportSubmissions: a form's submissions for the CSV/XLSX exports at the store's speed. Each batch is
// one keyset read by index whose rows Postgres encodes as one JSON text: no entity, no message per
// answer, one parse at the gateway.
import type { EntityManager } from "@mikro-orm/core";

/** Rows a batch holds: large enough that a batch's fixed costs vanish, small enough to hold one at a time. */
const batchSize = 2_000;

export interface ExportQuery {
  formId: string;
  /** Completed only, partial only, or both (undefined). */
  completed?: boolean;
  since?: Date;
  until?: Date;
}

/** ISO 8601 in UTC with milliseconds, as Date's toISOString writes it (and the API's timestamps). */
const isoOf = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The submissions of `query`, newest first, a JSON array a batch (ExportSubmissionsResponse's shape). */
export async function* exportBatches(em: EntityManager, responsesTable: string, query: ExportQuery, signal?: AbortSignal): AsyncGenerator<string> {
  const connection = em.getConnection();
  let after: { at: string; id: string } | undefined;
  while (!signal?.aborted) {
    const [batch] = await connection.execute<{ json: string; rows: number; last_at: string | null; last_id: string | null }[]>(
      `select coalesce(json_agg(json_build_object(
                'id', r."id", 'completed', r."completed", 'version', r."version", 'createdAt', ${isoOf(`r."created_at"`)},
                'submittedAt', ${isoOf(`r."submitted_at"`)}, 'answers', r."answers") order by r."created_at" desc, r."id" desc), '[]')::text as "json",
              count(*)::int as "rows", min(r."created_at")::text as "last_at", (array_agg(r."id" order by r."created_at", r."id"))[1] as "last_id"
         from (
           select "id", "completed", "version", "created_at", "submitted_at", "answers" from ${responsesTable}
            where "form_id" = ? and (?::boolean is null or "completed" = ?::boolean)
              and (?::timestamptz is null or "submitted_at" >= ?::timestamptz) and (?::timestamptz is null or "submitted_at" < ?::timestamptz)
              and (?::timestamptz is null or ("created_at", "id") < (?::timestamptz, ?::text))
            order by "created_at" desc, "id" desc
            limit ${batchSize}
         ) r`,
      [
        query.formId,
        query.completed ?? null,
        query.completed ?? null,
        query.since ?? null,
        query.since ?? null,
        query.until ?? null,
        query.until ?? null,
        after?.at ?? null,
        after?.at ?? null,
        after?.id ?? null,
      ],
      "all",
    );
    if (batch.rows > 0) yield batch.json;
    if (batch.rows < batchSize) return;
    after = { at: batch.last_at!, id: batch.last_id! };
  }
}
