// How long stopping may take, in one place: what a process asked to stop gives the requests it accepted, when it
// exits by itself whatever is left, and when whoever stopped it (the launcher; Kubernetes, whose
// terminationGracePeriodSeconds in deploy/k8s is checked against these by tests/deploy.test.ts) may SIGKILL it.

/** A process asked to stop (SIGTERM, SIGINT) serves the requests it had accepted for at most this long, then cuts what is left. */
export const drainLimitMs = 20_000;

/** After the drain: background work, the database pool, the last spans. The process exits by itself at drainLimitMs + this. */
export const afterDrainMs = 3_000;

/** The longest a process takes to stop by itself once asked (23 s). */
export const processStopLimitMs = drainLimitMs + afterDrainMs;

/** How long the launcher waits after its SIGTERM before it SIGKILLs a process (25 s): longer than the process's own limit. */
export const stopTimeoutMs = processStopLimitMs + 2_000;
