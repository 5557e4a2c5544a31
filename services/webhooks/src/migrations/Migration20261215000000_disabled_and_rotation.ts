import { Migration } from "@mikro-orm/migrations";

/** Why and when a webhook was disabled, and the secret a rotation replaced (valid until it expires). */
export class Migration20261215000000_disabled_and_rotation extends Migration {
  override up(): void {
    this.addSql(`alter table "webhooks"."webhooks"
      add column "disabled_reason" text null,
      add column "disabled_at" timestamptz null,
      add column "previous_secret" text null,
      add column "previous_secret_expires_at" timestamptz null`);
    // Webhooks disabled before reasons were kept.
    this.addSql(`update "webhooks"."webhooks" set "disabled_reason" = 'disabled by its owner', "disabled_at" = "updated_at" where not "enabled"`);
  }

  override down(): void {
    this.addSql(`alter table "webhooks"."webhooks" drop column if exists "disabled_reason", drop column if exists "disabled_at",
      drop column if exists "previous_secret", drop column if exists "previous_secret_expires_at"`);
  }
}
