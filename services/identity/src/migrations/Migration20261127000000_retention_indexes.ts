import { Migration } from "@mikro-orm/migrations";
import { mailOutboxRetentionDdl } from "@formsvc/platform/mail.ts";

/**
 * The indexes retention deletes by (src/retention.ts): sessions by expiry, email links by when they stopped
 * being usable (used or expired, the earlier), the outbox's mail by when it was sent or given up. The links'
 * index of expiry alone served no query and goes.
 */
export class Migration20261127000000_retention_indexes extends Migration {
  override up(): void {
    this.addSql(`create index "sessions_expires_at_index" on "identity"."sessions" ("expires_at")`);
    this.addSql(`create index "email_links_ended_at_index" on "identity"."email_links" ((least("used_at", "expires_at")))`);
    this.addSql(`drop index "identity"."email_links_expires_at_index"`);
    for (const sql of mailOutboxRetentionDdl("identity")) this.addSql(sql);
  }

  override down(): void {
    this.addSql(`drop index if exists "identity"."mail_outbox_finished_at_index"`);
    this.addSql(`create index "email_links_expires_at_index" on "identity"."email_links" ("expires_at")`);
    this.addSql(`drop index if exists "identity"."email_links_ended_at_index"`);
    this.addSql(`drop index if exists "identity"."sessions_expires_at_index"`);
  }
}
