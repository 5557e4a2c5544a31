import { Migration } from "@mikro-orm/migrations";

/** The trace context each delivery's attempts continue (null while tracing is off). */
export class Migration20261204000000_delivery_trace_parent extends Migration {
  override up(): void {
    this.addSql(`alter table "delivery"."deliveries" add column "trace_parent" varchar(255) null`);
  }

  override down(): void {
    this.addSql(`alter table "delivery"."deliveries" drop column if exists "trace_parent"`);
  }
}
