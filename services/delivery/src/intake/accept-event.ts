// The one way events come in, whichever bus brings them (Kafka or the embedded stream): ask webhooks for
// the form's enabled webhooks and store one pending delivery per webhook, due at once. The unique
// (webhook_id, event_id) makes a redelivered event create nothing twice. Each delivery keeps the
// current trace context, which its attempts continue. The caller acknowledges the
// event to its bus (Kafka offset, stream cursor) only after this has returned.
import type { Client } from "@connectrpc/connect";
import type { MikroORM } from "@formsvc/platform/database.ts";
import { newId } from "@formsvc/platform/ids.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { currentTraceparent } from "@formsvc/platform/tracing.ts";
import type { ResponseCompleted } from "@formsvc/proto/events/v1/events_pb.js";
import type { WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { tablesOf } from "../entities/rows.ts";
import { originOf } from "../sender/breaker.ts";
import { formResponseEventType, serializePayload } from "../sender/payload.ts";

/** A call to webhooks that takes longer fails (and is tried again), so a hung call holds nothing for long. */
export const webhooksCallTimeoutMs = 5_000;

/** The entity manager of the transaction the deliveries are stored in. */
export type TransactionEm = Parameters<Parameters<MikroORM["em"]["transactional"]>[0]>[0];

export interface AcceptOptions {
  /** Runs in the transaction that stores the deliveries (the embedded stream moves its cursor there). */
  inTransaction?: (em: TransactionEm) => Promise<void>;
}

export type AcceptEvent = (event: ResponseCompleted, options?: AcceptOptions) => Promise<{ created: number }>;

export interface AcceptEventDeps {
  orm: MikroORM;
  /** Asked, without a caller, for the form's enabled webhooks. */
  webhooks: Pick<Client<typeof WebhooksService>, "listEnabledWebhooks">;
  logger?: Logger;
  /** Called after deliveries were stored: the worker of this process looks at once. */
  onAccepted?: () => void;
}

/**
 * Builds acceptEvent. It throws when webhooks or the database fails; the bus then hands the event
 * again later. An event without an id or a form cannot be delivered and is passed over (logged).
 */
export function createAcceptEvent(deps: AcceptEventDeps): AcceptEvent {
  const { orm } = deps;
  const { deliveries } = tablesOf(orm);

  return async (event, options = {}) => {
    let rows: unknown[][] = [];
    if (!event.eventId || !event.formId) {
      deps.logger?.error({ eventId: event.eventId, formId: event.formId }, "event without an id or a form: passed over");
    } else {
      const { webhooks } = await deps.webhooks.listEnabledWebhooks({ formId: event.formId }, { timeoutMs: webhooksCallTimeoutMs });
      const payload = serializePayload(event);
      const traceParent = currentTraceparent();
      rows = webhooks.map((w) => [newId(), w.id, event.eventId, formResponseEventType, event.formId, event.responseId, originOf(w.url), payload, traceParent]);
    }
    const created = await orm.em.fork().transactional(async (em) => {
      let inserted = 0;
      if (rows.length > 0) {
        const result: { id: string }[] = await em.execute(
          `insert into ${deliveries} ("id", "webhook_id", "event_id", "event_type", "form_id", "submission_id", "origin", "payload", "trace_parent",
             "status", "attempts", "last_error", "last_status_code", "next_attempt_at", "schedule_step", "created_at", "updated_at")
           values ${rows.map(() => `(?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, '', 0, now(), 0, now(), now())`).join(", ")}
           on conflict ("webhook_id", "event_id") do nothing
           returning "id"`,
          rows.flat(),
          "all",
        );
        inserted = result.length;
      }
      await options.inTransaction?.(em);
      return inserted;
    });
    if (created > 0) {
      deps.logger?.info({ eventId: event.eventId, formId: event.formId, deliveries: created }, "event accepted");
      deps.onAccepted?.();
    } else if (rows.length > 0) {
      deps.logger?.info({ eventId: event.eventId, formId: event.formId }, "event seen before: no new delivery");
    }
    return { created };
  };
}
