import { runDatabaseService } from "@formsvc/platform/service-main.ts";
import { entities } from "./entities/index.ts";
import { createIdentityHandlers, routes } from "./handlers/identity-handlers.ts";
import { migrations } from "./migrations/index.ts";

await runDatabaseService("identity", { schema: "identity", entities, migrations }, ({ orm }) => {
  const handlers = createIdentityHandlers({ orm });
  return (router) => routes(router, handlers);
});
