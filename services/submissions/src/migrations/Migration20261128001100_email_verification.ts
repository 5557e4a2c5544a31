import { Migration } from "@mikro-orm/migrations";

/**
 * Email verification (issue 31, settings.requireEmailVerification), expand only: the address a respondent
 * confirmed by a mailed code, on their response (`verified_email`, null for every response before and for
 * forms without the rule), one completed response per address and form (a partial unique index); and the
 * verifications themselves, with only a hash of their code.
 */
export class Migration20261128001100_email_verification extends Migration {
  override up(): void {
    this.addSql(`alter table "submissions"."responses" add column "verified_email" text null`);
    this.addSql(
      `create unique index "responses_form_id_verified_email_unique" on "submissions"."responses" ("form_id", lower("verified_email")) where "completed" and "verified_email" is not null`,
    );
    this.addSql(`create table "submissions"."email_verifications" (
      "id" text primary key,
      "form_id" text not null,
      "email" text not null,
      "code_hash" bytea not null,
      "created_at" timestamptz not null,
      "expires_at" timestamptz not null,
      "attempts" integer not null default 0,
      "confirmed_at" timestamptz null,
      "used_at" timestamptz null,
      "response_id" text null
    )`);
    this.addSql(`create index "email_verifications_form_id_email_index" on "submissions"."email_verifications" ("form_id", lower("email"), "created_at")`);
    // What retention deletes by (retention.ts).
    this.addSql(`create index "email_verifications_created_at_index" on "submissions"."email_verifications" ("created_at")`);
  }

  override down(): void {
    this.addSql(`drop table if exists "submissions"."email_verifications"`);
    this.addSql(`drop index if exists "submissions"."responses_form_id_verified_email_unique"`);
    this.addSql(`alter table "submissions"."responses" drop column if exists "verified_email"`);
  }
}
