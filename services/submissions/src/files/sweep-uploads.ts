import { qualifiedTable, type MikroORM } from "@formsvc/platform/database.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { UploadEntity } from "../entities/index.ts";
import type { FileStore } from "./file-store.ts";

/** How long an upload may wait for a save that names it before it is swept: one day. */
export const unattachedUploadTtlMs = 24 * 60 * 60 * 1000;

/**
 * Removes uploads that no save attached within the time-to-live (a respondent who uploaded and left):
 * rows first, a batch at a time, then their bytes. A save attaching one at the same moment either
 * wins (the row lock makes the sweep skip it) or finds it gone and is refused.
 */
export async function sweepUnattachedUploads(options: {
  orm: MikroORM;
  files: FileStore;
  logger?: Logger;
  /** Uploads created before this instant go. */
  createdBefore: Date;
  batchSize?: number;
}): Promise<number> {
  const { orm, files, logger } = options;
  const table = qualifiedTable(orm, UploadEntity);
  let swept = 0;
  for (;;) {
    const rows: { storage_key: string }[] = await orm.em.fork().execute(
      `delete from ${table} where id in (
         select id from ${table} where response_id is null and created_at < ?
         order by created_at limit ? for update skip locked
       ) and response_id is null
       returning storage_key`,
      [options.createdBefore, options.batchSize ?? 500],
    );
    for (const { storage_key: storageKey } of rows) {
      try {
        await files.delete(storageKey);
      } catch (err) {
        logger?.error({ err, storageKey }, "orphan file left in the store");
      }
    }
    swept += rows.length;
    if (rows.length < (options.batchSize ?? 500)) return swept;
  }
}
