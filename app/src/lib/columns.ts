// Which columns the Responses table shows (the columns themselves: @formsvc/api-records/columns, shared with the CSV export).
import type { ResponseColumn } from "@formsvc/api-records/columns";
import type { Submission } from "../types.ts";

/** Hides columns no response has an answer for, except the questions of the current version. */
export function columnsWithAnswers(columns: ResponseColumn[], submissions: Pick<Submission, "answers">[]): ResponseColumn[] {
  return columns.filter((c) => !c.older || submissions.some((s) => s.answers[c.key]));
}
