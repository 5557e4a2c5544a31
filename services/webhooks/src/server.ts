import { apiKeyChangesChannel, keepFreshByNotices } from "@formsvc/platform/pg-notices.ts";
import { createServiceClient } from "@formsvc/platform/rpc.ts";
import { runDatabaseService } from "@formsvc/platform/service-main.ts";
import { FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { entities } from "./entities/index.ts";
import { createWebhooksHandlers, routes } from "./handlers/webhooks-handlers.ts";
import { keySubscriptions } from "./key-subscriptions.ts";
import { migrations } from "./migrations/index.ts";

await runDatabaseService("webhooks", { schema: "webhooks", entities, migrations }, ({ config, logger, orm }) => {
  const forms = createServiceClient(FormsService, config.services.forms);
  if (config.webhookAllowPrivateUrls) {
    logger.warn("WEBHOOK_ALLOW_PRIVATE_URLS is on: webhooks may target private and loopback addresses");
  }
  const handlers = createWebhooksHandlers({
    orm,
    forms,
    logger,
    allowPrivateUrls: config.webhookAllowPrivateUrls,
    allowedCidrs: config.webhookAllowedCidrs,
    secretOverlapMs: config.webhookSecretOverlapSeconds * 1000,
  });
  // A subscriber's webhook goes with the API key that subscribed it.
  const subscriptions = keySubscriptions({ orm, identity: createServiceClient(IdentityService, config.services.identity), logger });
  const notices = keepFreshByNotices(subscriptions, {
    databaseUrl: config.databaseUrl!,
    channel: apiKeyChangesChannel,
    logger,
    onNotice: (notice) => subscriptions.changed(notice),
  });
  return { routes: (router) => routes(router, handlers), close: () => notices.stop() };
});
