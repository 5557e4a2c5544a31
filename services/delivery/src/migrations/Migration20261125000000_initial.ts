import { Migration } from "@mikro-orm/migrations";

/** Deliveries, their attempts and the event sources' cursors in the `delivery` schema. */
export class Migration20261125000000_initial extends Migration {
  override up(): void {
    this.addSql(`create table "delivery"."deliveries" (
      "id" text primary key,
      "webhook_id" text not null,
      "event_id" text not null,
      "event_type" text not null,
      "form_id" text not null,
      "submission_id" text not null,
      "origin" text not null,
      "payload" text not null,
      "status" text not null check ("status" in ('pending', 'retrying', 'succeeded', 'failed')),
      "attempts" int not null default 0,
      "last_error" text not null default '',
      "last_status_code" int not null default 0,
      "next_attempt_at" timestamptz null,
      "locked_until" timestamptz null,
      "lease_id" text null,
      "schedule_step" int not null default 0,
      "created_at" timestamptz not null,
      "updated_at" timestamptz not null,
      constraint "deliveries_webhook_id_event_id_unique" unique ("webhook_id", "event_id")
    )`);
    // The claim: due deliveries, oldest due first.
    this.addSql(`create index "deliveries_due_index" on "delivery"."deliveries" ("next_attempt_at")
      where "status" in ('pending', 'retrying')`);
    // ListDeliveries: a webhook's deliveries, newest first.
    this.addSql(`create index "deliveries_webhook_id_created_at_index" on "delivery"."deliveries"
      ("webhook_id", "created_at" desc, "id" desc)`);

    this.addSql(`create table "delivery"."attempts" (
      "id" text primary key,
      "delivery_id" text not null references "delivery"."deliveries" ("id") on delete cascade,
      "number" int not null,
      "status_code" int not null default 0,
      "duration_ms" int not null,
      "error" text not null default '',
      "response_body" text not null default '',
      "manual" boolean not null default false,
      "created_at" timestamptz not null,
      constraint "attempts_delivery_id_number_unique" unique ("delivery_id", "number")
    )`);

    this.addSql(`create table "delivery"."cursor" (
      "name" text primary key,
      "position" bigint not null default 0
    )`);
  }

  override down(): void {
    this.addSql(`drop table if exists "delivery"."cursor"`);
    this.addSql(`drop table if exists "delivery"."attempts"`);
    this.addSql(`drop table if exists "delivery"."deliveries"`);
  }
}
