// Insights kept as aggregates per form and UTC day (issue 36): RecordInsights adds a batch of counts in
// one transaction, GetInsights sums the days of a range. Neither reads a response, so both cost the same
// at 10 and at 10 million of them. Rows are upserted in key order, so two batches touching the same rows
// (two gateways) wait on each other instead of deadlocking.
import { randomBytes } from "node:crypto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { MikroORM } from "@formsvc/platform/database.ts";
import type { RecordInsightsRequestSchema } from "@formsvc/proto/submissions/v1/submissions_pb.js";

type Batch = MessageInitShape<typeof RecordInsightsRequestSchema>;

function tableOf(orm: MikroORM, name: string): string {
  return `"${orm.config.get("schema") ?? "public"}"."${name}"`;
}

/**
 * The bucket a time to complete is counted in: the second up to 2 minutes, then 10 s up to an hour,
 * 5 minutes up to a day, an hour after (at most 30 days): a form's day holds a few hundred rows at most,
 * and a median read from them is off by less than a bucket.
 */
export function completionTimeBucket(seconds: number): number {
  const s = Math.min(Math.max(0, Math.round(seconds)), 30 * 86_400);
  const step = s < 120 ? 1 : s < 3_600 ? 10 : s < 86_400 ? 300 : 3_600;
  return Math.round(s / step) * step;
}

const byKey = <T>(rows: T[], key: (row: T) => string) => rows.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));

/** Adds `batch` to the aggregates, all of it or nothing. */
export async function recordInsights(orm: MikroORM, batch: Batch): Promise<void> {
  const days = byKey([...(batch.days ?? [])], (d) => `${d.formId}\n${d.day}`);
  const questions = byKey([...(batch.questions ?? [])], (q) => `${q.formId}\n${q.day}\n${q.key}`);
  const visitors = byKey([...(batch.visitors ?? [])], (v) => `${v.formId}\n${v.day}\n${v.visitor}`);
  const times = new Map<string, { formId: string; day: string; seconds: number; count: number }>();
  for (const t of batch.completionTimes ?? []) {
    const seconds = completionTimeBucket(Number(t.seconds ?? 0));
    const id = `${t.formId}\n${t.day}\n${String(seconds).padStart(8, "0")}`;
    const known = times.get(id) ?? { formId: t.formId ?? "", day: t.day ?? "", seconds, count: 0 };
    known.count += Number(t.count ?? 0);
    times.set(id, known);
  }
  const timeRows = [...times.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, row]) => row);
  const json = (rows: object[]) => JSON.stringify(rows, (_k, v: unknown) => (typeof v === "bigint" ? Number(v) : v));

  await orm.em.fork().transactional(async (em) => {
    const connection = em.getConnection();
    const tx = em.getTransactionContext();
    const run = (sql: string, rows: object[]) => (rows.length ? connection.execute(sql, [json(rows)], "run", tx) : undefined);
    await run(
      `insert into ${tableOf(orm, "insight_days")} as d ("form_id", "day", "views", "starts", "completions")
       select "formId", "day"::date, "views", "starts", "completions"
         from jsonb_to_recordset(?::jsonb) as r("formId" text, "day" text, "views" bigint, "starts" bigint, "completions" bigint)
       on conflict ("form_id", "day") do update set "views" = d."views" + excluded."views",
         "starts" = d."starts" + excluded."starts", "completions" = d."completions" + excluded."completions"`,
      days.map((d) => ({ formId: d.formId, day: d.day, views: d.views ?? 0, starts: d.starts ?? 0, completions: d.completions ?? 0 })),
    );
    // A visitor counts once per form and day: only the hashes new to the day add to its visitors.
    await run(
      `with "new" as (
         insert into ${tableOf(orm, "insight_visitors")} ("form_id", "day", "visitor")
         select "formId", "day"::date, "visitor" from jsonb_to_recordset(?::jsonb) as r("formId" text, "day" text, "visitor" text)
         on conflict do nothing returning "form_id", "day")
       insert into ${tableOf(orm, "insight_days")} as d ("form_id", "day", "visitors")
       select "form_id", "day", count(*) from "new" group by 1, 2 order by 1, 2
       on conflict ("form_id", "day") do update set "visitors" = d."visitors" + excluded."visitors"`,
      visitors.map((v) => ({ formId: v.formId, day: v.day, visitor: v.visitor })),
    );
    await run(
      `insert into ${tableOf(orm, "insight_questions")} as q ("form_id", "day", "key", "shown", "answered", "drop_offs")
       select "formId", "day"::date, "key", "shown", "answered", "dropOffs"
         from jsonb_to_recordset(?::jsonb) as r("formId" text, "day" text, "key" text, "shown" bigint, "answered" bigint, "dropOffs" bigint)
       on conflict ("form_id", "day", "key") do update set "shown" = q."shown" + excluded."shown",
         "answered" = q."answered" + excluded."answered", "drop_offs" = q."drop_offs" + excluded."drop_offs"`,
      questions.map((q) => ({ formId: q.formId, day: q.day, key: q.key, shown: q.shown ?? 0, answered: q.answered ?? 0, dropOffs: q.dropOffs ?? 0 })),
    );
    await run(
      `insert into ${tableOf(orm, "insight_completion_times")} as t ("form_id", "day", "seconds", "count")
       select "formId", "day"::date, "seconds", "count" from jsonb_to_recordset(?::jsonb) as r("formId" text, "day" text, "seconds" integer, "count" bigint)
       on conflict ("form_id", "day", "seconds") do update set "count" = t."count" + excluded."count"`,
      timeRows,
    );
  });
}

