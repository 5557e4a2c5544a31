import { Migration } from "@mikro-orm/migrations";

/**
 * OpenID Connect sign-in: each provider's (issuer, subject) linked to the account it signs in as, and the email
 * domains whose people join a workspace on their first sign-in through OIDC. Two new tables, which the previous
 * release never reads: expand-only.
 */
export class Migration20261128000200_oidc_sign_in extends Migration {
  override up(): void {
    this.addSql(`create table "identity"."oidc_identities" (
      "issuer" text not null,
      "subject" text not null,
      "user_id" text not null references "identity"."users" ("id") on delete cascade deferrable initially deferred,
      "created_at" timestamptz not null,
      primary key ("issuer", "subject")
    )`);
    this.addSql(`create index "oidc_identities_user_id_index" on "identity"."oidc_identities" ("user_id")`);
    this.addSql(`create table "identity"."workspace_auto_join_domains" (
      "workspace_id" text not null references "identity"."workspaces" ("id") on delete cascade deferrable initially deferred,
      "domain" text not null check ("domain" = lower("domain")),
      "created_at" timestamptz not null,
      primary key ("workspace_id", "domain")
    )`);
    this.addSql(`create index "workspace_auto_join_domains_domain_index" on "identity"."workspace_auto_join_domains" ("domain")`);
  }

  override down(): void {
    this.addSql(`drop table if exists "identity"."workspace_auto_join_domains"`);
    this.addSql(`drop table if exists "identity"."oidc_identities"`);
  }
}
