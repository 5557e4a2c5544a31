import { Migration } from "@mikro-orm/migrations";
import { mailOutboxDdl } from "@formsvc/platform/mail.ts";

/**
 * Response notifications: submissions' mail outbox (platform mail.ts), and the notifier's cursor over
 * the outbox (a transaction id, one row). It starts at this migration's transaction, so responses
 * completed before notifications existed are never mailed.
 */
export class Migration20261231000000_notifications extends Migration {
  override up(): void {
    for (const sql of mailOutboxDdl("submissions")) this.addSql(sql);
    this.addSql(`create table "submissions"."notification_cursor" (
      "id" smallint primary key default 1 check ("id" = 1),
      "txid" xid8 not null
    )`);
    this.addSql(`insert into "submissions"."notification_cursor" ("txid") values (pg_current_xact_id())`);
  }

  override down(): void {
    this.addSql(`drop table if exists "submissions"."notification_cursor"`);
    this.addSql(`drop table if exists "submissions"."mail_outbox"`);
  }
}
