import { loadConfig, serviceNames } from "@formsvc/platform/config.ts";
import { createLogger } from "@formsvc/platform/logger.ts";
import { setMetricsService } from "@formsvc/platform/metrics.ts";
import { hostServicesHere } from "@formsvc/platform/service-main.ts";
import { startTracing } from "@formsvc/platform/tracing.ts";
import { entryOf, oneProcessName } from "./system.ts";

// Every service and the gateway in this one Node process (ONE_PROCESS=on): one Node binary and one copy of
// each module instead of six, for a small machine. Each still listens on its own port and the others call it
// there, so nothing in them knows. This process owns what is the process's: signals (the gateway stops
// first, so nothing new comes in while the services finish), traces and the metrics label.

const config = loadConfig();
const logger = createLogger(oneProcessName, config.logLevel);
setMetricsService(oneProcessName);
// Traces are named formsvc-all (OTEL_SERVICE_NAME overrides), metrics labelled service="formsvc".
const tracing = await startTracing("all");
const stops = new Map<string, (reason: string) => Promise<void>>();
hostServicesHere({ hosted: (name, stop) => void stops.set(name, stop) });

await Promise.all(serviceNames.map((name) => import(entryOf(name))));
await import(entryOf("gateway"));
process.send?.({ ready: oneProcessName });
logger.info({ services: [...stops.keys()] }, "every service is running in this process");

let stopping = false;
async function stopAll(reason: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  await stops.get("gateway")?.(reason);
  await Promise.all([...stops].filter(([name]) => name !== "gateway").map(([, stop]) => stop(reason)));
  await tracing?.shutdown().catch((err: unknown) => logger.warn({ err }, "exporting the last spans failed"));
  process.exit(0);
}
process.on("SIGINT", () => void stopAll("SIGINT"));
process.on("SIGTERM", () => void stopAll("SIGTERM"));
process.on("disconnect", () => void stopAll("launcher gone"));
