import type { Client } from "@connectrpc/connect";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { z } from "zod";
import { instant } from "./instant.ts";
import { answerJson, submissionJson } from "@formsvc/api-records";
import { listQuestions, type FormDocument } from "@formsvc/form-document";
import { responseSummarySchema, submissionSchema, type ResponseSummary, type AppAnswer, type AppSubmission, type CalculatedFieldProblem, type FormStorage } from "@formsvc/api-records/schemas";
import type { asCaller } from "@formsvc/platform/caller.ts";
import type { FileLinks } from "@formsvc/platform/file-links.ts";
import type { FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { SubmissionFilter, type Submission, type SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { responseColumns } from "@formsvc/api-records/columns";
import { responseRows, responsesCsv, rowColumns, type CsvSubmission } from "../app-api/csv.ts";
import { responsesXlsx } from "../app-api/xlsx.ts";
import { displayValue, optionTexts } from "../app-api/display.ts";
import { appPage, cursorPagingQuerySchema, envelope, envelopeOf, items, pagingQuerySchema } from "./paging.ts";
import { defineRoute, idParamsSchema, recordIdSchema, Reply } from "./route.ts";

/** `?filter=` of submission lists, and what each value asks submissions for. */
const submissionFilterQuerySchema = z.object({
  filter: z.enum(["all", "completed", "partial"]).default("all").describe("completed, partial (incomplete) or all"),
});
const submissionFilters = { all: SubmissionFilter.ALL, completed: SubmissionFilter.COMPLETED, partial: SubmissionFilter.PARTIAL };

const optionalInstant = (what: string) => instant(what).optional();

/** The sync filters of the API's submission list; each narrows `filter`, and they combine. */
const listQuerySchema = cursorPagingQuerySchema.extend(submissionFilterQuerySchema.shape).extend({
  since: optionalInstant("only submissions completed at or after it (partial ones have no submittedAt, so none)"),
  until: optionalInstant("only submissions completed before it"),
  updatedSince: optionalInstant("only submissions changed at or after it: new ones, partial ones saved again, partial ones completed later"),
  afterId: recordIdSchema
    .optional()
    .describe("Only submissions newer than this one of the form (by createdAt, then id); a 400 when the form has no such submission"),
});
/** A date range over when responses were submitted (the CSV export, the summary). */
const rangeQuerySchema = z.object({
  since: optionalInstant("only responses completed at or after it"),
  until: optionalInstant("only responses completed before it"),
});
const at = (date: Date | undefined) => (date ? timestampFromDate(date) : undefined);
/** A submission as ExportSubmissions sends it (its proto's comment), answers as stored. */
type ExportedSubmission = Omit<CsvSubmission, "answers"> & { answers: Record<string, Parameters<typeof answerJson>[0]> };
/** What the exports write: columns, pages of responses, and the option texts of each version. */
type ExportRows = Parameters<typeof responseRows>;
const submissionParamsSchema = idParamsSchema.extend({ sid: z.string().min(1).describe("Submission id") });

export function submissionRoutes(submissions: Client<typeof SubmissionsService>, forms: Client<typeof FormsService>, links: FileLinks) {
  const signed = (sub: Submission) => submissionJson(sub, (fileId) => links.sign(fileId));

  /**
   * Each version of a form (its document, null when it cannot be read, and its option texts), read once
   * per request (after the caller's access was checked).
   */
  function formVersions(formId: string) {
    const cache = new Map<number, Promise<{ document: unknown; options: Map<string, string> }>>();
    return (version: number) => {
      let found = cache.get(version);
      if (!found) {
        found = forms
          .getFormVersion({ formId, version })
          .then((v) => v.document ?? null)
          .catch(() => null)
          .then((document) => ({ document, options: optionTexts(document) }));
        cache.set(version, found);
      }
      return found;
    };
  }

  /** Submissions as the app shows them: each answer with its text in the version the respondent saw. */
  function shown(subs: Submission[], versionOf: ReturnType<typeof formVersions>): Promise<AppSubmission[]> {
    return Promise.all(
      subs.map(async (sub) => {
        const json = signed(sub);
        const { options } = await versionOf(sub.version);
        const answers: Record<string, AppAnswer> = {};
        for (const [key, answer] of Object.entries(json.answers)) answers[key] = { ...answer, display: displayValue(answer, options) };
        return { ...json, answers };
      }),
    );
  }

  /**
   * What an export writes: the columns (the current questions, then older versions' ones, newest first:
   * known before the first row is written) and the responses newest first, in batches as they stream.
   */
  async function exportOf(formId: string, query: { filter: keyof typeof submissionFilters; since?: Date; until?: Date }, asUser: ReturnType<typeof asCaller>) {
    const [{ form }, { questions }] = await Promise.all([forms.getForm({ id: formId }, asUser), forms.listQuestions({ formId }, asUser)]);
    const versionOf = formVersions(formId);
    const olderQuestions: Record<string, { label: string; type: string }> = {};
    for (let version = form!.version; version >= 1; version--) {
      const { document } = await versionOf(version);
      if (!document) continue;
      for (const q of listQuestions(document as FormDocument)) olderQuestions[q.key] ??= { label: q.label, type: q.type };
    }
    // A batch of submissions each message, as JSON: read while the one before is written.
    async function* pages() {
      const batches = submissions.exportSubmissions({ formId, filter: submissionFilters[query.filter], since: at(query.since), until: at(query.until) }, asUser);
      for await (const batch of batches) {
        yield batch.submissions.map((json) => {
          const sub = JSON.parse(json) as ExportedSubmission;
          const answers: CsvSubmission["answers"] = {};
          for (const key in sub.answers) answers[key] = answerJson(sub.answers[key]!, (fileId) => links.sign(fileId));
          return { ...sub, answers };
        });
      }
    }
    const columns = rowColumns(responseColumns(questions, [{ answers: olderQuestions }]), (await versionOf(form!.version)).document);
    const rows: ExportRows = [columns, pages(), async (version) => (await versionOf(version)).options];
    return { fileName: `${(form!.name || "responses").replace(/[^\w.-]+/g, "_").slice(0, 80)}-responses`, rows };
  }

  return [
    defineRoute({
      method: "get",
      path: "/forms/:id/submissions",
      params: idParamsSchema,
      query: pagingQuerySchema.extend(submissionFilterQuerySchema.shape),
      success: { status: 200, description: "A page of submissions", schema: envelopeOf(submissionSchema, "SubmissionPage") },
      handle: ({ params, query, asUser }) => {
        return submissions.listSubmissions(
          {
            formId: params.id,
            filter: submissionFilters[query.filter],
            page: query.page,
            limit: query.limit,
            cursor: query.cursor,
            since: at(query.since),
            until: at(query.until),
            updatedSince: at(query.updatedSince),
            afterId: query.afterId,
          },
          asUser,
        );
      },
      api: {
        operationId: "listSubmissions",
        tag: "Submissions",
        summary: "A form's submissions, newest first",
        description:
          "Complete and partial responses; each answer is filed under its question's key and shaped by its type, with signed links to files. " +
          "To keep a copy in sync, poll with `updatedSince` set a little before the start of your previous poll, follow `nextCursor` " +
          "until it is null, and upsert by `id` (a submission changed during a walk may come again in the next poll).",
        errors: [],
        query: listQuerySchema,
        answer: (page, { query }) => envelope(page.submissions.map(signed), query, page),
      },
      app: {
        answer: async (page, { params, query }) => appPage(await shown(page.submissions, formVersions(params.id)), query, page.hasMore),
      },
    }),
    ...(
      [
        ["csv", "text/csv; charset=utf-8", (rows: ExportRows) => responsesCsv(...rows)],
        ["xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", (rows: ExportRows) => responsesXlsx(responseRows(...rows))],
      ] as const
    ).map(([extension, contentType, write]) =>
      defineRoute({
        method: "get",
        path: `/forms/:id/submissions.${extension}`,
        params: idParamsSchema,
        query: submissionFilterQuerySchema.extend(rangeQuerySchema.shape),
        success: { status: 200 },
        handle: async ({ params, query, asUser }) => {
          const { fileName, rows } = await exportOf(params.id, query, asUser);
          return new Reply(200, write(rows), {
            "Content-Type": contentType,
            "Content-Disposition": `attachment; filename="${fileName}.${extension}"`,
            "Cache-Control": "no-store",
          });
        },
        app: {},
      }),
    ),
    defineRoute({
      method: "get",
      path: "/forms/:id/summary",
      params: idParamsSchema,
      query: rangeQuerySchema.extend({
        search: z.string().default("").describe("Only responses with an answer containing this text (a choice: its option's text)"),
      }),
      success: { status: 200, description: "The form's completed responses summed up per question", schema: responseSummarySchema },
      handle: async ({ params, query, asUser }): Promise<ResponseSummary> => {
        const summary = await submissions.summarizeResponses(
          { formId: params.id, since: at(query.since), until: at(query.until), search: query.search },
          asUser,
        );
        const counts = (list: { value: string; label: string; count: bigint }[]) => list.map((c) => ({ value: c.value, label: c.label, count: Number(c.count) }));
        return {
          responses: Number(summary.responses),
          submittedByDay: counts(summary.submittedByDay),
          questions: summary.questions.map((q) => ({
            key: q.key,
            type: q.type,
            label: q.label,
            shape: q.shape,
            answered: Number(q.answered),
            counts: counts(q.counts),
            min: q.min ?? null,
            median: q.median ?? null,
            max: q.max ?? null,
            mean: q.mean ?? null,
            latest: q.latest,
            files: Number(q.files),
            score: q.score ?? null,
            ranks: q.ranks.map((r) => ({ value: r.value, label: r.label, meanRank: r.meanRank ?? null })),
            rows: q.rows.map((r) => ({ value: r.value, label: r.label, counts: counts(r.counts) })),
          })),
        };
      },
      app: {},
    }),
    defineRoute({
      method: "get",
      path: "/forms/:id/submissions/:sid",
      params: submissionParamsSchema,
      success: { status: 200, description: "The submission", schema: submissionSchema },
      handle: async ({ params, asUser }) => (await submissions.getSubmission({ formId: params.id, submissionId: params.sid }, asUser)).submission!,
      api: {
        operationId: "getSubmission",
        tag: "Submissions",
        summary: "One submission, shown against the version its respondent saw",
        description: "Labels and types are those of the version the respondent saw, so a response stays readable after the form changes.",
        errors: [],
        answer: signed,
      },
      // The app shows it with the document of that version.
      app: {
        answer: async (submission, { params }) => {
          const versionOf = formVersions(params.id);
          const [presented] = await shown([submission], versionOf);
          return { submission: presented, document: (await versionOf(submission.version)).document };
        },
      },
    }),
    defineRoute({
      method: "delete",
      path: "/forms/:id/submissions/:sid",
      params: submissionParamsSchema,
      success: { status: 204, description: "Deleted" },
      handle: async ({ params, asUser }) => {
        await submissions.deleteSubmission({ formId: params.id, submissionId: params.sid }, asUser);
      },
      api: {
        operationId: "deleteSubmission",
        tag: "Submissions",
        summary: "Delete a submission and every attached file, permanently",
        description: "The form's response count drops by one; the files' links stop working at once.",
        errors: [],
      },
      app: {},
    }),
    defineRoute({
      method: "get",
      path: "/forms/:id/storage",
      params: idParamsSchema,
      success: { status: 200 },
      handle: async ({ params, asUser }): Promise<FormStorage> => {
        const held = await submissions.getFormStorage({ formId: params.id }, asUser);
        return { files: Number(held.files), bytes: Number(held.bytes), quotaBytes: Number(held.quotaBytes) };
      },
      app: {},
    }),
    defineRoute({
      method: "get",
      path: "/forms/:id/calculated-field-problems",
      params: idParamsSchema,
      success: { status: 200 },
      handle: async ({ params, asUser }) => {
        const { problems } = await submissions.listCalculatedFieldProblems({ formId: params.id }, asUser);
        return items(
          problems.map((p): CalculatedFieldProblem => ({
            field: p.field,
            reason: p.reason as CalculatedFieldProblem["reason"],
            count: Number(p.count),
            lastAt: p.lastAt ? timestampDate(p.lastAt).toISOString() : null,
          })),
        );
      },
      app: {},
    }),
  ];
}
