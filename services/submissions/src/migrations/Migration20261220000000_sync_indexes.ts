import { Migration } from "@mikro-orm/migrations";

/**
 * Sync filters of ListSubmissions: `since`/`until` (submitted_at) and `updatedSince` (updated_at) read a
 * form's range by index; the cursor's keyset reads use the (form_id, created_at, id) indexes already there.
 */
export class Migration20261220000000_sync_indexes extends Migration {
  override up(): void {
    this.addSql(`create index "responses_form_id_submitted_at_index" on "submissions"."responses"
      ("form_id", "submitted_at", "id") where "submitted_at" is not null`);
    this.addSql(`create index "responses_form_id_updated_at_index" on "submissions"."responses" ("form_id", "updated_at", "id")`);
  }

  override down(): void {
    this.addSql(`drop index if exists "submissions"."responses_form_id_updated_at_index"`);
    this.addSql(`drop index if exists "submissions"."responses_form_id_submitted_at_index"`);
  }
}
