import { Migration } from "@mikro-orm/migrations";

/**
 * When the Kafka relay published an outbox row (null until the broker acknowledged it), and the index
 * the relay claims its batches by. Rows already there stay unpublished: a relay started later publishes
 * them too (consumers dedupe by event id).
 */
export class Migration20261201000000_outbox_published_at extends Migration {
  override up(): void {
    this.addSql(`alter table "submissions"."outbox" add column "published_at" timestamptz null`);
    this.addSql(`create index "outbox_unpublished_id_index" on "submissions"."outbox" ("id") where "published_at" is null`);
  }

  override down(): void {
    this.addSql(`drop index if exists "submissions"."outbox_unpublished_id_index"`);
    this.addSql(`alter table "submissions"."outbox" drop column if exists "published_at"`);
  }
}
