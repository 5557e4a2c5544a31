import { Migration } from "@mikro-orm/migrations";

/**
 * The gateway's Idempotency-Keys (POSTs of /api/v1 and respondents' uploads): one row per (scope, key)
 * with the request's hash and, once it has one, the answer to repeat. Swept after 24 h.
 */
export class Migration20261223000000_idempotency_keys extends Migration {
  override up(): void {
    this.addSql(`create table "identity"."idempotency_keys" (
      "scope" text not null,
      "key" text not null,
      "request_hash" text not null,
      "status" integer null,
      "body" bytea null,
      "created_at" timestamptz not null,
      primary key ("scope", "key")
    )`);
    this.addSql(`create index "idempotency_keys_created_at_index" on "identity"."idempotency_keys" ("created_at")`);
  }

  override down(): void {
    this.addSql(`drop table if exists "identity"."idempotency_keys"`);
  }
}
