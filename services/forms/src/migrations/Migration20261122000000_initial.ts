import { Migration } from "@mikro-orm/migrations";

/** Forms and their document versions in the `forms` schema. */
export class Migration20261122000000_initial extends Migration {
  override up(): void {
    this.addSql(`create table "forms"."forms" (
      "id" text primary key,
      "workspace_id" text not null,
      "name" text not null,
      "status" text not null check ("status" in ('draft', 'published', 'closed')),
      "document" jsonb not null,
      "block_keys" jsonb not null default '{}',
      "settings" jsonb not null default '{}',
      "version" int not null default 1,
      "response_count" bigint not null default 0,
      "created_at" timestamptz not null,
      "updated_at" timestamptz not null,
      "trashed_at" timestamptz null
    )`);
    // ListForms: a workspace's forms outside the Trash, newest first.
    this.addSql(`create index "forms_workspace_id_created_at_index" on "forms"."forms"
      ("workspace_id", "created_at" desc, "id" desc) where "trashed_at" is null`);

    this.addSql(`create table "forms"."form_versions" (
      "form_id" text not null references "forms"."forms" ("id") on delete cascade deferrable initially deferred,
      "version" int not null,
      "document" jsonb not null,
      "created_at" timestamptz not null,
      "updated_at" timestamptz not null,
      constraint "form_versions_pkey" primary key ("form_id", "version")
    )`);
  }

  override down(): void {
    this.addSql(`drop table if exists "forms"."form_versions"`);
    this.addSql(`drop table if exists "forms"."forms"`);
  }
}
