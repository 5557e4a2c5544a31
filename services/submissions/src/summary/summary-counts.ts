// The summary's counts per form, UTC day and row (migration Migration20261128001200_summary_counts), so a
// summary costs the same at 10 and at 10 million responses.
//
// - A trigger on responses copies the answers of each completed response a statement adds or removes to
//   `summary_changes` (inserts only, in the writer's transaction: any writer, any version);
//   `foldSummaryChanges` counts them into `summary_counts` off the respondent's path. A reader adds both
//   in one statement (one snapshot: a fold moves a change in one commit, so it is counted once).
// - A date range reads the counts of its whole UTC days and scans the responses of its part days at
//   either end (by the (form_id, submitted_at) index: at most two days of responses).
// - A form with responses stored before the counts existed (`summary_unbuilt`) is rebuilt from its responses
//   at its first summary, in one snapshot that also drops its pending changes, so a completion committing
//   meanwhile is counted exactly once (by the snapshot or by its change).
import { IsolationLevel, type EntityManager } from "@mikro-orm/core";
import type { MikroORM } from "@formsvc/platform/database.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { vacuumAfterPrune } from "@formsvc/platform/retention.ts";
import { questionTypes } from "@formsvc/form-document/block-types";
import type { CompletionNotifier } from "../outbox/completion-notifier.ts";
import { followOutbox, outboxPauses } from "../outbox/outbox-pauses.ts";

export type Tally = "counts" | "ranks" | "cells" | "numbers" | "latest" | "files";

/** How answers of a question type are summed up, by its answer shape. */
export function tallyOfType(type: string): Tally | undefined {
  const found = questionTypes[type as keyof typeof questionTypes];
  switch (found?.answer) {
    case undefined:
      return undefined;
    case "option":
    case "options":
    case "steps":
    case "consent":
      return "counts";
    case "ranking":
      return "ranks";
    case "grid":
      return "cells";
    case "number":
      return "numbers";
    case "uploads":
      return "files";
    case "text":
      return "calendarDates" in found ? "counts" : "latest";
  }
}

function schemaOf(em: EntityManager | MikroORM["em"]): string {
  return `"${em.config.get("schema") ?? "public"}"`;
}

/** The tables of counts and of changes not folded yet. */
export function summaryTables(em: EntityManager | MikroORM["em"]) {
  const schema = schemaOf(em);
  return { counts: `${schema}."summary_counts"`, changes: `${schema}."summary_changes"`, unbuilt: `${schema}."summary_unbuilt"`, rows: `${schema}."summary_rows"` };
}

/** Writes each question type's tally for the trigger (types added since the migration, tallies changed). */
export async function syncSummaryTallies(orm: MikroORM): Promise<void> {
  const tallies = Object.keys(questionTypes).map((type) => ({ type, tally: tallyOfType(type) }));
  await orm.em.fork().getConnection().execute(
    `insert into ${schemaOf(orm.em)}."summary_tallies" ("type", "tally")
     select "type", "tally" from jsonb_to_recordset(?::jsonb) as t("type" text, "tally" text)
     on conflict ("type") do update set "tally" = excluded."tally" where "summary_tallies"."tally" <> excluded."tally"`,
    [JSON.stringify(tallies)],
    "run",
  );
}

/**
 * Folds and rebuilds write the counts one at a time: a table lock that readers (ACCESS SHARE) and
 * respondents (who write only changes) never wait on. Taken first, it sets no snapshot, so a rebuild's
 * snapshot comes after any fold before it.
 */
const writeLock = (counts: string) => `lock table ${counts} in share row exclusive mode`;

/** Changes a fold takes at most: a backlog (a bulk load, a purge) goes in bounded transactions. */
const foldBatch = 10_000;

/** Moves up to `limit` committed changes into the counts (dropping rows that fall to nothing); answers how many were folded. */
export async function foldSummaryChanges(orm: MikroORM, limit = foldBatch): Promise<number> {
  const { counts, changes, rows } = summaryTables(orm.em);
  return orm.em.fork().transactional(async (em) => {
    const connection = em.getConnection();
    const tx = em.getTransactionContext();
    await connection.execute(writeLock(counts), [], "run", tx);
    const [{ folded, emptied }] = await connection.execute<{ folded: string; emptied: unknown[] | null }[]>(
      `with "folded" as (delete from ${changes} where ctid = any(array(select ctid from ${changes} limit ${limit})) returning *),
            "sums" as (
              select c."form_id", c."day", s."kind", s."key", s."value", sum(s."n" * c."sign") as "n", sum(s."total" * c."sign") as "total"
                from "folded" c, ${rows}(c."answers") s
               group by 1, 2, 3, 4, 5 having sum(s."n" * c."sign") <> 0 or sum(s."total" * c."sign") <> 0
            ),
            "upserted" as (
              insert into ${counts} as c ("form_id", "day", "kind", "key", "value", "n", "total") select * from "sums"
              on conflict ("form_id", "day", "kind", "key", "value") do update set "n" = c."n" + excluded."n", "total" = c."total" + excluded."total"
              returning c.*
            )
       select (select count(*) from "folded")::text as "folded",
              (select jsonb_agg(u) from "upserted" u where u."n" = 0 and u."total" = 0) as "emptied"`,
      [],
      "all",
      tx,
    );
    // A row that fell to nothing goes (a statement cannot update a row and then delete it).
    if (emptied) {
      await connection.execute(
        `delete from ${counts} c using jsonb_to_recordset(?::jsonb) as u("form_id" text, "day" date, "kind" text, "key" text, "value" text)
          where (c."form_id", c."day", c."kind", c."key", c."value") = (u."form_id", u."day", u."kind", u."key", u."value") and c."n" = 0 and c."total" = 0`,
        [JSON.stringify(emptied)],
        "run",
        tx,
      );
    }
    return Number(folded);
  });
}

