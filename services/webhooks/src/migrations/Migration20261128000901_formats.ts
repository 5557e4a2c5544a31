import { Migration } from "@mikro-orm/migrations";

/** What a webhook's body is: the standard JSON event (every webhook made before), or a Slack or Discord message. */
export class Migration20261128000901_formats extends Migration {
  override up(): void {
    this.addSql(`alter table "webhooks"."webhooks" add column "format" text not null default 'standard'`);
  }

  override down(): void {
    this.addSql(`alter table "webhooks"."webhooks" drop column if exists "format"`);
  }
}
