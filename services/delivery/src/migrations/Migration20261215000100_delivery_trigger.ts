import { Migration } from "@mikro-orm/migrations";

/** What made each delivery: an event of the bus, or a test sent on request. */
export class Migration20261215000100_delivery_trigger extends Migration {
  override up(): void {
    this.addSql(`alter table "delivery"."deliveries" add column "trigger" text not null default 'event' check ("trigger" in ('event', 'test'))`);
    this.addSql(`update "delivery"."deliveries" set "trigger" = 'test' where "event_type" = 'TEST'`);
    // GET /webhooks/:id/deliveries?status= and recover: a webhook's deliveries in one status, newest first.
    this.addSql(`create index "deliveries_webhook_id_status_created_at_index" on "delivery"."deliveries"
      ("webhook_id", "status", "created_at" desc, "id" desc)`);
  }

  override down(): void {
    this.addSql(`drop index if exists "delivery"."deliveries_webhook_id_status_created_at_index"`);
    this.addSql(`alter table "delivery"."deliveries" drop column if exists "trigger"`);
  }
}
