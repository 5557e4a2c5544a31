import { Migration } from "@mikro-orm/migrations";

/**
 * The installation's administrator: the first account made. On an installation that has accounts already, the
 * oldest one. Defaulted, so the previous release's inserts (during a rolling upgrade) make plain users.
 */
export class Migration20261128000100_administrator extends Migration {
  override up(): void {
    this.addSql(`alter table "identity"."users" add column "administrator" boolean not null default false`);
    this.addSql(`update "identity"."users" set "administrator" = true
                  where "id" = (select "id" from "identity"."users" order by "created_at", "id" limit 1)`);
  }

  override down(): void {
    this.addSql(`alter table "identity"."users" drop column if exists "administrator"`);
  }
}
