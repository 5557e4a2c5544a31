import { Migration } from "@mikro-orm/migrations";
import { workspaceChangesChannel } from "@formsvc/platform/pg-notices.ts";

/**
 * Forms holds the workspace GetWorkspace answered for each caller (their membership and role, the plan)
 * on every replica, so a caller's request asks identity nothing: any change or deletion of a workspace,
 * and a membership's change of role or removal (a user's deletion cascades to it), notify the workspace's
 * id from the changing transaction, so the notice goes out only when it commits. A new membership is not
 * told: forms holds no "not a member".
 */
export class Migration20270120000000_workspace_change_notices extends Migration {
  override up(): void {
    this.addSql(`create or replace function "identity"."notify_workspace_change"() returns trigger language plpgsql as $$
      begin
        -- Each branch is planned only when taken: the other table's row has no such column.
        if tg_table_name = 'workspaces' then
          perform pg_notify('${workspaceChangesChannel}', old."id");
        else
          perform pg_notify('${workspaceChangesChannel}', old."workspace_id");
        end if;
        return null;
      end $$`);
    this.addSql(`create trigger "workspaces_notify_change" after update or delete on "identity"."workspaces"
                 for each row execute function "identity"."notify_workspace_change"()`);
    this.addSql(`create trigger "memberships_notify_change" after update or delete on "identity"."memberships"
                 for each row execute function "identity"."notify_workspace_change"()`);
  }

  override down(): void {
    this.addSql(`drop trigger if exists "memberships_notify_change" on "identity"."memberships"`);
    this.addSql(`drop trigger if exists "workspaces_notify_change" on "identity"."workspaces"`);
    this.addSql(`drop function if exists "identity"."notify_workspace_change"()`);
  }
}
