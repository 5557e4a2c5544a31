import { openDatabase } from "@formsvc/platform/database.ts";
import { createServiceClient, startRpcServer } from "@formsvc/platform/rpc.ts";
import { runService } from "@formsvc/platform/service-main.ts";
import { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { entities } from "./entities/index.ts";
import { createFormsHandlers, routes } from "./handlers/forms-handlers.ts";
import { migrations } from "./migrations/index.ts";

/** The Postgres schema forms owns. */
export const schema = "forms";

await runService("forms", async ({ config, logger, port }) => {
  if (!config.databaseUrl) {
    throw new Error("forms needs DATABASE_URL (a Postgres connection string); none is configured");
  }
  const orm = await openDatabase({ databaseUrl: config.databaseUrl, schema, entities, migrations });
  const identity = createServiceClient(IdentityService, config.services.identity);
  const handlers = createFormsHandlers({ orm, identity, logger });
  try {
    const server = await startRpcServer({ port, logger, routes: (router) => routes(router, handlers) });
    return { server, close: () => orm.close() };
  } catch (err) {
    await orm.close();
    throw err;
  }
});
