// Calculated fields that stored null for want of time or a worker, kept per form so the form's builder
// sees which field and why (the metric and the log say it to the operator only).
import type { MikroORM } from "@formsvc/platform/database.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import type { CutOff, CutOffReason } from "./calculated-fields-pool.ts";

/** The field of an evaluation that never ran: every field of the response stored null. */
export const everyField = "*";

export interface CalculatedFieldProblem {
  field: string;
  reason: CutOffReason;
  count: number;
  lastAt: Date;
}

const table = (orm: MikroORM) => `"${orm.config.get("schema")}"."calculated_field_problems"`;

/** Records one cut-off evaluation (a failure to record is logged: it never fails the response). */
export function recordCutOff(orm: MikroORM, logger: Logger | undefined): (cutOff: CutOff) => void {
  return ({ formId, field, reason }) => {
    orm.em
      .getConnection()
      .execute(
        `insert into ${table(orm)} ("form_id", "field", "reason", "count", "last_at") values (?, ?, ?, 1, now())
         on conflict ("form_id", "field", "reason") do update set "count" = ${table(orm)}."count" + 1, "last_at" = now()`,
        [formId, field ?? everyField, reason],
        "run",
      )
      .catch((err: unknown) => logger?.warn({ err, formId }, "recording a calculated field's cut-off failed"));
  };
}

/** The form's problems, most recent first. */
export async function problemsOf(orm: MikroORM, formId: string): Promise<CalculatedFieldProblem[]> {
  const rows: { field: string; reason: CutOffReason; count: string; last_at: Date }[] = await orm.em
    .getConnection()
    .execute(`select "field", "reason", "count"::text, "last_at" from ${table(orm)} where "form_id" = ? order by "last_at" desc`, [formId], "all");
  return rows.map((r) => ({ field: r.field, reason: r.reason, count: Number(r.count), lastAt: new Date(r.last_at) }));
}

/** Forgets the form's problems (the form is purged). */
export async function deleteProblemsOf(orm: MikroORM, formId: string): Promise<void> {
  await orm.em.fork().getConnection().execute(`delete from ${table(orm)} where "form_id" = ?`, [formId], "run");
}
