import { Migration } from "@mikro-orm/migrations";

/**
 * The event type of each outbox row (FORM_RESPONSE, FORM_RESPONSE_PARTIAL, FORM_PUBLISHED, ...), whose
 * payload is then a formsvc.events.v1.Event. Rows written before hold null: a bare ResponseCompleted.
 */
export class Migration20270101000000_outbox_event_type extends Migration {
  override up(): void {
    this.addSql(`alter table "submissions"."outbox" add column "event_type" text null`);
  }

  override down(): void {
    this.addSql(`alter table "submissions"."outbox" drop column if exists "event_type"`);
  }
}
