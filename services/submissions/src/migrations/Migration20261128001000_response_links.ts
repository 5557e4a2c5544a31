import { Migration } from "@mikro-orm/migrations";

/**
 * Single-use links (issue 31): tokens minted for a form, each good for one completed response. Only the
 * token's SHA-256 is kept (`token_hash`); `used_at` and `response_id` are set in the transaction that
 * completes the response, so a token completes one response however many try at once.
 */
export class Migration20261128001000_response_links extends Migration {
  override up(): void {
    this.addSql(`create table "submissions"."response_links" (
      "id" text primary key,
      "form_id" text not null,
      "token_hash" bytea not null unique,
      "created_at" timestamptz not null,
      "expires_at" timestamptz null,
      "used_at" timestamptz null,
      "response_id" text null,
      "revoked_at" timestamptz null
    )`);
    this.addSql(`create index "response_links_form_id_created_at_index" on "submissions"."response_links" ("form_id", "created_at" desc)`);
  }

  override down(): void {
    this.addSql(`drop table if exists "submissions"."response_links"`);
  }
}
