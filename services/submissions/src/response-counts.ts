// Forms keep each form's responseCount; submissions adjusts it after every completion and deletion.
// Adjustments of one form are coalesced: while one call is in flight, later ones add up and go together
// in the next call. Under load a form then gets one AdjustResponseCount per round trip instead of one
// per response, and each caller still returns only once its own adjustment is stored, so a count read
// after a save includes it.

/** Sends one adjustment; never throws (a failure is the sender's to log). */
export type SendAdjustment = (formId: string, delta: number) => Promise<void>;

interface Pending {
  delta: number;
  waiters: (() => void)[];
}

export function coalescedAdjustments(send: SendAdjustment): SendAdjustment {
  /** Forms with a call in flight, and what has come in for them since it left. */
  const inFlight = new Map<string, Pending>();

  async function drain(formId: string, first: Pending): Promise<void> {
    for (let batch: Pending | undefined = first; batch; ) {
      try {
        if (batch.delta !== 0) await send(formId, batch.delta);
      } catch {
        // Senders log their own failures; one that throws after all still lets its callers go.
      }
      for (const done of batch.waiters) done();
      const next = inFlight.get(formId)!;
      batch = next.waiters.length > 0 ? { ...next } : undefined;
      next.delta = 0;
      next.waiters = [];
    }
    inFlight.delete(formId);
  }

  return (formId, delta) =>
    new Promise<void>((resolve) => {
      const queued = inFlight.get(formId);
      if (queued) {
        queued.delta += delta;
        queued.waiters.push(resolve);
        return;
      }
      inFlight.set(formId, { delta: 0, waiters: [] });
      void drain(formId, { delta, waiters: [resolve] });
    });
}
