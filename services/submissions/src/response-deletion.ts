// Deleting responses with their files: the one way a response goes while its form stays (DeleteSubmission,
// and a form's `settings.deleteResponsesAfterDays`). Purging a whole form is form-purge.ts.
import { qualifiedTable, type MikroORM } from "@formsvc/platform/database.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { ResponseEntity, UploadEntity } from "./entities/index.ts";
import type { FileStore } from "./files/file-store.ts";
import type { FormHoldings } from "./form-purge.ts";
import type { CompletionNotifier } from "./outbox/completion-notifier.ts";
import { countChangesTable } from "./response-counts.ts";

export interface ResponseDeletionDeps {
  orm: MikroORM;
  files: FileStore;
  logger?: Logger;
  /** Told when a deletion of completed responses has committed (the count pusher, response-counts.ts). */
  countChanges?: CompletionNotifier;
}

/** Removes stored bytes whose rows are gone (committed). A failure leaves an unreachable blob: logged. */
export async function removeStoredFiles(files: FileStore, storageKeys: readonly string[], logger?: Logger): Promise<void> {
  for (const storageKey of storageKeys) {
    try {
      await files.delete(storageKey);
    } catch (err) {
      logger?.error({ err, storageKey }, "orphan file left in the store");
    }
  }
}

/**
 * Deletes those of the form's responses `ids` names (that `olderThan`, when given, still finds old: see
 * deleteResponsesBefore) with their uploads. Rows first, in one transaction: each response is locked
 * (a save of it at the same moment commits first, and is then judged again, or waits and finds it gone),
 * then its uploads; both go, and the form's count drops by the completed ones in the same transaction.
 * From its commit on, neither the responses nor their files are served; the bytes go after, and one
 * left behind by a failure is unreachable (and logged). Answers what went (nothing for ids of no
 * response of the form).
 */
export async function deleteResponses(
  deps: ResponseDeletionDeps,
  formId: string,
  ids: readonly string[],
  options: { olderThan?: Date } = {},
): Promise<FormHoldings> {
  const { orm } = deps;
  const deleted: FormHoldings = { responses: 0, partials: 0, files: 0, bytes: 0 };
  if (ids.length === 0) return deleted;
  const responses = qualifiedTable(orm, ResponseEntity);
  const uploads = qualifiedTable(orm, UploadEntity);
  const storageKeys = await orm.em.fork().transactional(async (em) => {
    const connection = em.getConnection();
    const tx = em.getTransactionContext();
    const age = options.olderThan ? ` and ${olderThanCondition}` : "";
    const ageParams = options.olderThan ? [options.olderThan, options.olderThan] : [];
    // A row a concurrent save changed is judged again on its new version once that save commits.
    const locked = await connection.execute<{ id: string; completed: boolean }[]>(
      `select "id", "completed" from ${responses} where "form_id" = ? and "id" in (?)${age} order by "id" for update`,
      [formId, ids, ...ageParams],
      "all",
      tx,
    );
    if (locked.length === 0) return [];
    const lockedIds = locked.map((r) => r.id);
    const files = await connection.execute<{ storage_key: string; size: string }[]>(
      `delete from ${uploads} where "response_id" in (?) returning "storage_key", "size"::text as "size"`,
      [lockedIds],
      "all",
      tx,
    );
    await connection.execute(`delete from ${responses} where "id" in (?)`, [lockedIds], "run", tx);
    const completed = locked.filter((r) => r.completed).length;
    if (completed > 0) {
      await connection.execute(`insert into ${countChangesTable(orm)} ("form_id", "delta") values (?, ?)`, [formId, -completed], "run", tx);
    }
    deleted.responses = completed;
    deleted.partials = locked.length - completed;
    deleted.files = files.length;
    deleted.bytes = files.reduce((sum, f) => sum + Number(f.size), 0);
    return files.map((f) => f.storage_key);
  });
  await removeStoredFiles(deps.files, storageKeys, deps.logger);
  if (deleted.responses > 0) deps.countChanges?.notify();
  return deleted;
}

/**
 * How old a response is: a completed one since it was submitted (it never changes after), a partial one
 * since its last save (a respondent still filling it in keeps it). Two parameters: the bound, twice. Read
 * by index: (form_id, submitted_at) and (form_id, updated_at).
 */
const olderThanCondition = `(("completed" and "submitted_at" < ?) or (not "completed" and "updated_at" < ?))`;

/**
 * Deletes every response of the form older than `before` (completed: submitted before it; partial: last
 * saved before it) with its files, `batchSize` at a time, each batch through deleteResponses. Stops
 * between batches once `signal` is aborted. Logs one line when it deleted anything (the record of the
 * deletion) and answers what went.
 */
export async function deleteResponsesBefore(
  deps: ResponseDeletionDeps,
  formId: string,
  before: Date,
  options: { batchSize?: number; signal?: AbortSignal } = {},
): Promise<FormHoldings> {
  const batchSize = options.batchSize ?? 500;
  const responses = qualifiedTable(deps.orm, ResponseEntity);
  const deleted: FormHoldings = { responses: 0, partials: 0, files: 0, bytes: 0 };
  try {
    while (!options.signal?.aborted) {
      const batch = await deps.orm.em
        .fork()
        .getConnection()
        .execute<{ id: string }[]>(`select "id" from ${responses} where "form_id" = ? and ${olderThanCondition} limit ?`, [formId, before, before, batchSize], "all");
      if (batch.length === 0) break;
      const gone = await deleteResponses(
        deps,
        formId,
        batch.map((r) => r.id),
        { olderThan: before },
      );
      deleted.responses += gone.responses;
      deleted.partials += gone.partials;
      deleted.files += gone.files;
      deleted.bytes += gone.bytes;
      if (batch.length < batchSize) break;
    }
  } finally {
    // Also when a batch failed: what the earlier ones deleted is on record.
    if (deleted.responses + deleted.partials > 0) {
      deps.logger?.info(
        { formId, deleted: deleted.responses + deleted.partials, completed: deleted.responses, partials: deleted.partials, files: deleted.files, bytes: deleted.bytes, before: before.toISOString() },
        "responses past the form's deleteResponsesAfterDays deleted",
      );
    }
  }
  return deleted;
}
