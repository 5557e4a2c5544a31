import { Migration } from "@mikro-orm/migrations";

/**
 * The audit log: one row per event and workspace (an event about a person, such as a sign-in, is written
 * into each workspace they belong to; '' when none). No foreign keys: the record outlives the users,
 * workspaces and keys it names. Append-only in the database itself: a trigger refuses every UPDATE, and every
 * DELETE but the retention prune's, which sets `formsvc.audit_prune` for its own transaction first (and
 * TRUNCATE is refused too). A new table the previous release never reads.
 */
export class Migration20261128000400_audit_events extends Migration {
  override up(): void {
    this.addSql(`create table "identity"."audit_events" (
      "id" text not null,
      "workspace_id" text not null,
      "occurred_at" timestamptz not null,
      "actor_type" text not null,
      "actor_user_id" text null,
      "actor_api_key_id" text null,
      "address" text not null default '',
      "action" text not null,
      "target_type" text not null,
      "target_id" text not null default '',
      "changes" jsonb not null default '[]',
      "request_id" text not null default '',
      constraint "audit_events_pkey" primary key ("workspace_id", "id"))`);
    // A workspace's page, newest first (and its since/until bounds); retention's age bound.
    this.addSql(`create index "audit_events_workspace_time" on "identity"."audit_events" ("workspace_id", "occurred_at" desc, "id" desc)`);
    this.addSql(`create index "audit_events_occurred_at" on "identity"."audit_events" ("occurred_at")`);
    this.addSql(`create or replace function "identity"."audit_events_append_only"() returns trigger language plpgsql as $$
      begin
        if tg_op = 'DELETE' and current_setting('formsvc.audit_prune', true) = 'on' then
          return old;
        end if;
        raise exception 'audit events are append-only: % refused', tg_op using errcode = 'insufficient_privilege';
      end $$`);
    this.addSql(`create trigger "audit_events_append_only" before update or delete on "identity"."audit_events"
                 for each row execute function "identity"."audit_events_append_only"()`);
    this.addSql(`create trigger "audit_events_no_truncate" before truncate on "identity"."audit_events"
                 for each statement execute function "identity"."audit_events_append_only"()`);
  }

  override down(): void {
    this.addSql(`drop table if exists "identity"."audit_events"`);
    this.addSql(`drop function if exists "identity"."audit_events_append_only"()`);
  }
}
