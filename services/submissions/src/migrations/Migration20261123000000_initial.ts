import { Migration } from "@mikro-orm/migrations";

/** Responses, their uploads and the event outbox in the `submissions` schema. */
export class Migration20261123000000_initial extends Migration {
  override up(): void {
    this.addSql(`create table "submissions"."responses" (
      "id" text primary key,
      "form_id" text not null,
      "workspace_id" text not null,
      "version" int not null,
      "completed" boolean not null default false,
      "answers" jsonb not null default '{}',
      "hidden" jsonb not null default '{}',
      "country" text null,
      "created_at" timestamptz not null,
      "updated_at" timestamptz not null,
      "submitted_at" timestamptz null,
      constraint "responses_submitted_when_completed" check ("completed" = ("submitted_at" is not null))
    )`);
    // ListSubmissions: a form's responses newest first, all of them or by completion.
    this.addSql(`create index "responses_form_id_created_at_index" on "submissions"."responses"
      ("form_id", "created_at" desc, "id" desc)`);
    this.addSql(`create index "responses_form_id_completed_created_at_index" on "submissions"."responses"
      ("form_id", "completed", "created_at" desc, "id" desc)`);

    this.addSql(`create table "submissions"."uploads" (
      "id" text primary key,
      "form_id" text not null,
      "response_id" text null references "submissions"."responses" ("id") deferrable initially deferred,
      "name" text not null,
      "content_type" text not null,
      "size" bigint not null check ("size" > 0),
      "storage_key" text not null unique,
      "created_at" timestamptz not null
    )`);
    this.addSql(`create index "uploads_response_id_index" on "submissions"."uploads" ("response_id")
      where "response_id" is not null`);
    // For sweeping uploads that were never attached.
    this.addSql(`create index "uploads_unattached_created_at_index" on "submissions"."uploads" ("created_at")
      where "response_id" is null`);

    this.addSql(`create table "submissions"."outbox" (
      "id" bigserial primary key,
      "event_id" text not null unique,
      "form_id" text not null,
      "payload" bytea not null,
      "request_id" text null,
      "created_at" timestamptz not null
    )`);
  }

  override down(): void {
    this.addSql(`drop table if exists "submissions"."outbox"`);
    this.addSql(`drop table if exists "submissions"."uploads"`);
    this.addSql(`drop table if exists "submissions"."responses"`);
  }
}
