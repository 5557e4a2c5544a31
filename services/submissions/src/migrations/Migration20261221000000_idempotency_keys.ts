import { Migration } from "@mikro-orm/migrations";

/**
 * Respondents' Idempotency-Keys: one row per (form, key) with a hash of the save and its result, written
 * in the same statement or transaction as the response, so a repeat after any crash finds it. Swept after 24 h.
 */
export class Migration20261221000000_idempotency_keys extends Migration {
  override up(): void {
    this.addSql(`create table "submissions"."idempotency_keys" (
      "form_id" text not null,
      "key" text not null,
      "request_hash" text not null,
      "response_id" text not null,
      "completed" boolean not null,
      "created_at" timestamptz not null,
      primary key ("form_id", "key")
    )`);
    this.addSql(`create index "idempotency_keys_created_at_index" on "submissions"."idempotency_keys" ("created_at")`);
  }

  override down(): void {
    this.addSql(`drop table if exists "submissions"."idempotency_keys"`);
  }
}
