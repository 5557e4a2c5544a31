import { Migration } from "@mikro-orm/migrations";

/** The event types each webhook receives; the ones made before event types receive completed responses, as before. */
export class Migration20261215000100_event_types extends Migration {
  override up(): void {
    this.addSql(`alter table "webhooks"."webhooks" add column "event_types" jsonb not null default '["FORM_RESPONSE"]'`);
  }

  override down(): void {
    this.addSql(`alter table "webhooks"."webhooks" drop column if exists "event_types"`);
  }
}
