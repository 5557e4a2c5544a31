import type { Client } from "@connectrpc/connect";
import { z } from "zod";
import { asCaller } from "@formsvc/platform/caller.ts";
import { submissionJson } from "@formsvc/api-records";
import { SubmissionFilter, type SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import type { FileLinks } from "../../files/signed-links.ts";
import { defineRoute } from "../route-table.ts";
import { envelopeOf, idParamsSchema, pagingQuerySchema, submissionSchema } from "../schemas.ts";

/** `?filter=` of submission lists (also the app's), and what each value asks submissions for. */
export const submissionFilterQuerySchema = z.object({
  filter: z.enum(["all", "completed", "partial"]).default("all").describe("completed, partial (incomplete) or all"),
});
export const submissionFilters = { all: SubmissionFilter.ALL, completed: SubmissionFilter.COMPLETED, partial: SubmissionFilter.PARTIAL };

const listQuerySchema = pagingQuerySchema.extend(submissionFilterQuerySchema.shape);
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
      params: idParamsSchema,
      query: listQuerySchema,
      success: { status: 200, description: "A page of submissions", schema: envelopeOf(submissionSchema, "SubmissionPage") },
      errors: [400, 404],
      handle: async ({ params, query, caller }) => {
        const { submissions: items, hasMore } = await submissions.listSubmissions(
          { formId: params.id, filter: submissionFilters[query.filter], page: query.page, limit: query.limit },
          asCaller(caller.userId),
        );
        return { items: items.map(present), page: query.page, limit: query.limit, hasMore };
      },
    }),
    defineRoute({
      method: "get",
      path: "/forms/:id/submissions/:sid",
      operationId: "getSubmission",
      tag: "Submissions",
      summary: "One submission, shown against the version its respondent saw",
      params: submissionParamsSchema,
      success: { status: 200, description: "The submission", schema: submissionSchema },
      errors: [404],
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
      errors: [404],
      handle: async ({ params, caller }) => {
        await submissions.deleteSubmission({ formId: params.id, submissionId: params.sid }, asCaller(caller.userId));
      },
    }),
  ];
}
