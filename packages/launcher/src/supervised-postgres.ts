// The embedded Postgres under the same supervision as the launcher's other processes: when it dies (a crash, an
// OOM kill, a stray `kill -9`) it is started again on its port and data after the pause of `decideRestart`, and
// one that crash-loops stops everything. Meanwhile the services answer 503 and wait for their database
// (database-unavailable.ts, runDatabaseService): they are left running, and heal when it is back.
import type { Logger } from "@formsvc/platform/logger.ts";
import { clusterProcesses, clusterProcessesGone, startEmbeddedPostgres, type EmbeddedPostgres, type EmbeddedPostgresOptions } from "./embedded-postgres.ts";
import { decideRestart, defaultRestartPolicy, noCrashes, type CrashHistory, type RestartPolicy } from "./supervision.ts";

export interface PostgresRestart {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The pause before the restart (ms). */
  delayMs: number;
  /** From its exit to accepting connections again (ms). */
  downMs: number;
  pid: number;
}

export interface SupervisedPostgres {
  databaseUrl: string;
  port: number;
  created: boolean;
  /** The Postgres running now (the last one started). */
  current(): EmbeddedPostgres;
  /** Stops it (and any restart under way). Safe to call twice. */
  stop(): Promise<void>;
}

export async function startSupervisedPostgres(
  options: Omit<EmbeddedPostgresOptions, "onUnexpectedExit"> & {
    logger: Logger;
    policy?: Partial<RestartPolicy>;
    onRestart?: (event: PostgresRestart) => void;
    /** Called once when it crash-loops; the caller stops everything. */
    onCrashLoop: (error: Error) => void;
  },
): Promise<SupervisedPostgres> {
  const { logger } = options;
  const policy = { ...defaultRestartPolicy, ...options.policy };
  let history: CrashHistory = noCrashes;
  let stopping = false;
  let pendingTimer: NodeJS.Timeout | undefined;
  let restarting: Promise<unknown> | undefined;
  let startedAt = performance.now();
  /** The Postgres started last. */
  let running: EmbeddedPostgres;

  const crashed = (ended: { code: number | null; signal: NodeJS.Signals | null } | { error: Error }, since: number) => {
    if (stopping || options.signal?.aborted) return; // the launcher is stopping: stop() follows
    const crashedAt = performance.now();
    const decision = decideRestart(policy, history, since, crashedAt);
    history = decision.history;
    const { code = null, signal = null } = "error" in ended ? {} : ended;
    const how = "error" in ended ? `could not be restarted (${ended.error.message.split("\n")[0]})` : signal ? `was killed by ${signal}` : `exited with code ${code}`;
    if (decision.action === "give-up") {
      logger.fatal({ process: "postgres", code, signal }, `the embedded Postgres ${how} and crash-loops (${decision.reason}): stopping everything`);
      options.onCrashLoop(new Error(`the embedded Postgres ${how} and crash-loops: ${decision.reason}; stopping everything (see ${options.dataDir}/postgres.log)`));
      return;
    }
    logger.error({ process: "postgres", code, signal, restartInMs: decision.delayMs, recentCrashes: decision.history.crashes.length }, `the embedded Postgres ${how}: restarting it`);
    pendingTimer = setTimeout(() => {
      pendingTimer = undefined;
      const attemptAt = performance.now();
      restarting = (async () => {
        // A killed postmaster's backends hold the cluster's shared memory until they notice (within moments).
        if (!(await clusterProcessesGone(running.clusterDir))) {
          throw new Error(`processes of the old Postgres still run in ${running.clusterDir}: ${clusterProcesses(running.clusterDir).join(", ")}`);
        }
        return start(true);
      })().then(
        (next) => {
          if (stopping) return;
          const downMs = Math.round(performance.now() - crashedAt);
          logger.info({ process: "postgres", pid: next.process.pid, downMs }, "the embedded Postgres restarted");
          options.onRestart?.({ code, signal, delayMs: decision.delayMs, downMs, pid: next.process.pid! });
        },
        (error: Error) => crashed({ error }, attemptAt),
      );
    }, decision.delayMs);
  };

  const start = async (restart: boolean): Promise<EmbeddedPostgres> => {
    const postgres = await startEmbeddedPostgres({
      ...options,
      // A restart takes the same port: the services' DATABASE_URL names it.
      ...(restart ? { port: running.port, exactPort: true } : {}),
      onUnexpectedExit: (code, signal) => crashed({ code, signal }, startedAt),
    });
    startedAt = performance.now();
    running = postgres;
    if (stopping) await postgres.stop(); // stopped while it restarted
    return postgres;
  };

  running = await start(false);

  let stopped: Promise<void> | undefined;
  return {
    databaseUrl: running.databaseUrl,
    port: running.port,
    created: running.created,
    current: () => running,
    stop: () =>
      (stopped ??= (async () => {
        stopping = true;
        clearTimeout(pendingTimer);
        await restarting?.catch(() => {});
        await running.stop();
      })()),
  };
}
