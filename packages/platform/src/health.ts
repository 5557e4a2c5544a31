import { connect } from "node:net";
import type { ConnectRouter } from "@connectrpc/connect";
import type { Logger } from "./logger.ts";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@formsvc/proto/grpc/health/v1/health_pb.js";

/**
 * The standard grpc.health.v1 service. A process is SERVING once it has started, and NOT_SERVING
 * while it drains on shutdown or while a dependency it needs (its database, Kafka) is unreachable,
 * so Kubernetes (and the gateway's /readyz) stop counting on it until it can answer again.
 */
export class HealthState {
  private serving = false;
  /** Dependencies found unreachable. */
  private readonly down = new Set<string>();
  /** Dependencies whose outage is reported but leaves the process ready (see `tolerate`). */
  private readonly tolerated = new Set<string>();
  private readonly watchers = new Set<() => void>();

  get status(): Status {
    const blocking = [...this.down].some((dependency) => !this.tolerated.has(dependency));
    return this.serving && !blocking ? Status.SERVING : Status.NOT_SERVING;
  }

  /**
   * Keeps the process ready while `dependency` is down: its outage shows only in the health service
   * `dependency:<name>` and the logs. For Kafka: the outbox holds responses until the broker is back, and
   * delivery still serves its API and sends the deliveries it has, so neither should leave the rotation.
   */
  tolerate(dependency: string): void {
    this.tolerated.add(dependency);
    this.wakeWatchers();
  }

  /** Whether `dependency` answered at its last check (true when never found down). */
  reachable(dependency: string): boolean {
    return !this.down.has(dependency);
  }

  /** Liveness: SERVING from start until draining, whatever the dependencies. */
  get liveStatus(): Status {
    return this.serving ? Status.SERVING : Status.NOT_SERVING;
  }

  set(serving: boolean): void {
    if (serving === this.serving) return;
    this.serving = serving;
    this.wakeWatchers();
  }

  /** Records whether `dependency` answers; true when that changed. */
  setReachable(dependency: string, reachable: boolean): boolean {
    if (reachable !== this.down.has(dependency)) return false;
    if (reachable) this.down.delete(dependency);
    else this.down.add(dependency);
    this.wakeWatchers();
    return true;
  }

  private wakeWatchers(): void {
    for (const wake of this.watchers) wake();
  }

  /** Resolves at the next change, or when `signal` aborts. */
  changed(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        this.watchers.delete(wake);
        signal.removeEventListener("abort", wake);
        resolve();
      };
      this.watchers.add(wake);
      signal.addEventListener("abort", wake, { once: true });
    });
  }
}

/**
 * The health "service" name of liveness (Kubernetes' livenessProbe asks for it): SERVING while the process
 * runs and has not begun to drain, whatever its dependencies, so that a database outage makes the
 * services unready but never gets them restarted. Any other name (the empty one) asks for readiness.
 */
export const livenessService = "liveness";
/** Prefix of the health service names that report one dependency: `dependency:database`, `dependency:kafka`. */
export const dependencyServicePrefix = "dependency:";

export function healthRoutes(router: ConnectRouter, state: HealthState): void {
  const statusOf = (service: string) => {
    if (service === livenessService) return state.liveStatus;
    if (service.startsWith(dependencyServicePrefix)) {
      return state.reachable(service.slice(dependencyServicePrefix.length)) ? Status.SERVING : Status.NOT_SERVING;
    }
    return state.status;
  };
  router.service(Health, {
    check: (req) => ({ status: statusOf(req.service) }),
    async *watch(req, ctx) {
      while (!ctx.signal.aborted) {
        yield { status: statusOf(req.service) };
        await state.changed(ctx.signal);
      }
    },
  });
}

export interface DependencyProbe {
  /** Resolves when the dependency answers; rejects (or outlasts `timeoutMs`) when it does not. */
  check: () => Promise<unknown>;
  everyMs?: number;
  timeoutMs?: number;
}

/**
 * Checks `dependency` every `everyMs` (1.5 s) and keeps `health` NOT_SERVING while it fails or takes
 * longer than `timeoutMs` (1 s); a change is logged once. Returns the function that stops probing.
 */
export function probeDependency(health: HealthState, dependency: string, probe: DependencyProbe, logger: Logger): () => void {
  const everyMs = probe.everyMs ?? 1_500;
  const timeoutMs = probe.timeoutMs ?? 1_000;
  let inFlight = false;
  const run = async () => {
    // One check at a time: a check still hanging after its time-out has already counted as a failure,
    // and is waited for (not piled up behind, competing with real queries) before the next one starts.
    if (inFlight) return;
    inFlight = true;
    const check = probe.check();
    void check.then(
      () => (inFlight = false),
      () => (inFlight = false),
    );
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        check,
        new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs))),
      ]);
      if (health.setReachable(dependency, true)) logger.info({ dependency }, `${dependency} reachable again: serving`);
    } catch (err) {
      if (health.setReachable(dependency, false)) {
        logger.warn({ dependency, error: err instanceof Error ? err.message : String(err) }, `${dependency} unreachable: not serving until it answers`);
      }
    } finally {
      clearTimeout(timer);
    }
  };
  const interval = setInterval(() => void run(), everyMs);
  interval.unref();
  return () => clearInterval(interval);
}

/** A check that one of `addresses` (`host:port`) accepts a TCP connection (closed again at once). */
export function tcpCheck(addresses: readonly string[], timeoutMs = 1_000): () => Promise<void> {
  const attempt = (address: string) =>
    new Promise<void>((resolve, reject) => {
      const at = address.lastIndexOf(":");
      const socket = connect({ host: address.slice(0, at).replace(/^\[|\]$/g, ""), port: Number(address.slice(at + 1)) });
      socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`${address}: no connection within ${timeoutMs} ms`)));
      socket.once("connect", () => {
        socket.destroy();
        resolve();
      });
      socket.once("error", reject);
    });
  return () => Promise.any(addresses.map(attempt)).catch((err: AggregateError) => Promise.reject(err.errors[0] ?? err));
}