/**
 * The salt of `day` (YYYY-MM-DD, UTC), made on first ask (whichever replica asks first, every one gets
 * the same). Making it deletes the salts and visitor hashes of the days before: the day is over.
 */
export async function visitorSalt(orm: MikroORM, day: string): Promise<Uint8Array> {
  const connection = orm.em.getConnection();
  const [made] = (await connection.execute(
    `insert into ${tableOf(orm, "insight_salts")} ("day", "salt") values (?::date, ?) on conflict do nothing returning "salt"`,
    [day, randomBytes(32)],
    "all",
  )) as { salt: Buffer }[];
  if (made) {
    await connection.execute(`delete from ${tableOf(orm, "insight_salts")} where "day" < ?::date`, [day], "run");
    await connection.execute(`delete from ${tableOf(orm, "insight_visitors")} where "day" < ?::date`, [day], "run");
    return made.salt;
  }
  const [kept] = (await connection.execute(`select "salt" from ${tableOf(orm, "insight_salts")} where "day" = ?::date`, [day], "all")) as { salt: Buffer }[];
  return kept.salt;
}

/** Deletes every aggregate of the form (its purge: nothing of a form deleted forever is kept). */
export async function deleteInsightsOf(orm: MikroORM, formId: string): Promise<void> {
  const connection = orm.em.fork().getConnection();
  for (const table of ["insight_days", "insight_questions", "insight_completion_times", "insight_visitors"]) {
    await connection.execute(`delete from ${tableOf(orm, table)} where "form_id" = ?`, [formId], "run");
  }
}

export interface InsightTotals {
  views: number;
  visitors: number;
  starts: number;
  completions: number;
  medianSecondsToComplete: number | null;
  /** Per question key. */
  questions: Map<string, { shown: number; answered: number; dropOffs: number }>;
  days: { date: string; views: number; starts: number; completions: number }[];
}

/** The aggregates of the form's UTC days from `since`'s day up to `until` (days starting before it). */
export async function readInsights(orm: MikroORM, formId: string, since?: Date, until?: Date): Promise<InsightTotals> {
  const connection = orm.em.fork().getConnection();
  const range = `"form_id" = ? and (?::timestamptz is null or "day" >= (?::timestamptz at time zone 'UTC')::date)
    and (?::timestamptz is null or "day"::timestamp at time zone 'UTC' < ?::timestamptz)`;
  const params = [formId, since ?? null, since ?? null, until ?? null, until ?? null];
  const [days, questions, times] = await Promise.all([
    connection.execute(
      `select to_char("day", 'YYYY-MM-DD') as "date", "views"::float8 as "views", "visitors"::float8 as "visitors", "starts"::float8 as "starts",
              "completions"::float8 as "completions"
         from ${tableOf(orm, "insight_days")} where ${range} order by "day"`,
      params,
      "all",
    ) as Promise<{ date: string; views: number; visitors: number; starts: number; completions: number }[]>,
    connection.execute(
      `select "key", sum("shown")::float8 as "shown", sum("answered")::float8 as "answered", sum("drop_offs")::float8 as "dropOffs"
         from ${tableOf(orm, "insight_questions")} where ${range} group by "key"`,
      params,
      "all",
    ) as Promise<{ key: string; shown: number; answered: number; dropOffs: number }[]>,
    connection.execute(
      `select "seconds", sum("count")::float8 as "count" from ${tableOf(orm, "insight_completion_times")} where ${range} group by "seconds" order by "seconds"`,
      params,
      "all",
    ) as Promise<{ seconds: number; count: number }[]>,
  ]);
  const sum = (field: "views" | "visitors" | "starts" | "completions") => days.reduce((total, d) => total + d[field], 0);
  return {
    views: sum("views"),
    visitors: sum("visitors"),
    starts: sum("starts"),
    completions: sum("completions"),
    medianSecondsToComplete: medianOf(times),
    questions: new Map(questions.map((q) => [q.key, { shown: q.shown, answered: q.answered, dropOffs: q.dropOffs }])),
    days: days.map(({ date, views, starts, completions }) => ({ date, views, starts, completions })),
  };
}

/** The median of counted values (sorted by value); the mean of the two middle ones for an even total. */
export function medianOf(buckets: { seconds: number; count: number }[]): number | null {
  const total = buckets.reduce((n, b) => n + b.count, 0);
  if (total === 0) return null;
  const at = (rank: number) => {
    let seen = 0;
    for (const b of buckets) if ((seen += b.count) > rank) return b.seconds;
    return buckets[buckets.length - 1].seconds;
  };
  return total % 2 === 1 ? at((total - 1) / 2) : (at(total / 2 - 1) + at(total / 2)) / 2;
}
