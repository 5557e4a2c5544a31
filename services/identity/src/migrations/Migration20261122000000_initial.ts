import { Migration } from "@mikro-orm/migrations";

/**
 * Users, workspaces, memberships, API keys and sessions in the `identity` schema.
 * Foreign keys are checked at commit: the entities carry plain id columns, so one flush may
 * insert a membership before the workspace it names.
 */
export class Migration20261122000000_initial extends Migration {
  override up(): void {
    this.addSql(`create table "identity"."users" (
      "id" text primary key,
      "email" text not null,
      "name" text not null,
      "created_at" timestamptz not null,
      constraint "users_email_unique" unique ("email"),
      constraint "users_email_lower_case" check ("email" = lower("email"))
    )`);

    this.addSql(`create table "identity"."workspaces" (
      "id" text primary key,
      "name" text not null,
      "plan" text not null check ("plan" in ('free', 'pro')),
      "owner_id" text not null references "identity"."users" ("id") on delete cascade deferrable initially deferred,
      "personal" boolean not null default false,
      "created_at" timestamptz not null
    )`);
    this.addSql(`create index "workspaces_owner_id_index" on "identity"."workspaces" ("owner_id")`);

    this.addSql(`create table "identity"."memberships" (
      "id" text primary key,
      "workspace_id" text not null references "identity"."workspaces" ("id") on delete cascade deferrable initially deferred,
      "user_id" text not null references "identity"."users" ("id") on delete cascade deferrable initially deferred,
      "role" text not null check ("role" in ('owner', 'member')),
      "created_at" timestamptz not null,
      constraint "memberships_workspace_id_user_id_unique" unique ("workspace_id", "user_id")
    )`);
    this.addSql(`create index "memberships_user_id_index" on "identity"."memberships" ("user_id")`);

    this.addSql(`create table "identity"."api_keys" (
      "id" text primary key,
      "user_id" text not null references "identity"."users" ("id") on delete cascade deferrable initially deferred,
      "name" text not null,
      "prefix" text not null,
      "key_hash" text not null,
      "created_at" timestamptz not null,
      "last_used_at" timestamptz null
    )`);
    this.addSql(`create index "api_keys_prefix_index" on "identity"."api_keys" ("prefix")`);
    this.addSql(`create index "api_keys_user_id_index" on "identity"."api_keys" ("user_id")`);

    this.addSql(`create table "identity"."sessions" (
      "id" text primary key,
      "user_id" text not null references "identity"."users" ("id") on delete cascade deferrable initially deferred,
      "token_hash" text not null,
      "created_at" timestamptz not null,
      "expires_at" timestamptz not null,
      constraint "sessions_token_hash_unique" unique ("token_hash")
    )`);
    this.addSql(`create index "sessions_user_id_index" on "identity"."sessions" ("user_id")`);
  }

  override down(): void {
    this.addSql(`drop table if exists "identity"."sessions"`);
    this.addSql(`drop table if exists "identity"."api_keys"`);
    this.addSql(`drop table if exists "identity"."memberships"`);
    this.addSql(`drop table if exists "identity"."workspaces"`);
    this.addSql(`drop table if exists "identity"."users"`);
  }
}
