// The soak's webhook receivers, on loopback, each with a role: healthy ones answer 200 at once; failing ones
// answer a fraction of their requests 500 and, of the rest, a fraction after `slowMs` (an unreliable receiver,
// so two receivers can make a healthy one and one both failing and slow); slow ones answer a fraction after `slowMs`. Only a fraction:
// a receiver that always failed would have its origin's breaker hold its deliveries back without counting
// attempts (they would never end), and one always slow gets 4 attempts at a time (a slow origin's slots:
// 2 a second at 2 s), far below a soak's rate; either would measure a design limit, not a leak. A failing
// receiver below the breaker's 50 % sees every delivery end within the retry schedule; a slow one keeps up
// while its slow answers hold fewer than its 4 slots (slowFraction * rate * slowMs / 1000 < ~2).
// Each request is told apart as a first attempt or a retry (its receiver answered its event 500 before).
import { startReceiver, type Received } from "../../tests/support/receiver.ts";

export type ReceiverRole = "healthy" | "failing" | "slow";

export interface ReceiverPlan {
  /** Receivers in all; the failing and slow ones are among them, the rest are healthy. */
  count: number;
  failing: number;
  slow: number;
  /** Of a failing receiver's requests, the fraction answered 500. */
  failFraction: number;
  /** Of a slow receiver's requests, the fraction answered after `slowMs`. */
  slowFraction: number;
  slowMs: number;
}

export type SoakReceiver = Awaited<ReturnType<typeof startReceiver>> & { role: ReceiverRole };

/** The role of receiver i (of `plan.count`): the failing ones first, then the slow ones, then healthy ones. */
export function roleOf(plan: Pick<ReceiverPlan, "failing" | "slow">, i: number): ReceiverRole {
  return i < plan.failing ? "failing" : i < plan.failing + plan.slow ? "slow" : "healthy";
}

export interface Arrivals {
  /** First attempts, by the role of the receiver they reached. */
  firsts: Record<ReceiverRole, Received[]>;
  retries: Received[];
}

export async function startSoakReceivers(plan: ReceiverPlan, random: () => number = Math.random) {
  const retries = new WeakSet<Received>();
  const receivers: SoakReceiver[] = [];
  for (let i = 0; i < plan.count; i++) {
    const role = roleOf(plan, i);
    // Events this receiver last answered 500: their next request is a retry. Those whose every attempt
    // failed stay (failFraction ** attempts of them).
    const failed = new Set<string>();
    const receiver = await startReceiver((req) => {
      const eventId = String(req.body?.eventId ?? req.headers["webhook-id"] ?? "");
      if (failed.delete(eventId)) retries.add(req);
      if (role === "failing" && random() < plan.failFraction) {
        failed.add(eventId);
        return { status: 500, body: "failing on purpose" };
      }
      if ((role === "slow" || role === "failing") && random() < plan.slowFraction) return { status: 200, delayMs: plan.slowMs };
      return { status: 200 };
    });
    receivers.push(Object.assign(receiver, { role }));
  }
  return {
    receivers,
    urls: receivers.map((r) => r.url),
    /** Every request received since the last call, emptied from the receivers: first attempts by role, and retries. */
    take(): Arrivals {
      const arrivals: Arrivals = { firsts: { healthy: [], failing: [], slow: [] }, retries: [] };
      for (const r of receivers) {
        for (const req of r.received.splice(0)) (retries.has(req) ? arrivals.retries : arrivals.firsts[r.role]).push(req);
      }
      return arrivals;
    },
    close: () => Promise.all(receivers.map((r) => r.close())),
  };
}
