import { loadConfig, serviceNames } from "@formsvc/platform/config.ts";
import { createLogger } from "@formsvc/platform/logger.ts";
import { hostServicesHere, ownProcess, stopOnSignals } from "@formsvc/platform/own-process.ts";
import { entryOf, oneProcessName } from "./system.ts";

// Every service and the gateway in this one Node process (ONE_PROCESS=on): one Node binary and one copy of
// each module instead of six, for a small machine. Each still listens on its own port and the others call it
// there, so nothing in them knows. This process owns what is the process's: signals (the gateway stops
// first, so nothing new comes in while the services finish), traces and the metrics label.

const config = loadConfig();
const logger = createLogger(oneProcessName, config.logLevel);
// Metrics labelled service="formsvc", traces named formsvc-all (OTEL_SERVICE_NAME overrides).
const tracing = await ownProcess(oneProcessName, logger, "all");
const stops = new Map<string, (reason: string) => Promise<void>>();
// Before hosting: this process's own stop takes the signals; the services' stops are handed to it.
stopOnSignals(oneProcessName, logger, async (reason) => {
  await stops.get("gateway")?.(reason);
  await Promise.all([...stops].filter(([name]) => name !== "gateway").map(([, stop]) => stop(reason)));
  await tracing?.shutdown().catch((err: unknown) => logger.warn({ err }, "exporting the last spans failed"));
});
hostServicesHere({ hosted: (name, stop) => void stops.set(name, stop) });

await Promise.all(serviceNames.map((name) => import(entryOf(name))));
await import(entryOf("gateway"));
process.send?.({ ready: oneProcessName });
logger.info({ services: [...stops.keys()] }, "every service is running in this process");
