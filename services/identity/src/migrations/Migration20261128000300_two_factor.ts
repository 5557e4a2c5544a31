import { Migration } from "@mikro-orm/migrations";

/**
 * Two-factor sign-in: a user's TOTP secret (sealed with a key derived from SECRET_KEY; the one being enrolled
 * beside it until confirmed) and the last time step a code of it passed (a code is good once), their recovery
 * codes (hashes, each deleted as it is used), the challenges a password sign-in leaves to a second factor, and
 * a workspace's requirement. Expand-only: nullable or defaulted columns and new tables the previous release
 * never reads.
 */
export class Migration20261128000300_two_factor extends Migration {
  override up(): void {
    this.addSql(`alter table "identity"."users"
                   add column "totp_secret" text null,
                   add column "totp_pending_secret" text null,
                   add column "totp_last_step" bigint null`);
    this.addSql(`alter table "identity"."workspaces" add column "require_two_factor" boolean not null default false`);
    this.addSql(`create table "identity"."recovery_codes" (
                   "user_id" text not null references "identity"."users" ("id") on delete cascade,
                   "code_hash" text not null,
                   "created_at" timestamptz not null,
                   primary key ("user_id", "code_hash"))`);
    this.addSql(`create table "identity"."second_factor_challenges" (
                   "id" text primary key,
                   "user_id" text not null references "identity"."users" ("id") on delete cascade,
                   "token_hash" text not null unique,
                   "failures" int not null default 0,
                   "expires_at" timestamptz not null)`);
    this.addSql(`create index "second_factor_challenges_expires_at_index" on "identity"."second_factor_challenges" ("expires_at")`);
  }

  override down(): void {
    this.addSql(`drop table if exists "identity"."second_factor_challenges"`);
    this.addSql(`drop table if exists "identity"."recovery_codes"`);
    this.addSql(`alter table "identity"."workspaces" drop column if exists "require_two_factor"`);
    this.addSql(`alter table "identity"."users" drop column if exists "totp_secret", drop column if exists "totp_pending_secret", drop column if exists "totp_last_step"`);
  }
}
