import { openDatabase } from "@formsvc/platform/database.ts";
import { startRpcServer } from "@formsvc/platform/rpc.ts";
import { runService } from "@formsvc/platform/service-main.ts";
import { entities } from "./entities/index.ts";
import { createIdentityHandlers, routes } from "./handlers/identity-handlers.ts";
import { migrations } from "./migrations/index.ts";

/** The Postgres schema identity owns. */
export const schema = "identity";

await runService("identity", async ({ config, logger, port }) => {
  if (!config.databaseUrl) {
    throw new Error("identity needs DATABASE_URL (a Postgres connection string); none is configured");
  }
  const orm = await openDatabase({ databaseUrl: config.databaseUrl, schema, entities, migrations });
  const handlers = createIdentityHandlers({ orm });
  try {
    const server = await startRpcServer({ port, logger, routes: (router) => routes(router, handlers) });
    return { server, close: () => orm.close() };
  } catch (err) {
    await orm.close();
    throw err;
  }
});