/** Rebuilds the form's counts from its responses when some were stored before the counts existed. */
export async function buildSummaryCounts(em: EntityManager, formId: string, responsesTable: string): Promise<void> {
  const { counts, changes, unbuilt, rows } = summaryTables(em);
  const connection = em.getConnection();
  const [{ pending }] = await connection.execute<{ pending: boolean }[]>(`select exists (select 1 from ${unbuilt} where "form_id" = ?) as "pending"`, [formId]);
  if (!pending) return;
  await em.fork().transactional(
    async (tem) => {
      const tx = tem.getTransactionContext();
      const run = (sql: string) => tem.getConnection().execute(sql, [formId], "all", tx);
      await tem.getConnection().execute(writeLock(counts), [], "run", tx);
      // Another reader may have built it while this one waited.
      const [still] = await tem.getConnection().execute<unknown[]>(`delete from ${unbuilt} where "form_id" = ? returning 1`, [formId], "all", tx);
      if (!still) return;
      await run(`delete from ${changes} where "form_id" = ?`);
      await run(`delete from ${counts} where "form_id" = ?`);
      await run(
        `insert into ${counts} ("form_id", "day", "kind", "key", "value", "n", "total")
         select r."form_id", (r."submitted_at" at time zone 'UTC')::date, s."kind", s."key", s."value", sum(s."n"), sum(s."total")
           from ${responsesTable} r, ${rows}(r."answers") s
          where r."form_id" = ? and r."completed"
          group by 1, 2, 3, 4, 5`,
      );
    },
    // One snapshot for the deletions and the scan: a change is dropped exactly when its response is scanned.
    { isolationLevel: IsolationLevel.REPEATABLE_READ },
  );
}

/** A row of a summary's reading, as summary/response-summary.ts sums them up. */
export interface CountRow {
  kind: "responses" | "answered" | "count" | "rank" | "cell" | "number" | "mean" | "latest";
  day: string | null;
  key: string;
  value: string | null;
  n: string;
  total: string | null;
  mean: number | null;
}

const dayMs = 24 * 3600 * 1000;
/**
 * A day's start as Postgres reads it: a range that ends on 9999-12-31 (the gateway's last day) may start its
 * whole days in the year 10000, which toISOString writes as "+010000-..." and Postgres refuses.
 */
const instantText = (ms: number) => {
  const at = new Date(ms);
  return `${String(at.getUTCFullYear()).padStart(4, "0")}${at.toISOString().slice(-20)}`;
};

/**
 * The counted rows of the form's completed responses submitted in [since, until), of the answers under
 * `keys`, with the latest answers (up to `latestCount`, `latestChars` each) under `latestKeys`.
 */
