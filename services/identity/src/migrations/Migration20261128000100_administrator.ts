import { Migration } from "@mikro-orm/migrations";

/**
 * The installation's administrator: the first account made. On an installation that has accounts already, the
 * oldest one. Defaulted, so the previous release's inserts (during a rolling upgrade) make plain users; a partial
 * unique index keeps it to one and answers "is there one?" without reading the table.
 */
export class Migration20261128000100_administrator extends Migration {
  override up(): void {
    this.addSql(`alter table "identity"."users" add column "administrator" boolean not null default false`);
    this.addSql(`update "identity"."users" set "administrator" = true
                  where "id" = (select "id" from "identity"."users" order by "created_at", "id" limit 1)`);
    this.addSql(`create unique index "users_one_administrator" on "identity"."users" ("administrator") where "administrator"`);
  }

  override down(): void {
    this.addSql(`drop index if exists "identity"."users_one_administrator"`);
    this.addSql(`alter table "identity"."users" drop column if exists "administrator"`);
  }
}
