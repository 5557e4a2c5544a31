// How many attempts may run at once per receiver origin, the way TCP paces a connection (additive increase,
// multiplicative decrease). An origin starts at `floor` (4) slots; each 2xx answered within `quickMs` widens it
// by one, up to `ceiling` (32); an end that held its slot long or asks for less (no answer, a slow answer, 408
// or 429) halves it, never below `floor`; any other quick answer (a 4xx, a 500) leaves it be: such a receiver
// holds no slot for long, and its failures are the retry schedule's and the breaker's business. So a receiver
// that answers quickly keeps up with a burst even when some of its answers are errors (resetting to the floor at
// each one held a receiver failing 10 % of requests at ~8 slots, below 200 deliveries/s on a loaded machine);
// one that hangs holds only `floor` slots after a few attempts, and the other origins' deliveries find slots
// free (the worker's `maxInFlight` bounds them all).
import { statusExceptions, type SendResult } from "../sender/send-result.ts";
export interface OriginSlotsOptions {
  floor: number;
  ceiling: number;
  quickMs: number;
}

/** The end of an attempt, as the slots see it. */
export type SlotObservation = Pick<SendResult, "statusCode" | "durationMs">;

/** How an attempt's end moves its origin's limit. */
export function slotMove(end: SlotObservation, quickMs: number): "widen" | "keep" | "halve" {
  const asksForLess = statusExceptions.some((e) => e.status === end.statusCode && e.honoursRetryAfter);
  if (end.statusCode === 0 || end.durationMs > quickMs || asksForLess) return "halve";
  return end.statusCode >= 200 && end.statusCode < 300 ? "widen" : "keep";
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

  /** Widens or narrows `origin`'s limit by how an attempt to it ended (`slotMove`). */
  observe(origin: string, end: SlotObservation): void {
    const { floor, ceiling, quickMs } = this.options;
    const move = slotMove(end, quickMs);
    if (move === "keep") return;
    const limit = move === "widen" ? Math.min(ceiling, this.limitOf(origin) + 1) : Math.max(floor, Math.floor(this.limitOf(origin) / 2));
    if (limit === floor) {
      this.widened.delete(origin);
      return;
    }
    if (!this.widened.has(origin) && this.widened.size >= maxRememberedOrigins) this.widened.clear();
    this.widened.set(origin, limit);
  }
}
