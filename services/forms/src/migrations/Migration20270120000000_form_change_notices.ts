import { Migration } from "@mikro-orm/migrations";
import { formChangesChannel } from "@formsvc/platform/pg-notices.ts";

/**
 * Submissions holds each open form in memory on every replica, so a respondent's submit asks forms nothing:
 * a change of anything a submit reads (name, status, settings, version, document, workspace, the Trash) or the
 * form's deletion notifies the form's id from the changing transaction, so the notice goes out only when
 * it commits. Not on the response count, which changes with every response.
 */
export class Migration20270120000000_form_change_notices extends Migration {
  override up(): void {
    this.addSql(`create or replace function "forms"."notify_form_change"() returns trigger language plpgsql as $$
      begin
        perform pg_notify('${formChangesChannel}', old."id");
        return null;
      end $$`);
    this.addSql(`create trigger "forms_notify_change"
                 after delete or update of "name", "status", "settings", "version", "document", "workspace_id", "trashed_at" on "forms"."forms"
                 for each row execute function "forms"."notify_form_change"()`);
  }

  override down(): void {
    this.addSql(`drop trigger if exists "forms_notify_change" on "forms"."forms"`);
    this.addSql(`drop function if exists "forms"."notify_form_change"()`);
  }
}
