// A workspace's own settings, changed by its owner and admins: its name (its plan is the installation's:
// administration.ts).
import { Code, ConnectError } from "@connectrpc/connect";
import { actorOf, operator } from "@formsvc/platform/caller.ts";
import { MembershipEntity } from "../entities/membership.ts";
import { toWorkspaceMessage, validateName, type IdentityContext, type IdentityHandlers } from "./context.ts";

type WorkspaceSettingsHandlers = Pick<IdentityHandlers, "renameWorkspace">;

export function workspaceSettingsHandlers({ fork, managedWorkspace }: IdentityContext): WorkspaceSettingsHandlers {
  return {
    async renameWorkspace(req, ctx) {
      const name = req.name.trim();
      validateName("name", name);
      const em = fork();
      const workspace = await managedWorkspace(em, ctx, req.workspaceId).catch((err: unknown) => {
        // A plain member may not; said in words of the workspace rather than of members.
        if (ConnectError.from(err).code === Code.PermissionDenied) throw new ConnectError("only the workspace's owner or an admin may rename it", Code.PermissionDenied);
        throw err;
      });
      workspace.name = name;
      await em.flush();
      const actor = actorOf(ctx);
      const membership = actor === operator ? null : await em.findOne(MembershipEntity, { workspaceId: workspace.id, userId: actor });
      return { workspace: toWorkspaceMessage(workspace, membership?.role) };
    },
  };
}
