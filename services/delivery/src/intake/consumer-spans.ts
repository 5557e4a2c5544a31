// The CONSUMER spans of a batch of events: one per event, under the trace of the request that
// completed its response, all open while the batch is handled.
import { markFailed, SpanKind, startSpan, type Context } from "@formsvc/platform/tracing.ts";

export interface TracedEvent {
  eventId: string;
  /** The context the bus brought with the event (a Kafka header, the outbox row). */
  parent: Context;
}

/** Runs `handle` with one span per event; `handle` gets each span's context, in the order of `events`. */
export async function withConsumerSpans<T>(
  name: string,
  system: string,
  events: TracedEvent[],
  handle: (contexts: Context[]) => Promise<T>,
): Promise<T> {
  const spans = events.map(({ eventId, parent }) =>
    startSpan(name, {
      kind: SpanKind.CONSUMER,
      parent,
      attributes: { "messaging.system": system, "messaging.operation.type": "process", "messaging.message.id": eventId, "messaging.batch.message_count": events.length },
    }),
  );
  try {
    return await handle(spans.map((s) => s.context));
  } catch (err) {
    for (const { span } of spans) markFailed(span, err instanceof Error ? err.message : String(err));
    throw err;
  } finally {
    for (const { span } of spans) span.end();
  }
}
