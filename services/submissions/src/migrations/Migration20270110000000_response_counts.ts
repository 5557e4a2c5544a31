import { Migration } from "@mikro-orm/migrations";

/**
 * Submissions owns each form's count of completed responses (forms holds a copy, response-counts.ts).
 * `response_count_changes` is appended to in the transaction (or the one statement) of each completion
 * and each deletion of a completed response: inserts only, so concurrent completions of one form never
 * wait on a shared row. The pusher folds it into `form_response_counts` and sends the absolute counts
 * whose `revision` forms has not taken yet (`pushed_revision`). Backfilled from the responses stored (every
 * form with one, 0 included), all unpushed: the first push also corrects counts the earlier adjustments
 * had let drift, except those of forms without any response stored, which submissions never saw.
 */
export class Migration20270110000000_response_counts extends Migration {
  override up(): void {
    this.addSql(`create table "submissions"."form_response_counts" (
      "form_id" text primary key,
      "completed" bigint not null,
      "revision" bigint not null,
      "pushed_revision" bigint not null default 0
    )`);
    this.addSql(`create index "form_response_counts_unpushed_index" on "submissions"."form_response_counts" ("form_id")
      where "pushed_revision" < "revision"`);
    this.addSql(`create table "submissions"."response_count_changes" (
      "form_id" text not null,
      "delta" integer not null
    )`);
    // Every form with a response stored, 0 included: a form whose copy drifted while it had only partial
    // responses is set right too. A form without any response stored is unknown here and keeps its copy.
    this.addSql(`insert into "submissions"."form_response_counts" ("form_id", "completed", "revision")
      select "form_id", count(*) filter (where "completed"), 1 from "submissions"."responses" group by "form_id"`);
  }

  override down(): void {
    this.addSql(`drop table if exists "submissions"."response_count_changes"`);
    this.addSql(`drop table if exists "submissions"."form_response_counts"`);
  }
}
