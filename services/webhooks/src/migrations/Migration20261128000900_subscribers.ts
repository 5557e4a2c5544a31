import { Migration } from "@mikro-orm/migrations";

/**
 * The automation tool that subscribed a webhook (n8n, zapier, ...), and the API key and person that did:
 * such a webhook goes when its key is deleted. Webhooks made before have none.
 */
export class Migration20261128000900_subscribers extends Migration {
  override up(): void {
    this.addSql(`alter table "webhooks"."webhooks"
      add column "subscriber" text null,
      add column "subscribed_by_key" text null,
      add column "subscribed_by_user" text null`);
    // A re-subscription finds its webhook (form, url, subscriber); a key's deletion its webhooks.
    this.addSql(`create index "webhooks_form_id_subscriber_index" on "webhooks"."webhooks" ("form_id", "subscriber") where "subscriber" is not null`);
    this.addSql(`create index "webhooks_subscribed_by_key_index" on "webhooks"."webhooks" ("subscribed_by_key") where "subscribed_by_key" is not null`);
  }

  override down(): void {
    this.addSql(`drop index if exists "webhooks"."webhooks_subscribed_by_key_index"`);
    this.addSql(`drop index if exists "webhooks"."webhooks_form_id_subscriber_index"`);
    this.addSql(`alter table "webhooks"."webhooks" drop column if exists "subscriber", drop column if exists "subscribed_by_key", drop column if exists "subscribed_by_user"`);
  }
}
