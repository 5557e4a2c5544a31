import { Migration } from "@mikro-orm/migrations";

/** Webhooks of forms in the `webhooks` schema. */
export class Migration20261124000000_initial extends Migration {
  override up(): void {
    this.addSql(`create table "webhooks"."webhooks" (
      "id" text primary key,
      "form_id" text not null,
      "url" text not null,
      "secret" text null,
      "headers" jsonb not null default '{}',
      "enabled" boolean not null default true,
      "created_at" timestamptz not null,
      "updated_at" timestamptz not null
    )`);
    // ListWebhooks: a form's webhooks, newest first; also ListEnabledWebhooks and the per-form count.
    this.addSql(`create index "webhooks_form_id_created_at_index" on "webhooks"."webhooks"
      ("form_id", "created_at" desc, "id" desc)`);
  }

  override down(): void {
    this.addSql(`drop table if exists "webhooks"."webhooks"`);
  }
}
