import { Migration } from "@mikro-orm/migrations";

/**
 * The language a person chose for the app (a BCP 47 tag). Nullable, so the previous release's inserts (during a
 * rolling upgrade) make users who chose none, whom the app serves in their browser's language.
 */
export class Migration20261128000500_user_locale extends Migration {
  override up(): void {
    this.addSql(`alter table "identity"."users" add column "locale" text null`);
  }

  override down(): void {
    this.addSql(`alter table "identity"."users" drop column if exists "locale"`);
  }
}
