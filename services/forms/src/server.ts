import { createServiceClient } from "@formsvc/platform/rpc.ts";
import { runDatabaseService } from "@formsvc/platform/service-main.ts";
import { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { startEventForwarder } from "./event-forwarder.ts";
import { entities } from "./entities/index.ts";
import { createFormsHandlers, routes } from "./handlers/forms-handlers.ts";
import { migrations } from "./migrations/index.ts";

await runDatabaseService("forms", { schema: "forms", entities, migrations }, ({ config, logger, orm }) => {
  const identity = createServiceClient(IdentityService, config.services.identity);
  // Form events go from forms' outbox to the submissions outbox, which both buses carry to delivery.
  const forwarder = startEventForwarder({ orm, submissions: createServiceClient(SubmissionsService, config.services.submissions), logger });
  const handlers = createFormsHandlers({ orm, identity, logger, onEvent: () => forwarder.wake() });
  return { routes: (router) => routes(router, handlers), close: () => forwarder.stop() };
});
