import { Migration } from "@mikro-orm/migrations";

/**
 * Storage quotas and sweeping: each upload knows its workspace (attached ones take their response's),
 * the bytes a form or a workspace holds are summed by index, and partial responses are found by age.
 */
export class Migration20261210000000_upload_quotas extends Migration {
  override up(): void {
    this.addSql(`alter table "submissions"."uploads" add column "workspace_id" text null`);
    this.addSql(`update "submissions"."uploads" u set "workspace_id" = r."workspace_id"
      from "submissions"."responses" r where r."id" = u."response_id"`);
    this.addSql(`create index "uploads_form_id_index" on "submissions"."uploads" ("form_id") include ("size")`);
    this.addSql(`create index "uploads_workspace_id_index" on "submissions"."uploads" ("workspace_id") include ("size")`);
    this.addSql(`create index "responses_partial_updated_at_index" on "submissions"."responses" ("updated_at")
      where not "completed"`);
  }

  override down(): void {
    this.addSql(`drop index if exists "submissions"."responses_partial_updated_at_index"`);
    this.addSql(`drop index if exists "submissions"."uploads_workspace_id_index"`);
    this.addSql(`drop index if exists "submissions"."uploads_form_id_index"`);
    this.addSql(`alter table "submissions"."uploads" drop column if exists "workspace_id"`);
  }
}
