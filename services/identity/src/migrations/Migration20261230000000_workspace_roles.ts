import { Migration } from "@mikro-orm/migrations";

/**
 * Roles per workspace: admin joins owner and member. Each membership's role is set from who made the
 * workspace (its owner_id), so a workspace has exactly one owner whatever was stored before.
 */
export class Migration20261230000000_workspace_roles extends Migration {
  override up(): void {
    this.addSql(`alter table "identity"."memberships" drop constraint if exists "memberships_role_check"`);
    this.addSql(`alter table "identity"."memberships" add constraint "memberships_role_check" check ("role" in ('owner', 'admin', 'member'))`);
    this.addSql(`update "identity"."memberships" m
                    set "role" = case when m."user_id" = w."owner_id" then 'owner' else 'member' end
                   from "identity"."workspaces" w
                  where w."id" = m."workspace_id"`);
  }

  override down(): void {
    this.addSql(`update "identity"."memberships" set "role" = 'member' where "role" = 'admin'`);
    this.addSql(`alter table "identity"."memberships" drop constraint if exists "memberships_role_check"`);
    this.addSql(`alter table "identity"."memberships" add constraint "memberships_role_check" check ("role" in ('owner', 'member'))`);
  }
}
