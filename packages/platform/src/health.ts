import type { ConnectRouter } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@formsvc/proto/grpc/health/v1/health_pb.js";

/**
 * The standard grpc.health.v1 service. A process is SERVING once it has started and NOT_SERVING
 * while it drains on shutdown, so Kubernetes stops routing to it before it stops.
 */
export class HealthState {
  private serving = false;
  private readonly watchers = new Set<() => void>();

  get status(): Status {
    return this.serving ? Status.SERVING : Status.NOT_SERVING;
  }

  set(serving: boolean): void {
    if (serving === this.serving) return;
    this.serving = serving;
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

export function healthRoutes(router: ConnectRouter, state: HealthState): void {
  router.service(Health, {
    check: () => ({ status: state.status }),
    async *watch(_req, ctx) {
      while (!ctx.signal.aborted) {
        yield { status: state.status };
        await state.changed(ctx.signal);
      }
    },
  });
}
