// Purging a form (forms' PurgeForm, for a form in the Trash): counting, then deleting, everything its
// responses hold.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { qualifiedTable, type MikroORM } from "@formsvc/platform/database.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import type { FormHoldingsSchema } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { deleteProblemsOf } from "./calculated-field-problems.ts";
import { ResponseEntity, UploadEntity } from "./entities/index.ts";
import type { FileStore } from "./files/file-store.ts";
import { idempotencyTable } from "./idempotency.ts";
import { recountForm } from "./response-counts.ts";
import { deleteInsightsOf } from "./insights/insight-aggregates.ts";
import { deleteVerificationsOf } from "./links/email-verifications.ts";
import { deleteLinksOf } from "./links/response-links.ts";

export interface FormHoldings {
  responses: number;
  partials: number;
  files: number;
  bytes: number;
}

export function holdingsMessage(holdings: FormHoldings): MessageInitShape<typeof FormHoldingsSchema> {
  return {
    responses: BigInt(holdings.responses),
    partials: BigInt(holdings.partials),
    files: BigInt(holdings.files),
    bytes: BigInt(holdings.bytes),
  };
}

/** The form's completed and partial responses, and its uploads (attached or not) with their bytes. */
export async function countFormHoldings(orm: MikroORM, formId: string): Promise<FormHoldings> {
  const responses = qualifiedTable(orm, ResponseEntity);
  const uploads = qualifiedTable(orm, UploadEntity);
  // One read of each table.
  const [row] = (await orm.em.fork().execute(
    `select r."responses", r."partials", u."files", u."bytes"
     from (select (count(*) filter (where "completed"))::text as "responses", (count(*) filter (where not "completed"))::text as "partials"
           from ${responses} where "form_id" = ?) r,
          (select count(*)::text as "files", coalesce(sum("size"), 0)::text as "bytes" from ${uploads} where "form_id" = ?) u`,
    [formId, formId],
  )) as Record<keyof FormHoldings, string>[];
  return { responses: Number(row.responses), partials: Number(row.partials), files: Number(row.files), bytes: Number(row.bytes) };
}

interface PurgeOptions {
  orm: MikroORM;
  files: FileStore;
  logger?: Logger;
  /** Rows a statement deletes at most (uploads: also the files removed before their rows go). */
  batchSize?: number;
}

/**
 * Deletes every upload of the form and every response, a batch at a time. For uploads the bytes go
 * first and their rows after, so a call cut short leaves rows that a second call finds and deletes again
 * (removing a missing key is no error), never an unreachable file. Nothing new can arrive meanwhile: a
 * form in the Trash takes no response and no upload. Answers what it deleted.
 */
export async function deleteFormHoldings(formId: string, options: PurgeOptions): Promise<FormHoldings> {
  const { orm, files } = options;
  const batchSize = options.batchSize ?? 500;
  const uploads = qualifiedTable(orm, UploadEntity);
  const responses = qualifiedTable(orm, ResponseEntity);
  const deleted: FormHoldings = { responses: 0, partials: 0, files: 0, bytes: 0 };

  for (;;) {
    const batch = (await orm.em.fork().execute(
      `select "id", "storage_key", "size"::text as "size" from ${uploads} where "form_id" = ? order by "id" limit ?`,
      [formId, batchSize],
    )) as { id: string; storage_key: string; size: string }[];
    if (batch.length === 0) break;
    // A store that fails throws here, before the rows go: the purge fails and can be made again.
    for (const upload of batch) await files.delete(upload.storage_key);
    const gone = (await orm.em.fork().execute(
      `delete from ${uploads} where "form_id" = ? and "id" in (?) returning "size"::text as "size"`,
      [formId, batch.map((u) => u.id)],
    )) as { size: string }[];
    deleted.files += gone.length;
    deleted.bytes += gone.reduce((sum, u) => sum + Number(u.size), 0);
  }

  for (;;) {
    const gone = (await orm.em.fork().execute(
      `delete from ${responses} where "id" in (select "id" from ${responses} where "form_id" = ? limit ?) returning "completed"`,
      [formId, batchSize],
    )) as { completed: boolean }[];
    for (const row of gone) {
      if (row.completed) deleted.responses += 1;
      else deleted.partials += 1;
    }
    if (gone.length < batchSize) break;
  }

  await orm.em.fork().getConnection().execute(`delete from ${idempotencyTable(orm)} where "form_id" = ?`, [formId], "run");
  await deleteProblemsOf(orm, formId);
  await deleteInsightsOf(orm, formId);
  await deleteLinksOf(orm, formId);
  await deleteVerificationsOf(orm, formId);
  // The count follows (to 0; pushed to forms by the pusher's next pass), should the form outlive the purge.
  await recountForm(orm, formId, responses);
  options.logger?.info({ formId, ...deleted }, "form's responses and files purged");
  return deleted;
}
