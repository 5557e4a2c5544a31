import { loadConfig, metricsPortOf, servicePort, type Config, type ServiceName } from "./config.ts";
import { startMetricsServer } from "./metrics.ts";
import { createLogger, type Logger } from "./logger.ts";
import type { ConnectRouter } from "@connectrpc/connect";
import { databaseCheck, openDatabase, type DatabaseOptions, type MikroORM } from "./database.ts";
import { probeDependency, tcpCheck } from "./health.ts";
import { kafkaServices } from "./kafka.ts";
import { maintenanceRoutes, registerTableSizes, startRetention, type PruneTarget } from "./retention.ts";
import { startRpcServer, type RpcServer } from "./rpc.ts";
import type { Tracing } from "./tracing.ts";
import { isHosted, ownProcess, stopOnSignals } from "./own-process.ts";

/**
 * Runs one service: builds it from the configuration, reports readiness to a parent launcher over IPC,
 * and shuts down on SIGINT, SIGTERM or when the launcher goes away.
 */
export async function runService(
  name: ServiceName,
  start: (ctx: { config: Config; logger: Logger; port: number }) => Promise<{ server: RpcServer; close(): Promise<void> }>,
): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(name, config.logLevel);
  let tracing: Tracing | undefined;
  let started: Awaited<ReturnType<typeof start>>;
  try {
    tracing = await ownProcess(name, logger);
    started = await start({ config, logger, port: servicePort(config, name) });
  } catch (err) {
    logger.fatal({ err }, `${name} failed to start`);
    process.exit(1);
  }
  const { server, close } = started;
  // Hosted, the process has one registry: the gateway's /metrics serves it.
  const metricsPort = isHosted() ? undefined : metricsPortOf(config, name);
  const metricsServer = metricsPort === undefined ? undefined : startMetricsServer(metricsPort, logger, config.listenHost);
  logger.info({ port: server.port, metricsPort, tracing: tracing ? "otlp" : "off" }, `${name} listening`);
  process.send?.({ ready: name, port: server.port });
  stopOnSignals(name, logger, async () => {
    await server.close();
    await close();
    metricsServer?.close();
    await tracing?.shutdown().catch((err: unknown) => logger.warn({ err }, "exporting the last spans failed"));
  });
}

type Routes = (router: ConnectRouter) => void;

/**
 * Runs a service that owns a Postgres schema: opens its database (migrations applied), then
 * serves the routes `makeRoutes` builds over it; the database closes with the server. `makeRoutes`
 * may also return `{ routes, close, retention }`: `close` (background work of the service) then runs after the
 * server has closed and before the database does; `retention` names what the service prunes as it ages
 * (retention.ts): a pass runs every RETENTION_INTERVAL_SECONDS and MaintenanceService.Prune serves the
 * operator's `prune`. Every service reports its tables' rows and bytes on /metrics. It may be async: what only some configurations need
 * (Kafka, S3) is imported there, so a process without them never loads it.
 */
type MadeRoutes = Routes | { routes: Routes; close?(): Promise<void>; retention?: PruneTarget[] };

export async function runDatabaseService(
  name: ServiceName,
  database: Pick<DatabaseOptions, "schema" | "entities" | "migrations">,
  makeRoutes: (ctx: { config: Config; logger: Logger; orm: MikroORM }) => MadeRoutes | Promise<MadeRoutes>,
): Promise<void> {
  await runService(name, async ({ config, logger, port }) => {
    if (!config.databaseUrl) {
      throw new Error(`${name} needs DATABASE_URL (a Postgres connection string); none is configured`);
    }
    const orm = await openDatabase({
      databaseUrl: config.databaseUrl,
      ...database,
      // A database that is down or still starting is waited for: this process comes up when it does.
      onWaitForDatabase: (err, retryInMs) =>
        logger.warn({ error: err instanceof Error ? err.message : String(err), retryInMs }, "the database cannot be reached yet: waiting for it"),
    });
    let closeWork = async () => {};
    let retention: ReturnType<typeof startRetention> | undefined;
    const stopProbes: (() => void)[] = [registerTableSizes(orm, database.schema, logger)];
    const close = async () => {
      for (const stopProbe of stopProbes) stopProbe();
      await retention?.stop();
      try {
        await closeWork();
      } catch (err) {
        logger.error({ err }, `${name}: stopping its background work failed`);
      }
      await orm.close();
    };
    try {
      const made = await makeRoutes({ config, logger, orm });
      const serviceRoutes = typeof made === "function" ? made : made.routes;
      if (typeof made !== "function" && made.close) closeWork = made.close;
      const targets = (typeof made !== "function" && made.retention) || [];
      const routes = (router: ConnectRouter) => {
        serviceRoutes(router);
        maintenanceRoutes(router, targets, logger);
      };
      const server = await startRpcServer({ port, host: config.listenHost, logger, routes });
      if (targets.length > 0) retention = startRetention(targets, { intervalMs: config.retention.intervalSeconds * 1000, logger });
      // Readiness follows what the service needs: NOT_SERVING while its database does not answer. Kafka's
      // outage is reported (health service `dependency:kafka`, logs) but tolerated: see HealthState.tolerate.
      stopProbes.push(probeDependency(server.health, "database", { check: databaseCheck(orm) }, logger));
      if (config.kafkaBrokers.length > 0 && kafkaServices.includes(name)) {
        server.health.tolerate("kafka");
        stopProbes.push(probeDependency(server.health, "kafka", { check: tcpCheck(config.kafkaBrokers) }, logger));
      }
      return { server, close };
    } catch (err) {
      await close();
      throw err;
    }
  });
}
