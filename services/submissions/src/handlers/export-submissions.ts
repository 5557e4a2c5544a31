// ExportSubmissions: a form's submissions for the CSV/XLSX exports at the store's speed. Each batch is
// one keyset read by index whose rows Postgres encodes as JSON: no entity, no message per answer.
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

/** The submissions of `query`, newest first, a batch of JSON texts at a time (ExportSubmissionsResponse's). */
export async function* exportBatches(em: EntityManager, responsesTable: string, query: ExportQuery, signal?: AbortSignal): AsyncGenerator<string[]> {
  const connection = em.getConnection();
  let after: { at: string; id: string } | undefined;
  while (!signal?.aborted) {
    const rows: { json: string; at: string; id: string }[] = await connection.execute(
      `select json_build_object('id', "id", 'completed', "completed", 'version', "version", 'createdAt', ${isoOf(`"created_at"`)},
                                'submittedAt', ${isoOf(`"submitted_at"`)}, 'answers', "answers")::text as "json",
              "created_at"::text as "at", "id"
         from ${responsesTable}
        where "form_id" = ? and (?::boolean is null or "completed" = ?::boolean)
          and (?::timestamptz is null or "submitted_at" >= ?::timestamptz) and (?::timestamptz is null or "submitted_at" < ?::timestamptz)
          and (?::timestamptz is null or ("created_at", "id") < (?::timestamptz, ?::text))
        order by "created_at" desc, "id" desc
        limit ${batchSize}`,
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
    if (rows.length > 0) yield rows.map((r) => r.json);
    if (rows.length < batchSize) return;
    after = rows.at(-1)!;
  }
}
