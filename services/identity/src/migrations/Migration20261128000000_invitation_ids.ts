import { Migration } from "@mikro-orm/migrations";

/**
 * Invitations are listed and revoked by an id of their own (the token's hash stays the link's key). The id is
 * the column's default, so a link the previous release writes during a rolling upgrade gets one too. The
 * indexes serve the invitation limits, which count a workspace's and an email's invitations of the last hour.
 */
export class Migration20261128000000_invitation_ids extends Migration {
  override up(): void {
    this.addSql(`alter table "identity"."email_links" add column "id" text not null default substr(md5(random()::text || clock_timestamp()::text), 1, 16)`);
    this.addSql(`create unique index "email_links_id_unique" on "identity"."email_links" ("id")`);
    this.addSql(`create index "email_links_invitations_by_workspace_index" on "identity"."email_links" ("workspace_id", "created_at") where "purpose" = 'invitation'`);
    this.addSql(`create index "email_links_invitations_by_email_index" on "identity"."email_links" ("email", "created_at") where "purpose" = 'invitation'`);
  }

  override down(): void {
    this.addSql(`drop index if exists "identity"."email_links_invitations_by_email_index"`);
    this.addSql(`drop index if exists "identity"."email_links_invitations_by_workspace_index"`);
    this.addSql(`alter table "identity"."email_links" drop column if exists "id"`);
  }
}
