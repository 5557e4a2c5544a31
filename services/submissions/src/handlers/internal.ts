// Calls of other services only: forms' events joining the outbox, a form's holdings counted and purged,
// responses past a form's retention deleted, and the completion stream delivery follows (and acknowledges).
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { eventFacts } from "@formsvc/platform/events.ts";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { countFormHoldings, deleteFormHoldings, holdingsMessage } from "../form-purge.ts";
import { deleteResponsesBefore } from "../response-deletion.ts";
import { outboxColumns, outboxParams, outboxRow } from "../outbox/outbox-rows.ts";
import { outboxStream } from "../outbox/outbox-stream.ts";
import { acknowledgeCompletions } from "../outbox/outbox-retention.ts";
import { formNotFound, type SubmissionsContext } from "./context.ts";

export function internalHandlers(c: SubmissionsContext): Pick<
  ServiceImpl<typeof SubmissionsService>,
  "recordFormEvent" | "countFormResponses" | "deleteFormResponses" | "deleteResponsesBefore" | "streamCompletions" | "acknowledgeCompletions"
> {
  const { orm, files, logger, now, streamPollMs, completions, outboxTable, deletion } = c;
  return {
    async recordFormEvent(req) {
      // Internal (forms' outbox forwarder): a form event joins the outbox, once per event id.
      const event = req.event;
      const kind = event?.event.case;
      if (!event || (kind !== "formPublished" && kind !== "formClosed" && kind !== "formDeleted")) {
        throw new ConnectError("event: must be a FORM_PUBLISHED, FORM_CLOSED or FORM_DELETED event", Code.InvalidArgument);
      }
      const { eventId, formId } = eventFacts(event);
      if (!eventId || !formId) throw new ConnectError("event: needs an event id and a form id", Code.InvalidArgument);
      const row = { ...outboxRow(event, now()), requestId: req.requestId || null, traceParent: req.traceParent || null };
      await orm.em.getConnection().execute(
        `insert into ${outboxTable} ${outboxColumns}
         values (?, ?, ?, ?, ?, ?, ?) on conflict ("event_id") do nothing`,
        outboxParams(row),
        "run",
      );
      completions.notify();
      return {};
    },

    async countFormResponses(req) {
      // Internal (forms checks the caller, the role and the Trash).
      if (!req.formId) throw formNotFound();
      return { holdings: holdingsMessage(await countFormHoldings(orm, req.formId)) };
    },

    async deleteFormResponses(req) {
      // Internal (forms' PurgeForm, for a form in the Trash, which takes no responses or uploads).
      if (!req.formId) throw formNotFound();
      return { deleted: holdingsMessage(await deleteFormHoldings(req.formId, { orm, files, logger })) };
    },

    async deleteResponsesBefore(req, ctx) {
      // Internal (forms' pass over the forms with settings.deleteResponsesAfterDays).
      if (!req.formId) throw formNotFound();
      if (!req.before) throw new ConnectError("before: is required", Code.InvalidArgument);
      const deleted = await deleteResponsesBefore(deletion, req.formId, timestampDate(req.before), { signal: ctx.signal });
      return { deleted: holdingsMessage(deleted) };
    },

    async *streamCompletions(req, ctx) {
      yield* outboxStream(orm, { afterCursor: req.afterCursor, signal: ctx.signal, completions, pollMs: streamPollMs });
    },

    async acknowledgeCompletions(req) {
      // Internal (delivery's embedded stream): how far it has durably handled the outbox, for retention.
      if (!req.follower || req.follower.length > 200) throw new ConnectError("a follower's name (at most 200 characters) is required", Code.InvalidArgument);
      await acknowledgeCompletions(orm, req.follower, req.cursor);
      return {};
    },
  };
}
