import { loadConfig, servicePort, type Config, type ServiceName } from "./config.ts";
import { createLogger, type Logger } from "./logger.ts";
import type { RpcServer } from "./rpc.ts";

/**
 * Runs one service process: builds it from the configuration, reports readiness to a parent
 * launcher over IPC, and shuts down on SIGINT, SIGTERM or when the launcher goes away.
 */
export async function runService(
  name: ServiceName,
  start: (ctx: { config: Config; logger: Logger; port: number }) => Promise<{ server: RpcServer; close(): Promise<void> }>,
): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(name, config.logLevel);
  let started: Awaited<ReturnType<typeof start>>;
  try {
    started = await start({ config, logger, port: servicePort(config, name) });
  } catch (err) {
    logger.fatal({ err }, `${name} failed to start`);
    process.exit(1);
  }
  const { server, close } = started;
  logger.info({ port: server.port }, `${name} listening`);
  process.send?.({ ready: name, port: server.port });

  let stopping = false;
  const stop = async (reason: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, `${name} stopping`);
    await server.close();
    await close();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
  // The launcher is gone (even by SIGKILL): leave no orphan behind.
  process.on("disconnect", () => void stop("launcher gone"));
}
