// The RPCs of insights (issue 36): RecordInsights and GetVisitorSalt for the gateway's hosted pages,
// GetInsights for owners. The counting itself is the gateway's (gateway/src/hosted/insights.ts); the
// aggregates are insight-aggregates.ts.
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Client, type ServiceImpl } from "@connectrpc/connect";
import type { FormDocument } from "@formsvc/form-document";
import { isInputBlock } from "@formsvc/form-document/block-types";
import { listQuestions } from "@formsvc/form-document/questions";
import { asCaller, requireCaller } from "@formsvc/platform/caller.ts";
import type { MikroORM } from "@formsvc/platform/database.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { upstreamFailure } from "@formsvc/platform/upstream-failure.ts";
import type { FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import type { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { readInsights, recordInsights, visitorSalt } from "./insight-aggregates.ts";

/** The most rows of each kind a RecordInsights batch takes (the gateway sends far fewer). */
export const maxInsightRows = 10_000;
const utcDay = /^\d{4}-\d{2}-\d{2}$/;

type InsightsHandlers = Pick<ServiceImpl<typeof SubmissionsService>, "getInsights" | "recordInsights" | "getVisitorSalt">;

export function createInsightsHandlers(deps: { orm: MikroORM; forms: Client<typeof FormsService>; logger?: Logger }): InsightsHandlers {
  const { orm, forms, logger } = deps;
  const invalid = (message: string) => new ConnectError(message, Code.InvalidArgument);
  return {
    async getInsights(req, ctx) {
      if (!req.formId) throw new ConnectError("form not found", Code.NotFound);
      // Forms' own check of the caller: a form they may not see is NOT_FOUND, as on every form route. The
      // aggregates are read meanwhile (they answer only once the check has passed): one wait, not two.
      const [{ form }, totals] = await Promise.all([
        forms.getForm({ id: req.formId }, asCaller(requireCaller(ctx))).catch((err: unknown) => upstreamFailure("forms", err, { logger })),
        readInsights(orm, req.formId, req.since && timestampDate(req.since), req.until && timestampDate(req.until)),
      ]);
      // The questions a page shows: its input blocks (not hidden fields or the respondent's country).
      const document = form!.document as unknown as FormDocument;
      const onPage = new Set(document.blocks.filter(isInputBlock).map((b) => b.key));
      const questions = listQuestions(document).filter((q) => q.key && onPage.has(q.key));
      const big = BigInt;
      return {
        views: big(totals.views),
        visitors: big(totals.visitors),
        starts: big(totals.starts),
        completions: big(totals.completions),
        medianSecondsToComplete: totals.medianSecondsToComplete ?? undefined,
        questions: questions.map((q) => {
          const counted = totals.questions.get(q.key);
          return { key: q.key, label: q.label, shown: big(counted?.shown ?? 0), answered: big(counted?.answered ?? 0), dropOffs: big(counted?.dropOffs ?? 0) };
        }),
        days: totals.days.map((d) => ({ date: d.date, views: big(d.views), starts: big(d.starts), completions: big(d.completions) })),
      };
    },

    async recordInsights(req) {
      // Internal (the gateway's batches).
      const rows = [req.days, req.questions, req.visitors, req.completionTimes];
      if (rows.some((list) => list.length > maxInsightRows)) throw invalid(`at most ${maxInsightRows} rows of each kind per call`);
      for (const row of [...req.days, ...req.questions, ...req.visitors, ...req.completionTimes]) {
        if (!row.formId || !utcDay.test(row.day)) throw invalid("every row needs a form id and a day (YYYY-MM-DD)");
      }
      if (req.questions.some((q) => !q.key || q.key.length > 200)) throw invalid("a question's key: 1 to 200 characters");
      if (req.visitors.some((v) => !v.visitor || v.visitor.length > 100)) throw invalid("a visitor: 1 to 100 characters");
      await recordInsights(orm, req);
      return {};
    },

    async getVisitorSalt(req) {
      // Internal (the gateway, once a day).
      if (!utcDay.test(req.day)) throw invalid("day: YYYY-MM-DD");
      return { salt: await visitorSalt(orm, req.day) };
    },
  };
}
