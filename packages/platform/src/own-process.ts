import { setMetricsService } from "./metrics.ts";
import type { Logger } from "./logger.ts";
import { startTracing, type Tracing } from "./tracing.ts";
import { releaseMemoryWhenIdle } from "./idle-memory.ts";
import { processStopLimitMs } from "./stopping.ts";

// What belongs to a process rather than to a service, apart from runService so that the gateway, which
// owns no database, does not load the ORM and the RPC server to own its process.

/**
 * A process that hosts every service (ONE_PROCESS, packages/launcher/src/one-process.ts). A hosted
 * service hands its stop to the host, which owns the signals and stops the gateway before the services;
 * the host also owns tracing and the metrics label, which are the process's, not a service's.
 */
export interface ServiceHost {
  hosted(name: string, stop: (reason: string) => Promise<void>): void;
}

let host: ServiceHost | undefined;

/** Whether this process hosts every service (ONE_PROCESS). */
export function isHosted(): boolean {
  return host !== undefined;
}

/** Called by the hosting process before it imports the services' entries. */
export function hostServicesHere(serviceHost: ServiceHost): void {
  host = serviceHost;
}

/**
 * What belongs to the process, set up by whoever owns it: a service or the gateway running alone, or the host
 * of every service (which calls this before it hosts them). Its metrics label, its tracing, and the release of
 * its spare heap when idle. Hosted: nothing.
 */
export async function ownProcess(name: string, logger: Logger, tracingName = name): Promise<Tracing | undefined> {
  if (host) return undefined;
  setMetricsService(name);
  releaseMemoryWhenIdle({
    onRelease: ({ heapBeforeBytes, heapAfterBytes, ms }) =>
      logger.debug({ heapBeforeMiB: tenthsOfMiB(heapBeforeBytes), heapAfterMiB: tenthsOfMiB(heapAfterBytes), ms: Math.round(ms) }, "idle: spare heap released"),
  });
  return startTracing(tracingName);
}

const tenthsOfMiB = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

/**
 * Runs `stop` once on SIGINT, SIGTERM or when the launcher goes away (even by SIGKILL: no orphan is left
 * behind), then exits, by itself after processStopLimitMs at the latest (stopping.ts); in a hosting process,
 * hands it to the host instead.
 */
export function stopOnSignals(name: string, logger: Logger, stop: (reason: string) => Promise<void>): void {
  let stopping: Promise<void> | undefined;
  const stopOnce = (reason: string) =>
    (stopping ??= (async () => {
      logger.info({ reason }, `${name} stopping`);
      await stop(reason);
    })());
  if (host) {
    host.hosted(name, stopOnce);
    return;
  }
  let deadline: NodeJS.Timeout | undefined;
  const exitAfter = (reason: string) => {
    // Whatever is left by then is cut: the launcher (and Kubernetes) would SIGKILL the process a little later.
    deadline ??= setTimeout(() => {
      logger.error({ reason, limitMs: processStopLimitMs }, `${name} did not stop within ${processStopLimitMs / 1000} s: exiting`);
      process.exit(1);
    }, processStopLimitMs).unref();
    void stopOnce(reason).finally(() => process.exit(0));
  };
  process.on("SIGINT", () => exitAfter("SIGINT"));
  process.on("SIGTERM", () => exitAfter("SIGTERM"));
  process.on("disconnect", () => exitAfter("launcher gone"));
}
