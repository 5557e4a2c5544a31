// The owner's side of responses: list (paged by cursor), export (streamed), read one, delete one, samples of
// the events a webhook would get, the results summary and the calculated fields that stored nothing. Each
// passes forms' check of the caller first.
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type { FilterQuery } from "@mikro-orm/core";
// The form document's rules by module, not its index: the index brings the document schemas and the CEL parser
// with them, which a submission never needs (calculated fields are evaluated in workers).
import type { FormDocument } from "@formsvc/form-document";
import { asCaller, requireCaller } from "@formsvc/platform/caller.ts";
import { keysetAfter, pageOf, pageRequest } from "@formsvc/platform/paging.ts";
import { upstreamFailure } from "@formsvc/platform/upstream-failure.ts";
import { eventTypeNames, maxSampleEvents } from "@formsvc/platform/events.ts";
import type { Event } from "@formsvc/proto/events/v1/events_pb.js";
import { SubmissionFilter, SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { problemsOf } from "../calculated-field-problems.ts";
import { maxSearchLength, summarizeResponses } from "../summary/response-summary.ts";
import { exportBatches } from "./export-submissions.ts";
import { deleteResponses } from "../response-deletion.ts";
import { ResponseEntity, type Response } from "../entities/index.ts";
import { formNotFound, type SubmissionsContext } from "./context.ts";
import { completionEvent, pageReached, partialEvent, submissionMessage } from "./response-events.ts";

/** Which responses a filter takes: completed ones (true), partial ones (false) or all (undefined). */
function completedOf(filter: SubmissionFilter): boolean | undefined {
  switch (filter) {
    case SubmissionFilter.UNSPECIFIED:
    case SubmissionFilter.ALL:
      return undefined;
    case SubmissionFilter.COMPLETED:
      return true;
    case SubmissionFilter.PARTIAL:
      return false;
    default:
      throw new ConnectError("filter must be one of all, completed, partial", Code.InvalidArgument);
  }
}

const submissionNotFound = () => new ConnectError("submission not found", Code.NotFound);

export function readHandlers(c: SubmissionsContext): Pick<
  ServiceImpl<typeof SubmissionsService>,
  "listSubmissions" | "exportSubmissions" | "getSubmission" | "deleteSubmission" | "listResponseEvents" | "summarizeResponses" | "listCalculatedFieldProblems"
> {
  const { orm, forms, logger, responsesTable, versionOf, checkCallerForm, deletion } = c;
  return {
    async listSubmissions(req, ctx) {
      const caller = requireCaller(ctx);
      const window = pageRequest(req);
      const completed = completedOf(req.filter);
      await checkCallerForm(caller, req.formId);
      const em = orm.em.fork();
      const conditions: object[] = [{ formId: req.formId }];
      if (completed !== undefined) conditions.push({ completed });
      if (req.since) conditions.push({ submittedAt: { $gte: timestampDate(req.since) } });
      if (req.until) conditions.push({ submittedAt: { $lt: timestampDate(req.until) } });
      if (req.updatedSince) conditions.push({ updatedAt: { $gte: timestampDate(req.updatedSince) } });
      if (req.afterId) {
        const after = await em.findOne(ResponseEntity, { id: req.afterId, formId: req.formId }, { fields: ["id", "createdAt"] });
        if (!after) throw new ConnectError("afterId names no submission of this form", Code.InvalidArgument);
        conditions.push(keysetAfter(responsesTable, "created_at", "asc", { at: after.createdAt, id: after.id }));
      }
      if (window.after) conditions.push(keysetAfter(responsesTable, "created_at", "desc", window.after));
      const rows = await em.find(ResponseEntity, { $and: conditions } as FilterQuery<Response>, {
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        limit: window.fetch,
        offset: window.offset,
      });
      const page = pageOf(rows, window.limit, (row) => row.createdAt);
      return { submissions: page.items.map(submissionMessage), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },

    async *exportSubmissions(req, ctx) {
      const completed = completedOf(req.filter);
      await checkCallerForm(requireCaller(ctx), req.formId);
      const query = { formId: req.formId, completed, since: req.since && timestampDate(req.since), until: req.until && timestampDate(req.until) };
      for await (const submissions of exportBatches(orm.em.fork(), responsesTable, query, ctx.signal)) yield { submissions };
    },

    async getSubmission(req, ctx) {
      await checkCallerForm(requireCaller(ctx), req.formId);
      const response = req.submissionId
        ? await orm.em.fork().findOne(ResponseEntity, { id: req.submissionId, formId: req.formId })
        : null;
      if (!response) throw submissionNotFound();
      return { submission: submissionMessage(response) };
    },

    async deleteSubmission(req, ctx) {
      await checkCallerForm(requireCaller(ctx), req.formId);
      if (!req.submissionId) throw submissionNotFound();
      // Rows first, in one transaction: from its commit on, neither the submission nor its files are
      // served. The bytes go after; one left behind by a failure is unreachable (and logged).
      const deleted = await deleteResponses(deletion, req.formId, [req.submissionId]);
      if (deleted.responses + deleted.partials === 0) throw submissionNotFound();
      return {};
    },

    async listResponseEvents(req, ctx) {
      const caller = requireCaller(ctx);
      const completed = req.eventType === eventTypeNames.formResponse ? true : req.eventType === eventTypeNames.formResponsePartial ? false : undefined;
      if (completed === undefined) throw new ConnectError(`eventType: one of ${eventTypeNames.formResponse}, ${eventTypeNames.formResponsePartial}`, Code.InvalidArgument);
      if (!Number.isInteger(req.limit) || req.limit < 1 || req.limit > maxSampleEvents) {
        throw new ConnectError(`limit: 1 to ${maxSampleEvents}`, Code.InvalidArgument);
      }
      if (!req.formId) throw formNotFound();
      const { form } = await forms.getForm({ id: req.formId }, asCaller(caller)).catch((err: unknown) => upstreamFailure("forms", err, { logger }));
      const rows = await orm.em.fork().find(ResponseEntity, { formId: req.formId, completed }, { orderBy: [{ createdAt: "desc" }, { id: "desc" }], limit: req.limit });
      const events: Event[] = [];
      for (const response of rows) {
        const { document } = await versionOf(form!, response.version);
        const event = completed ? completionEvent(response, form!.name, document) : partialEvent(response, form!.name, document, pageReached(document, response.answers));
        // A sample is no event that happened: its id says so, and stays the same from call to call.
        event.event.value!.eventId = `sample_${response.id}`;
        events.push(event);
      }
      return { events };
    },

    async summarizeResponses(req, ctx) {
      if (!req.formId) throw formNotFound();
      if (req.search.length > maxSearchLength) throw new ConnectError(`search: at most ${maxSearchLength} characters`, Code.InvalidArgument);
      const { form } = await forms.getForm({ id: req.formId }, asCaller(requireCaller(ctx))).catch((err: unknown) => upstreamFailure("forms", err, { logger }));
      return summarizeResponses(orm.em.fork(), responsesTable, form!.document as unknown as FormDocument, {
        formId: req.formId,
        since: req.since && timestampDate(req.since),
        until: req.until && timestampDate(req.until),
        search: req.search,
      });
    },

    async listCalculatedFieldProblems(req, ctx) {
      await checkCallerForm(requireCaller(ctx), req.formId);
      const problems = await problemsOf(orm, req.formId);
      return { problems: problems.map((p) => ({ field: p.field, reason: p.reason, count: BigInt(p.count), lastAt: timestampFromDate(p.lastAt) })) };
    },
  };
}
