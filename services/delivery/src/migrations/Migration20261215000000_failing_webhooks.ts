import { Migration } from "@mikro-orm/migrations";

/** Since when each failing webhook's attempts have all failed (the rule that disables it after days). */
export class Migration20261215000000_failing_webhooks extends Migration {
  override up(): void {
    this.addSql(`create table "delivery"."failing_webhooks" (
      "webhook_id" text primary key,
      "failing_since" timestamptz not null
    )`);
  }

  override down(): void {
    this.addSql(`drop table if exists "delivery"."failing_webhooks"`);
  }
}
