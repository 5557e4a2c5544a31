import { qualifiedTable, type MikroORM } from "@formsvc/platform/database.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { ResponseEntity, UploadEntity } from "../entities/index.ts";
import type { FileStore } from "./file-store.ts";

interface SweepOptions {
  orm: MikroORM;
  files: FileStore;
  logger?: Logger;
  batchSize?: number;
}

/**
 * Removes uploads that no save attached within the time-to-live (a respondent who uploaded and left):
 * rows first, a batch at a time, then their bytes. A save attaching one at the same moment either
 * wins (the row lock makes the sweep skip it) or finds it gone and is refused.
 */
export async function sweepUnattachedUploads(options: SweepOptions & { /** Uploads created before this instant go. */ createdBefore: Date }): Promise<number> {
  const table = qualifiedTable(options.orm, UploadEntity);
  return sweepBatches(
    options,
    `delete from ${table} where id in (
       select id from ${table} where response_id is null and created_at < ?
       order by created_at limit ? for update skip locked
     ) and response_id is null
     returning storage_key`,
    [options.createdBefore],
  );
}

/**
 * Removes the uploads of partial responses nobody has saved since `updatedBefore` (a respondent who
 * left for good): their rows, then their bytes. The response row is locked too, so a save of it at the
 * same moment either commits first (and the response is no longer abandoned) or waits and then finds the
 * files gone: its answer naming them is refused, asking for the file again. The answers are kept.
 */
export async function sweepAbandonedUploads(options: SweepOptions & { updatedBefore: Date }): Promise<number> {
  const uploads = qualifiedTable(options.orm, UploadEntity);
  const responses = qualifiedTable(options.orm, ResponseEntity);
  return sweepBatches(
    options,
    `delete from ${uploads} where id in (
       select u.id from ${uploads} u join ${responses} r on r.id = u.response_id
        where not r.completed and r.updated_at < ?
        order by r.updated_at limit ? for update skip locked
     )
     returning storage_key`,
    [options.updatedBefore],
  );
}

/** Runs `deleteReturningKeys` (its last parameter is the batch size) until a batch comes back short. */
async function sweepBatches(options: SweepOptions, deleteReturningKeys: string, params: unknown[]): Promise<number> {
  const { orm, files, logger } = options;
  const batchSize = options.batchSize ?? 500;
  let swept = 0;
  for (;;) {
    const rows: { storage_key: string }[] = await orm.em.fork().execute(deleteReturningKeys, [...params, batchSize]);
    for (const { storage_key: storageKey } of rows) {
      try {
        await files.delete(storageKey);
      } catch (err) {
        logger?.error({ err, storageKey }, "orphan file left in the store");
      }
    }
    swept += rows.length;
    if (rows.length < batchSize) return swept;
  }
}
