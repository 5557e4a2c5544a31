import { Migration } from "@mikro-orm/migrations";

/**
 * Calculated fields that stored null for want of time or a worker, counted per form, field and reason, so
 * the form's builder sees it (one row each, its count and last time moved by an upsert).
 */
export class Migration20261222000000_calculated_field_problems extends Migration {
  override up(): void {
    this.addSql(`create table "submissions"."calculated_field_problems" (
      "form_id" text not null,
      "field" text not null,
      "reason" text not null,
      "count" bigint not null,
      "last_at" timestamptz not null,
      primary key ("form_id", "field", "reason")
    )`);
  }

  override down(): void {
    this.addSql(`drop table if exists "submissions"."calculated_field_problems"`);
  }
}
