import { Migration } from "@mikro-orm/migrations";

/**
 * The revision of each form's response count, as submissions (which owns the counts) last set it:
 * SetResponseCounts takes only newer ones, so a late or repeated call never sets a count back.
 */
export class Migration20270110000000_response_count_revision extends Migration {
  override up(): void {
    this.addSql(`alter table "forms"."forms" add column "response_count_revision" bigint not null default 0`);
  }

  override down(): void {
    this.addSql(`alter table "forms"."forms" drop column if exists "response_count_revision"`);
  }
}
