// How many attempts may run at once per receiver origin. An origin starts at `floor` (4) slots; each
// success answered within `quickMs` widens it by one, up to `ceiling` (32); any other end (slow, failed,
// refused, timed out) narrows it back to `floor`. A receiver that answers quickly gets its deliveries in
// parallel and keeps up with a burst; one that hangs or fails holds only `floor` slots, so the other
// origins' deliveries find slots free (the worker's `maxInFlight` bounds them all).
export interface OriginSlotsOptions {
  floor: number;
  ceiling: number;
  quickMs: number;
}

/** The end of an attempt, as the slots see it. */
export interface SlotObservation {
  succeeded: boolean;
  durationMs: number;
}

/** Origins whose widened limit is remembered; past this many, all start again from the floor. */
const maxRememberedOrigins = 10_000;

export class OriginSlots {
  private readonly busy = new Map<string, number>();
  /** Origins above the floor, and their limit. */
  private readonly widened = new Map<string, number>();
  private readonly options: OriginSlotsOptions;

  constructor(options: OriginSlotsOptions) {
    this.options = { ...options, ceiling: Math.max(options.floor, options.ceiling) };
  }

  limitOf(origin: string): number {
    return this.widened.get(origin) ?? this.options.floor;
  }

  /**
   * The slots free of each origin with attempts under way (0: full, and a claim leaves its deliveries
   * alone); any other origin has its limit free.
   */
  rooms(): Map<string, number> {
    return new Map([...this.busy].map(([origin, n]) => [origin, Math.max(0, this.limitOf(origin) - n)]));
  }

  /** Takes a slot of `origin`; false when it has none free. */
  take(origin: string): boolean {
    const busy = this.busy.get(origin) ?? 0;
    if (busy >= this.limitOf(origin)) return false;
    this.busy.set(origin, busy + 1);
    return true;
  }

  /** Gives back a slot taken with `take`. */
  give(origin: string): void {
    const left = (this.busy.get(origin) ?? 1) - 1;
    if (left > 0) this.busy.set(origin, left);
    else this.busy.delete(origin);
  }

  /** Widens or narrows `origin`'s limit by how an attempt to it ended. */
  observe(origin: string, end: SlotObservation): void {
    const { floor, ceiling, quickMs } = this.options;
    if (!end.succeeded || end.durationMs > quickMs) {
      this.widened.delete(origin);
      return;
    }
    const limit = Math.min(ceiling, this.limitOf(origin) + 1);
    if (limit === floor) return;
    if (!this.widened.has(origin) && this.widened.size >= maxRememberedOrigins) this.widened.clear();
    this.widened.set(origin, limit);
  }
}
