import { Migration } from "@mikro-orm/migrations";
import { mailOutboxDdl } from "@formsvc/platform/mail.ts";

/**
 * Mail: the outbox identity's mails are sent from, the single-use links those mails carry (password
 * reset, email verification, invitations; only the token's hash is kept), and when a user's email
 * was verified.
 */
export class Migration20261228000000_mail_and_email_links extends Migration {
  override up(): void {
    for (const sql of mailOutboxDdl("identity")) this.addSql(sql);
    this.addSql(`create table "identity"."email_links" (
      "token_hash" text primary key,
      "purpose" text not null check ("purpose" in ('password-reset', 'email-verification', 'invitation')),
      "email" text not null,
      "user_id" text null,
      "workspace_id" text null,
      "role" text null,
      "invited_by" text null,
      "created_at" timestamptz not null,
      "expires_at" timestamptz not null,
      "used_at" timestamptz null
    )`);
    this.addSql(`create index "email_links_expires_at_index" on "identity"."email_links" ("expires_at")`);
    this.addSql(`alter table "identity"."users" add column "email_verified_at" timestamptz null`);
  }

  override down(): void {
    this.addSql(`alter table "identity"."users" drop column "email_verified_at"`);
    this.addSql(`drop table if exists "identity"."email_links"`);
    this.addSql(`drop table if exists "identity"."mail_outbox"`);
  }
}
