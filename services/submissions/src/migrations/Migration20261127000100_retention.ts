import { Migration } from "@mikro-orm/migrations";
import { mailOutboxRetentionDdl } from "@formsvc/platform/mail.ts";

/**
 * Retention (src/retention.ts). `outbox_followers`: how far each follower of StreamCompletions (delivery's
 * embedded stream, by its cursor's name) has durably handled the outbox, as it acknowledges it
 * (AcknowledgeCompletions); on the embedded bus outbox rows go only up to the lowest position here (none
 * while no follower has acknowledged anything). And the index the mail outbox's sent mail is deleted by.
 */
export class Migration20261127000100_retention extends Migration {
  override up(): void {
    this.addSql(`create table "submissions"."outbox_followers" (
      "name" text primary key,
      "position" xid8 not null,
      "updated_at" timestamptz not null default now()
    )`);
    for (const sql of mailOutboxRetentionDdl("submissions")) this.addSql(sql);
  }

  override down(): void {
    this.addSql(`drop index if exists "submissions"."mail_outbox_finished_at_index"`);
    this.addSql(`drop table if exists "submissions"."outbox_followers"`);
  }
}