export async function readSummaryCounts(
  em: EntityManager,
  responsesTable: string,
  query: { formId: string; since?: Date; until?: Date; keys: string[]; latestKeys: string[]; latestCount: number; latestChars: number },
): Promise<CountRow[]> {
  const { counts, changes, rows } = summaryTables(em);
  const { formId, since, until } = query;
  // Whole UTC days from the counts; the part days at either end from the responses.
  let fromDay = since && Math.ceil(since.getTime() / dayMs) * dayMs;
  let toDay = until && Math.floor(until.getTime() / dayMs) * dayMs;
  const scans: [Date | string | null, Date | string | null][] = [];
  if (fromDay !== undefined && toDay !== undefined && fromDay >= toDay) {
    scans.push([since!, until!]);
    fromDay = toDay;
  } else {
    if (since && fromDay! > since.getTime()) scans.push([since, instantText(fromDay!)]);
    if (until && toDay! < until.getTime()) scans.push([instantText(toDay!), until]);
  }
  while (scans.length < 2) scans.push([null, null]);
  const days = [fromDay === undefined ? null : instantText(fromDay), toDay === undefined ? null : instantText(toDay)];
  const asDay = `(?::timestamptz at time zone 'UTC')::date`;
  const inDays = `(?::timestamptz is null or "day" >= ${asDay}) and (?::timestamptz is null or "day" < ${asDay})`;
  const inScan = `(?::timestamptz is not null and r."submitted_at" >= ?::timestamptz and r."submitted_at" < ?::timestamptz)`;
  const dayParams = [days[0], days[0], days[1], days[1]];
  return em.getConnection().execute<CountRow[]>(
    `with "parts" as (
       select "day", "kind", "key", "value", "n", "total" from ${counts} where "form_id" = ? and ${inDays}
       union all
       select c."day", s."kind", s."key", s."value", s."n" * c."sign", s."total" * c."sign" from ${changes} c, ${rows}(c."answers") s where c."form_id" = ? and ${inDays}
       union all
       select (r."submitted_at" at time zone 'UTC')::date, s."kind", s."key", s."value", s."n", s."total"
         from ${responsesTable} r, ${rows}(r."answers") s
        where r."form_id" = ? and r."submitted_at" is not null and (${inScan} or ${inScan})
     ),
     "summed" as (
       select case when "kind" = 'responses' then "day" end as "day", "kind", "key", "value", sum("n") as "n", sum("total") as "total"
         from "parts" where "kind" = 'responses' or "key" in (select jsonb_array_elements_text(?::jsonb))
        group by 1, 2, 3, 4 having sum("n") <> 0
     )
     select to_char("day", 'YYYY-MM-DD') as "day", "kind", "key", "value", "n"::text as "n", "total"::text as "total",
            -- As avg() of the scan: the sum over numeric, divided as numeric, then as float8.
            case "kind" when 'rank' then ("total"::numeric / "n"::numeric)::float8 end as "mean"
       from "summed"
     union all
     select null, 'mean', "key", null, sum("n")::text, null, (sum("value"::numeric * "n") / sum("n"))::float8 from "summed" where "kind" = 'number' group by "key"
     union all
     select null, 'latest', k."key", l."text", l."place"::text, null, null
       from jsonb_array_elements_text(?::jsonb) k("key"), lateral (
         select left(r."answers"->k."key"->'value' #>> '{}', ${query.latestChars}) as "text",
                row_number() over (order by r."submitted_at" desc, r."id" desc) as "place"
           from ${responsesTable} r
          where r."form_id" = ? and r."submitted_at" is not null
            and (?::timestamptz is null or r."submitted_at" >= ?::timestamptz) and (?::timestamptz is null or r."submitted_at" < ?::timestamptz)
            and jsonb_typeof(r."answers"->k."key"->'value') <> 'null'
          order by r."submitted_at" desc, r."id" desc
          limit ${query.latestCount}
       ) l`,
    [
      formId,
      ...dayParams,
      formId,
      ...dayParams,
      formId,
      ...scans.flatMap(([from, to]) => [from, from, to]),
      JSON.stringify(query.keys),
      JSON.stringify(query.latestKeys),
      formId,
      since ?? null,
      since ?? null,
      until ?? null,
      until ?? null,
    ],
    "all",
  );
}

export interface SummaryFolderOptions {
  orm: MikroORM;
  logger?: Logger;
  /** Told when this process has committed a response: a fold follows (spaced). */
  changes?: CompletionNotifier;
  /** A fold this often however quiet (other replicas' changes, deletions). */
  pollMs?: number;
  /** The least time between the starts of two folds. */
  spacingMs?: number;
}

/** Folds summary changes in the background, so a reader adds few of them; `stop` ends it (what is left, the next fold takes). */
export function startSummaryFolder(options: SummaryFolderOptions): { stop(): Promise<void> } {
  const { orm, logger } = options;
  const pollMs = options.pollMs ?? 5_000;
  const spacingMs = options.spacingMs ?? 1_000;
  const pauses = outboxPauses(options.changes);
  const loop = followOutbox(
    pauses,
    { minMs: 100, maxMs: 5_000 },
    async () => {
      const startedAt = Date.now();
      // A backlog is folded batch after batch, then its space given back at once: a reader of a form
      // whose changes fill the table scans it whole, and a million folded changes left ~8 s of dead pages.
      let batches = 0;
      while ((await foldSummaryChanges(orm)) === foldBatch && pauses.running) batches++;
      if (batches > 0) await vacuumAfterPrune(orm, summaryTables(orm.em).changes, batches);
      const spacing = spacingMs - (Date.now() - startedAt);
      if (spacing > 0) await pauses.sleep(spacing, false);
      await pauses.sleep(pollMs, true);
    },
    (err, { retryInMs }) => logger?.warn({ error: err instanceof Error ? err.message : String(err), retryInMs }, "summary changes not folded: retrying"),
  );
  return {
    async stop() {
      pauses.stop();
      await loop;
    },
  };
}
