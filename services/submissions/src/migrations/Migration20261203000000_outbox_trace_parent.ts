import { Migration } from "@mikro-orm/migrations";

/** The trace context of the request that wrote each outbox row (null while tracing is off). */
export class Migration20261203000000_outbox_trace_parent extends Migration {
  override up(): void {
    this.addSql(`alter table "submissions"."outbox" add column "trace_parent" varchar(255) null`);
  }

  override down(): void {
    this.addSql(`alter table "submissions"."outbox" drop column if exists "trace_parent"`);
  }
}
