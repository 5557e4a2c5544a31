import { Migration } from "@mikro-orm/migrations";

/**
 * Deliveries, attempts and their payloads partitioned by the event's time, so retention drops whole
 * partitions instead of deleting row by row (retention/partitions.ts makes them ahead and drops them
 * behind), and an event's payload stored once however many webhooks receive it (`payloads`; it was a
 * copy in every delivery row).
 *
 * `event_at` is the time the event tells of (a response's submission, a save, a form's change; a test's
 * sending), in whole milliseconds as the service's clock and events carry it: the same each time a bus hands the event again, so the unique (webhook, event, event_at) still
 * makes a redelivered event create nothing twice. Rows outside every partition's range (an event far older
 * or newer than the partitions made) land in each table's default partition.
 *
 * The rows of today's tables are copied over in the migration's transaction (the old tables are locked
 * against writes meanwhile; the other services go on) and the old tables dropped: nothing is lost.
 * Partitions of a day are made here for the rows copied; the delivery service makes the next ones, of its
 * span (RETENTION_PARTITION_SECONDS), from where they end.
 */
export class Migration20261127000000_partitioned_deliveries extends Migration {
  override up(): void {
    this.addSql(`lock table "delivery"."deliveries", "delivery"."attempts" in exclusive mode`);
    this.addSql(`alter table "delivery"."deliveries" rename to "deliveries_unpartitioned"`);
    this.addSql(`alter table "delivery"."attempts" rename to "attempts_unpartitioned"`);
    // Constraint and index names are per schema: the old ones make way.
    for (const [table, name] of [
      ["deliveries_unpartitioned", "deliveries_pkey"],
      ["deliveries_unpartitioned", "deliveries_webhook_id_event_id_unique"],
      ["attempts_unpartitioned", "attempts_pkey"],
      ["attempts_unpartitioned", "attempts_delivery_id_number_unique"],
      ["attempts_unpartitioned", "attempts_delivery_id_fkey"],
    ]) {
      this.addSql(`alter table "delivery"."${table}" drop constraint if exists "${name}" cascade`);
    }
    for (const index of ["deliveries_due_index", "deliveries_webhook_id_created_at_index", "deliveries_webhook_id_status_created_at_index", "deliveries_form_id_index"]) {
      this.addSql(`drop index if exists "delivery"."${index}"`);
    }

    this.addSql(`create table "delivery"."payloads" (
      "event_id" text not null,
      "event_at" timestamptz not null,
      "body" text not null,
      primary key ("event_id", "event_at")
    ) partition by range ("event_at")`);

    this.addSql(`create table "delivery"."deliveries" (
      "id" text not null,
      "event_at" timestamptz not null,
      "webhook_id" text not null,
      "event_id" text not null,
      "event_type" text not null,
      "trigger" text not null default 'event' check ("trigger" in ('event', 'test')),
      "form_id" text not null,
      "submission_id" text not null,
      "origin" text not null,
      "status" text not null check ("status" in ('pending', 'retrying', 'succeeded', 'failed')),
      "attempts" int not null default 0,
      "last_error" text not null default '',
      "last_status_code" int not null default 0,
      "next_attempt_at" timestamptz null,
      "locked_until" timestamptz null,
      "lease_id" text null,
      "schedule_step" int not null default 0,
      "trace_parent" varchar(255) null,
      "created_at" timestamptz not null,
      "updated_at" timestamptz not null,
      primary key ("id", "event_at"),
      constraint "deliveries_webhook_id_event_id_unique" unique ("webhook_id", "event_id", "event_at")
    ) partition by range ("event_at")`);
    // The claim: due deliveries, oldest due first.
    this.addSql(`create index "deliveries_due_index" on "delivery"."deliveries" ("next_attempt_at") where "status" in ('pending', 'retrying')`);
    // ListDeliveries: a webhook's deliveries newest first, all or in one status (and recover's).
    this.addSql(`create index "deliveries_webhook_id_created_at_index" on "delivery"."deliveries" ("webhook_id", "created_at" desc, "id" desc)`);
    this.addSql(`create index "deliveries_webhook_id_status_created_at_index" on "delivery"."deliveries" ("webhook_id", "status", "created_at" desc, "id" desc)`);
    // A form's purge (DeleteFormDeliveries).
    this.addSql(`create index "deliveries_form_id_index" on "delivery"."deliveries" ("form_id")`);

    this.addSql(`create table "delivery"."attempts" (
      "delivery_id" text not null,
      "event_at" timestamptz not null,
      "number" int not null,
      "id" text not null,
      "status_code" int not null default 0,
      "duration_ms" int not null,
      "error" text not null default '',
      "response_body" text not null default '',
      "manual" boolean not null default false,
      "created_at" timestamptz not null,
      primary key ("delivery_id", "event_at", "number")
    ) partition by range ("event_at")`);

    for (const table of ["payloads", "deliveries", "attempts"]) {
      this.addSql(`create table "delivery"."${table}_default" partition of "delivery"."${table}" default`);
    }
    // Partitions of a day for the copied rows (none on a new database); the service makes the rest, by its span,
    // from where these end.
    this.addSql(`do $$
      declare
        first_day timestamptz := date_trunc('day', (select min("created_at") from "delivery"."deliveries_unpartitioned"), 'UTC');
        last_day timestamptz := date_trunc('day', (select max("created_at") from "delivery"."deliveries_unpartitioned"), 'UTC');
        day timestamptz := first_day;
        t text;
      begin
        while day <= last_day loop
          foreach t in array array['payloads', 'deliveries', 'attempts'] loop
            execute format('create table "delivery".%I partition of "delivery".%I for values from (%L) to (%L)',
              t || '_' || to_char(day at time zone 'UTC', 'YYYYMMDD"t"HH24MISS'), t, day, day + interval '1 day');
          end loop;
          day := day + interval '1 day';
        end loop;
      end $$`);

    this.addSql(`insert into "delivery"."payloads" ("event_id", "event_at", "body")
      select distinct on ("event_id") "event_id", date_trunc('milliseconds', "created_at"), "payload" from "delivery"."deliveries_unpartitioned" order by "event_id", "created_at"`);
    // Every delivery of an event points at the one payload kept: its event_at is the first delivery's time.
    this.addSql(`insert into "delivery"."deliveries" ("id", "event_at", "webhook_id", "event_id", "event_type", "trigger", "form_id", "submission_id", "origin",
        "status", "attempts", "last_error", "last_status_code", "next_attempt_at", "locked_until", "lease_id", "schedule_step", "trace_parent", "created_at", "updated_at")
      select d."id", p."event_at", d."webhook_id", d."event_id", d."event_type", d."trigger", d."form_id", d."submission_id", d."origin",
        d."status", d."attempts", d."last_error", d."last_status_code", d."next_attempt_at", d."locked_until", d."lease_id", d."schedule_step", d."trace_parent", d."created_at", d."updated_at"
      from "delivery"."deliveries_unpartitioned" d join "delivery"."payloads" p on p."event_id" = d."event_id"`);
    this.addSql(`insert into "delivery"."attempts" ("delivery_id", "event_at", "number", "id", "status_code", "duration_ms", "error", "response_body", "manual", "created_at")
      select a."delivery_id", d."event_at", a."number", a."id", a."status_code", a."duration_ms", a."error", a."response_body", a."manual", a."created_at"
      from "delivery"."attempts_unpartitioned" a join "delivery"."deliveries" d on d."id" = a."delivery_id"`);
    this.addSql(`drop table "delivery"."attempts_unpartitioned"`);
    this.addSql(`drop table "delivery"."deliveries_unpartitioned"`);
  }
}
