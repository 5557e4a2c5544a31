import { Migration } from "@mikro-orm/migrations";

/**
 * A form's deliveries by index: purging a form (DeleteFormDeliveries) deletes them in batches of 1,000 and
 * finds its webhooks' failing periods through them. Without it each batch scanned the whole table, shared by
 * every tenant.
 */
export class Migration20270201000000_deliveries_form_index extends Migration {
  override up(): void {
    this.addSql(`create index "deliveries_form_id_index" on "delivery"."deliveries" ("form_id")`);
  }

  override down(): void {
    this.addSql(`drop index if exists "delivery"."deliveries_form_id_index"`);
  }
}
