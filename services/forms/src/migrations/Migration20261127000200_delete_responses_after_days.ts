import { Migration } from "@mikro-orm/migrations";

/**
 * The forms whose settings set deleteResponsesAfterDays, read by id for the periodic deletion of their old
 * responses (response-retention.ts) without reading every form.
 */
export class Migration20261127000200_delete_responses_after_days extends Migration {
  override up(): void {
    this.addSql(`create index "forms_delete_responses_after_days_index" on "forms"."forms" ("id")
      where jsonb_typeof("settings"->'deleteResponsesAfterDays') = 'number'`);
  }

  override down(): void {
    this.addSql(`drop index if exists "forms"."forms_delete_responses_after_days_index"`);
  }
}
