// GET /forms/:id/insights (issue 36): the form's funnel, per question and per day, at both doors. Read
// from submissions' aggregates (GetInsights), which forms' access check guards: a form the caller may not
// see is a 404, as on every form route.
import type { Client } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { z } from "zod";
import { formInsightsSchema, type FormInsights } from "@formsvc/api-records/schemas";
import type { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { instant } from "./instant.ts";
import { defineRoute, idParamsSchema } from "./route.ts";

const insightsQuerySchema = z.object({
  since: instant("from the start of its UTC day").optional(),
  until: instant("the UTC days starting before it (default: all)").optional(),
});

export function insightRoutes(submissions: Client<typeof SubmissionsService>) {
  return [
    defineRoute({
      method: "get",
      path: "/forms/:id/insights",
      params: idParamsSchema,
      query: insightsQuerySchema,
      success: { status: 200, description: "The form's funnel over the date range", schema: formInsightsSchema },
      handle: async ({ params, query, asUser }): Promise<FormInsights> => {
        const at = (date: Date | undefined) => (date ? timestampFromDate(date) : undefined);
        const found = await submissions.getInsights({ formId: params.id, since: at(query.since), until: at(query.until) }, asUser);
        const n = Number;
        return {
          views: n(found.views),
          visitors: n(found.visitors),
          starts: n(found.starts),
          completions: n(found.completions),
          completionRate: found.starts > 0n ? Math.min(1, n(found.completions) / n(found.starts)) : null,
          medianSecondsToComplete: found.medianSecondsToComplete ?? null,
          questions: found.questions.map((q) => ({ key: q.key, label: q.label, shown: n(q.shown), answered: n(q.answered), dropOffs: n(q.dropOffs) })),
          days: found.days.map((d) => ({ date: d.date, views: n(d.views), starts: n(d.starts), completions: n(d.completions) })),
        };
      },
      api: {
        operationId: "getFormInsights",
        tag: "Submissions",
        summary: "A form's funnel: views, visitors, starts, completions, drop-off per question",
        description:
          "An extension of the spec. Counted by whole UTC days as respondents come (views of the hosted page by browsers, robots and prefetches " +
          "left out; a start is a first answer; a completion a response completed on the hosted page), so it reads as fast at any number of " +
          "responses. Visitors are counted without cookies or stored addresses, by a hash with a secret salt of the day that is deleted with it. " +
          "Per question: how often it was shown to respondents who started (branches the form's rules skip are not shown), answered, and " +
          "where those who left without completing stopped.",
        errors: [],
      },
      app: {},
    }),
  ];
}
