import { Migration } from "@mikro-orm/migrations";

/** The language a respondent answered in (issue 30): null for responses stored before it was recorded. */
export class Migration20261128000600_response_language extends Migration {
  override up(): void {
    this.addSql(`alter table "submissions"."responses" add column "language" text null`);
  }

  override down(): void {
    this.addSql(`alter table "submissions"."responses" drop column if exists "language"`);
  }
}
