import { createServiceClient } from "@formsvc/platform/rpc.ts";
import { runDatabaseService } from "@formsvc/platform/service-main.ts";
import { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { entities } from "./entities/index.ts";
import { createFormsHandlers, routes } from "./handlers/forms-handlers.ts";
import { migrations } from "./migrations/index.ts";

await runDatabaseService("forms", { schema: "forms", entities, migrations }, ({ config, logger, orm }) => {
  const identity = createServiceClient(IdentityService, config.services.identity);
  const handlers = createFormsHandlers({ orm, identity, logger });
  return (router) => routes(router, handlers);
});
