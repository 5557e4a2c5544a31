import { Migration } from "@mikro-orm/migrations";

/**
 * The results summary read from counts instead of a scan of the responses (issue 36; summary/summary-counts.ts).
 *
 * - `summary_rows(answers)` is what one completed response adds to its form's summary: the response, each
 *   answer (by the tally of its question type, `summary_tallies`), each option chosen, each number, each
 *   ranking's places, each matrix cell. The folder, the rebuild and the reader (of changes not folded yet and
 *   of part days) all use it, so they cannot disagree.
 * - A trigger on `responses` appends, in the writing transaction, the answers of each completed response
 *   a statement added (sign 1) or removed (-1; an edit is both) to `summary_changes`: a copy, inserts
 *   only, so respondents of one form never wait on a shared row. A trigger, not code in the handlers:
 *   every writer is counted, a 1.0.0 replica during a rolling upgrade, a purge, a retention delete.
 * - The folder counts the changes into `summary_counts` off the respondent's path; a reader adds both.
 * - Responses stored before this migration have no changes: each form that has one is listed in
 *   `summary_unbuilt` (found by a skip scan of the form_id index, cheap however many responses) and is
 *   rebuilt from its responses once, lazily at its first summary, never in this transaction. The trigger
 *   is created first: its lock waits for writers in flight, so every response is either listed here or counted.
 *
 * `summary_tallies` holds each question type's tally; the service writes it at start from form-document's
 * question types (the rows below are those of this release, so that the counts are right before a
 * replica of it has started). An answer of a type not listed is counted as `unknown`, which the reader
 * takes as a reason to scan.
 */
