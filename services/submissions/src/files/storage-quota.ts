import { Code, ConnectError } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { qualifiedTable, type MikroORM } from "@formsvc/platform/database.ts";
import { UploadEntity } from "../entities/index.ts";
import type { ByteLimit } from "./upload-stream.ts";

export interface StorageQuotas {
  formQuotaBytes: number;
  workspaceQuotaBytes: number;
}

/** Bytes of uploads (attached or not) that the form and its workspace hold. */
export async function bytesHeld(em: EntityManager, orm: MikroORM, formId: string, workspaceId: string): Promise<{ form: number; workspace: number }> {
  const table = qualifiedTable(orm, UploadEntity);
  const [row] = (await em.execute(
    `select (select coalesce(sum("size"), 0) from ${table} where "form_id" = ?)::text as "form",
            (select coalesce(sum("size"), 0) from ${table} where "workspace_id" = ?)::text as "workspace"`,
    [formId, workspaceId],
  )) as { form: string; workspace: string }[];
  return { form: Number(row.form), workspace: Number(row.workspace) };
}

function shown(bytes: number): string {
  if (bytes < 1024 * 1024) return `${bytes} bytes`;
  const mib = bytes / 1024 / 1024;
  return mib >= 1024 ? `${Math.round((mib / 1024) * 10) / 10} GiB` : `${Math.round(mib * 10) / 10} MiB`;
}

/**
 * What the form and its workspace may still take: the smaller of their allowances, and the error past
 * it (the form's when both are as full).
 */
export async function storageLeft(em: EntityManager, orm: MikroORM, owner: { formId: string; workspaceId: string }, quotas: StorageQuotas): Promise<ByteLimit> {
  const held = await bytesHeld(em, orm, owner.formId, owner.workspaceId);
  const formLeft = quotas.formQuotaBytes - held.form;
  const workspaceLeft = quotas.workspaceQuotaBytes - held.workspace;
  if (formLeft <= workspaceLeft) {
    return { bytes: formLeft, exceeded: () => new ConnectError(`file: this form's storage quota of ${shown(quotas.formQuotaBytes)} is full`, Code.ResourceExhausted) };
  }
  return { bytes: workspaceLeft, exceeded: () => new ConnectError(`file: this workspace's storage quota of ${shown(quotas.workspaceQuotaBytes)} is full`, Code.ResourceExhausted) };
}

/**
 * Throws RESOURCE_EXHAUSTED when `size` more bytes would take the form or its workspace past its quota.
 * Inside a transaction, `lock` first takes the workspace's advisory lock, so concurrent uploads of one
 * workspace are counted one after the other and together never pass it.
 */
export async function checkStorageQuota(
  em: EntityManager,
  orm: MikroORM,
  upload: { formId: string; workspaceId: string; size: number },
  quotas: StorageQuotas,
  options: { lock: boolean },
): Promise<void> {
  if (options.lock) {
    await em.execute(`select pg_advisory_xact_lock(hashtextextended(?, 15))`, [`storage-quota ${upload.workspaceId}`]);
  }
  const left = await storageLeft(em, orm, upload, quotas);
  if (upload.size > left.bytes) throw left.exceeded();
}
