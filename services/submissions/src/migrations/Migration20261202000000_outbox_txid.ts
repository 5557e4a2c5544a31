import { Migration } from "@mikro-orm/migrations";

/**
 * The id of the transaction that wrote each outbox row. The completion stream follows transaction
 * ids up to the oldest one still running, so completions need not commit one at a time to be read
 * in a gap-free order (see streamCompletions).
 */
export class Migration20261202000000_outbox_txid extends Migration {
  override up(): void {
    this.addSql(`alter table "submissions"."outbox" add column "txid" xid8 not null default pg_current_xact_id()`);
    this.addSql(`create index "outbox_txid_index" on "submissions"."outbox" ("txid", "id")`);
  }

  override down(): void {
    this.addSql(`drop index if exists "submissions"."outbox_txid_index"`);
    this.addSql(`alter table "submissions"."outbox" drop column if exists "txid"`);
  }
}