export class Migration20261128001200_summary_counts extends Migration {
  override up(): void {
    this.addSql(`create table "submissions"."summary_tallies" ("type" text primary key, "tally" text not null)`);
    const tallies: Record<string, string> = {
      SHORT_TEXT: "latest", LONG_TEXT: "latest", EMAIL: "latest", NUMBER: "numbers", PHONE: "latest", URL: "latest", DATE: "counts",
      TIME: "latest", MULTIPLE_CHOICE: "counts", CHECKBOXES: "counts", DROPDOWN: "counts", MULTI_SELECT: "counts", RANKING: "ranks",
      MATRIX: "cells", RATING: "counts", LINEAR_SCALE: "counts", NPS: "counts", FILE: "files", SIGNATURE: "files", CONSENT: "counts",
    };
    this.addSql(
      `insert into "submissions"."summary_tallies" ("type", "tally") values ${Object.entries(tallies).map(([type, tally]) => `('${type}', '${tally}')`).join(", ")}`,
    );
    // kind: responses (key and value ''), answered (value: the tally; total: files), count, rank (total: the
    // sum of places), cell (value: [row, column] as JSON), number (value: the number as written).
    this.addSql(`create table "submissions"."summary_counts" (
      "form_id" text not null,
      "day" date not null,
      "kind" text not null,
      "key" text not null,
      "value" text not null,
      "n" bigint not null,
      "total" bigint not null,
      primary key ("form_id", "day", "kind", "key", "value")
    )`);
    // A completed response's answers that came (sign 1) or went (-1), as the trigger saw them.
    this.addSql(`create table "submissions"."summary_changes" (
      "form_id" text not null,
      "day" date not null,
      "sign" smallint not null,
      "answers" jsonb not null
    )`);
    this.addSql(`create index "summary_changes_form_id_index" on "submissions"."summary_changes" ("form_id", "day")`);
    this.addSql(`create table "submissions"."summary_unbuilt" ("form_id" text primary key)`);
    // Mirrors summary/response-summary.ts's scan, whose answers the counts must give (a test compares them).
    this.addSql(`create function "submissions"."summary_rows"("answers" jsonb)
      returns table ("kind" text, "key" text, "value" text, "n" bigint, "total" bigint)
      language sql stable as $$
        with "given" as (
          select a.key, a.value as "answer", a.value->'value' as "value", coalesce(t."tally", 'unknown') as "tally"
            from jsonb_each("answers") a left join "submissions"."summary_tallies" t on t."type" = a.value->>'type'
           where jsonb_typeof(a.value->'value') <> 'null'
        )
        select 'responses', '', '', 1::bigint, 0::bigint
        union all
        select 'answered', g.key, g."tally", 1, jsonb_array_length(coalesce(g."answer"->'files', '[]'::jsonb))::bigint from "given" g
        union all
        select 'count', g.key, coalesce(v.value #>> '{}', ''), 1, 0
          from "given" g, jsonb_array_elements(case jsonb_typeof(g."value") when 'array' then g."value" else jsonb_build_array(g."value") end) v
         where g."tally" = 'counts'
        union all
        select 'rank', g.key, coalesce(v.value #>> '{}', ''), 1, v.place
          from "given" g, jsonb_array_elements(case jsonb_typeof(g."value") when 'array' then g."value" else '[]'::jsonb end) with ordinality v(value, place)
         where g."tally" = 'ranks'
        union all
        select 'cell', g.key, jsonb_build_array(r.key, v.value #>> '{}')::text, 1, 0
          from "given" g, jsonb_each(case jsonb_typeof(g."value") when 'object' then g."value" else '{}'::jsonb end) r,
               jsonb_array_elements(case jsonb_typeof(r.value) when 'array' then r.value else jsonb_build_array(r.value) end) v
         where g."tally" = 'cells'
        union all
        select 'number', g.key, g."value" #>> '{}', 1, 0 from "given" g where g."tally" = 'numbers' and jsonb_typeof(g."value") = 'number'
      $$`);
    // What a statement changed: the answers of each completed response that came or went. Nothing for a
    // row whose summary stays (a partial save, a completed response's other columns). Only a copy: the
    // counting is the folder's, off the respondent's path. One function per event, each naming only the
    // transition tables its event has.
    const day = (row: string) => `(${row}."submitted_at" at time zone 'UTC')::date`;
    const unchanged = `x."id" = y."id" and x."completed" and x."form_id" = y."form_id" and x."submitted_at" = y."submitted_at" and x."answers" = y."answers"`;
    const changes = {
      insert: `select y."form_id", ${day("y")}, 1, y."answers" from "new_rows" y where y."completed"`,
      delete: `select y."form_id", ${day("y")}, -1, y."answers" from "old_rows" y where y."completed"`,
      update: `select y."form_id", ${day("y")}, -1, y."answers" from "old_rows" y where y."completed" and not exists (select 1 from "new_rows" x where ${unchanged})
               union all
               select y."form_id", ${day("y")}, 1, y."answers" from "new_rows" y where y."completed" and not exists (select 1 from "old_rows" x where ${unchanged})`,
    };
    const tables = { insert: `new table as "new_rows"`, delete: `old table as "old_rows"`, update: `old table as "old_rows" new table as "new_rows"` };
    for (const event of ["insert", "update", "delete"] as const) {
      this.addSql(`create function "submissions"."summary_${event}d"() returns trigger language plpgsql as $$
        begin
          insert into "submissions"."summary_changes" ("form_id", "day", "sign", "answers") ${changes[event]};
          return null;
        end
      $$`);
      this.addSql(`create trigger "responses_summary_${event}" after ${event} on "submissions"."responses"
        referencing ${tables[event]} for each statement execute function "submissions"."summary_${event}d"()`);
    }
    this.addSql(`insert into "submissions"."summary_unbuilt" ("form_id")
      with recursive "forms" as (
        select min("form_id") as "id" from "submissions"."responses"
        union all
        select (select min("form_id") from "submissions"."responses" where "form_id" > f."id") from "forms" f where f."id" is not null
      )
      select "id" from "forms" where "id" is not null`);
  }

  override down(): void {
    for (const event of ["insert", "update", "delete"]) this.addSql(`drop trigger if exists "responses_summary_${event}" on "submissions"."responses"`);
    for (const event of ["insert", "update", "delete"]) this.addSql(`drop function if exists "submissions"."summary_${event}d"()`);
    this.addSql(`drop function if exists "submissions"."summary_rows"(jsonb)`);
    for (const table of ["summary_unbuilt", "summary_changes", "summary_counts", "summary_tallies"]) this.addSql(`drop table if exists "submissions"."${table}"`);
  }
}
