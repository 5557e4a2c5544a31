import type { Client } from "@connectrpc/connect";
import { z } from "zod";
import { asCaller } from "@formsvc/platform/caller.ts";
import { submissionJson } from "@formsvc/api-records";
import { SubmissionFilter, type SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import type { FileLinks } from "@formsvc/platform/file-links.ts";
import { defineRoute } from "../route-table.ts";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { cursorPagingQuerySchema, envelope, envelopeOf, idParamsSchema, recordIdSchema, submissionSchema } from "../schemas.ts";

/** `?filter=` of submission lists (also the app's), and what each value asks submissions for. */
export const submissionFilterQuerySchema = z.object({
  filter: z.enum(["all", "completed", "partial"]).default("all").describe("completed, partial (incomplete) or all"),
});
export const submissionFilters = { all: SubmissionFilter.ALL, completed: SubmissionFilter.COMPLETED, partial: SubmissionFilter.PARTIAL };

const instant = (what: string) =>
  z.iso
    .datetime({ offset: true })
    .transform((text) => new Date(text))
    .optional()
    .describe(`ISO 8601 date-time with a zone (\`2026-12-01T00:00:00Z\`): ${what}`);

/** The sync filters of the API's submission list; each narrows `filter`, and they combine. */
const listQuerySchema = cursorPagingQuerySchema.extend(submissionFilterQuerySchema.shape).extend({
  since: instant("only submissions completed at or after it (partial ones have no submittedAt, so none)"),
  until: instant("only submissions completed before it"),
  updatedSince: instant("only submissions changed at or after it: new ones, partial ones saved again, partial ones completed later"),
  afterId: recordIdSchema
    .optional()
    .describe("Only submissions newer than this one of the form (by createdAt, then id); a 400 when the form has no such submission"),
});
const submissionParamsSchema = idParamsSchema.extend({ sid: z.string().min(1).describe("Submission id") });

export function submissionRoutes(submissions: Client<typeof SubmissionsService>, links: FileLinks) {
  const present = (sub: Parameters<typeof submissionJson>[0]) => submissionJson(sub, (fileId) => links.sign(fileId));
  return [
    defineRoute({
      method: "get",
      path: "/forms/:id/submissions",
      operationId: "listSubmissions",
      tag: "Submissions",
      summary: "A form's submissions, newest first",
      description:
        "Complete and partial responses; each answer is filed under its question's key and shaped by its type, with signed links to files. " +
        "To keep a copy in sync, poll with `updatedSince` set a little before the start of your previous poll, follow `nextCursor` " +
        "until it is null, and upsert by `id` (a submission changed during a walk may come again in the next poll).",
      params: idParamsSchema,
      query: listQuerySchema,
      success: { status: 200, description: "A page of submissions", schema: envelopeOf(submissionSchema, "SubmissionPage") },
      errors: [],
      handle: async ({ params, query, caller }) => {
        const at = (date: Date | undefined) => (date ? timestampFromDate(date) : undefined);
        const page = await submissions.listSubmissions(
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
          asCaller(caller.userId),
        );
        return envelope(page.submissions.map(present), query, page);
      },
    }),
    defineRoute({
      method: "get",
      path: "/forms/:id/submissions/:sid",
      operationId: "getSubmission",
      tag: "Submissions",
      summary: "One submission, shown against the version its respondent saw",
      description: "Labels and types are those of the version the respondent saw, so a response stays readable after the form changes.",
      params: submissionParamsSchema,
      success: { status: 200, description: "The submission", schema: submissionSchema },
      errors: [],
      handle: async ({ params, caller }) =>
        present(
          (await submissions.getSubmission({ formId: params.id, submissionId: params.sid }, asCaller(caller.userId))).submission!,
        ),
    }),
    defineRoute({
      method: "delete",
      path: "/forms/:id/submissions/:sid",
      operationId: "deleteSubmission",
      tag: "Submissions",
      summary: "Delete a submission and every attached file, permanently",
      description: "The form's response count drops by one; the files' links stop working at once.",
      params: submissionParamsSchema,
      success: { status: 204, description: "Deleted" },
      errors: [],
      handle: async ({ params, caller }) => {
        await submissions.deleteSubmission({ formId: params.id, submissionId: params.sid }, asCaller(caller.userId));
      },
    }),
  ];
}
