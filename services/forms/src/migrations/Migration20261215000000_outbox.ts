import { Migration } from "@mikro-orm/migrations";

/** Forms' outbox of form events, forwarded in order to the submissions outbox. */
export class Migration20261215000000_outbox extends Migration {
  override up(): void {
    this.addSql(`create table "forms"."outbox" (
      "id" bigserial primary key,
      "event_id" text not null unique,
      "form_id" text not null,
      "payload" bytea not null,
      "request_id" text null,
      "trace_parent" varchar(255) null,
      "created_at" timestamptz not null,
      "forwarded_at" timestamptz null
    )`);
    this.addSql(`create index "outbox_unforwarded_id_index" on "forms"."outbox" ("id") where "forwarded_at" is null`);
  }

  override down(): void {
    this.addSql(`drop table if exists "forms"."outbox"`);
  }
}
