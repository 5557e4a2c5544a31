// Batches from a stream: whatever has arrived while the previous batch was handled, up to `max` at a
// time, so a consumer that keeps up handles items one by one and one that falls behind catches up in
// large steps. At most `max` * 2 items are read ahead.

export async function* inBatches<T>(source: AsyncIterable<T>, max: number): AsyncGenerator<T[]> {
  const queue: T[] = [];
  let ended = false;
  let failure: { error: unknown } | undefined;
  let arrived: (() => void) | undefined;
  let drained: (() => void) | undefined;

  const pump = (async () => {
    try {
      for await (const item of source) {
        queue.push(item);
        arrived?.();
        if (queue.length >= max * 2) await new Promise<void>((resolve) => (drained = resolve));
      }
    } catch (error) {
      failure = { error };
    } finally {
      ended = true;
      arrived?.();
    }
  })();

  try {
    for (;;) {
      if (queue.length === 0) {
        if (failure) throw failure.error;
        if (ended) return;
        await new Promise<void>((resolve) => (arrived = resolve));
        arrived = undefined;
        continue;
      }
      const batch = queue.splice(0, max);
      drained?.();
      drained = undefined;
      yield batch;
    }
  } finally {
    // The consumer stopped early: let the reader finish once its source is aborted.
    drained?.();
    void pump;
  }
}
