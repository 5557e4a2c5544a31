import { Migration } from "@mikro-orm/migrations";

/**
 * Insights (issue 36): aggregates per form and UTC day (`insight_days`), per question
 * (`insight_questions`) and per bucket of time to complete (`insight_completion_times`), added to in
 * batches by RecordInsights, so reading them costs the same at any number of responses. Unique visitors
 * are hashes with the day's secret salt (`insight_salts`), kept in `insight_visitors` for that day only:
 * both are deleted once the day is over. No address or cookie is stored anywhere.
 */
export class Migration20261128000700_insights extends Migration {
  override up(): void {
    this.addSql(`create table "submissions"."insight_days" (
      "form_id" text not null,
      "day" date not null,
      "views" bigint not null default 0,
      "visitors" bigint not null default 0,
      "starts" bigint not null default 0,
      "completions" bigint not null default 0,
      primary key ("form_id", "day")
    )`);
    this.addSql(`create table "submissions"."insight_questions" (
      "form_id" text not null,
      "day" date not null,
      "key" text not null,
      "shown" bigint not null default 0,
      "answered" bigint not null default 0,
      "drop_offs" bigint not null default 0,
      primary key ("form_id", "day", "key")
    )`);
    this.addSql(`create table "submissions"."insight_completion_times" (
      "form_id" text not null,
      "day" date not null,
      "seconds" integer not null,
      "count" bigint not null default 0,
      primary key ("form_id", "day", "seconds")
    )`);
    this.addSql(`create table "submissions"."insight_visitors" (
      "form_id" text not null,
      "day" date not null,
      "visitor" text not null,
      primary key ("form_id", "day", "visitor")
    )`);
    this.addSql(`create table "submissions"."insight_salts" (
      "day" date primary key,
      "salt" bytea not null
    )`);
  }

  override down(): void {
    for (const table of ["insight_salts", "insight_visitors", "insight_completion_times", "insight_questions", "insight_days"]) {
      this.addSql(`drop table if exists "submissions"."${table}"`);
    }
  }
}
