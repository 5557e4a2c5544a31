import { NoticeKeptCache } from "@formsvc/platform/notice-kept-cache.ts";
import { keepFreshByNotices, workspaceChangesChannel } from "@formsvc/platform/pg-notices.ts";
import { createServiceClient } from "@formsvc/platform/rpc.ts";
import { runDatabaseService } from "@formsvc/platform/service-main.ts";
import { IdentityService, type Workspace } from "@formsvc/proto/identity/v1/identity_pb.js";
import { DeliveryService } from "@formsvc/proto/delivery/v1/delivery_pb.js";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { startEventForwarder } from "./event-forwarder.ts";
import { entities } from "./entities/index.ts";
import { createFormsHandlers, routes } from "./handlers/forms-handlers.ts";
import { migrations } from "./migrations/index.ts";
import { startResponseRetention } from "./response-retention.ts";

await runDatabaseService("forms", { schema: "forms", entities, migrations }, ({ config, logger, orm }) => {
  const identity = createServiceClient(IdentityService, config.services.identity);
  // Form events go from forms' outbox to the submissions outbox, which both buses carry to delivery.
  const submissions = createServiceClient(SubmissionsService, config.services.submissions);
  const forwarder = startEventForwarder({ orm, submissions, logger });
  // Purging a form deletes what these hold of it.
  const webhooks = createServiceClient(WebhooksService, config.services.webhooks);
  const delivery = createServiceClient(DeliveryService, config.services.delivery);
  // Callers' workspaces are held while identity's workspace notices are listened for: a caller's request
  // then asks identity nothing.
  const callerWorkspaces = config.membershipCache ? new NoticeKeptCache<Workspace>() : undefined;
  const notices =
    callerWorkspaces &&
    keepFreshByNotices(callerWorkspaces, {
      databaseUrl: config.databaseUrl!,
      channel: workspaceChangesChannel,
      logger,
      onNotice: (workspaceId) => callerWorkspaces.forgetWhere((workspace) => workspace.id === workspaceId),
    });
  const handlers = createFormsHandlers({ orm, identity, submissions, webhooks, delivery, logger, onEvent: () => forwarder.wake(), callerWorkspaces });
  // Forms' settings.deleteResponsesAfterDays, at the retention interval: submissions deletes what is past it.
  const responseRetention = startResponseRetention({ orm, submissions, logger, intervalMs: config.retention.intervalSeconds * 1000 });
  return {
    routes: (router) => routes(router, handlers),
    close: async () => {
      await responseRetention.stop();
      await notices?.stop();
      await forwarder.stop();
    },
  };
});
