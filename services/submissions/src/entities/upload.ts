import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/**
 * An uploaded file of a form. Unattached until a save names it in a FILE or SIGNATURE answer; then it
 * belongs to that response only, and goes with it when the response is deleted. The bytes are in the
 * FileStore under `storageKey`.
 */
export const UploadEntity = defineEntity({
  name: "Upload",
  tableName: "uploads",
  properties: {
    id: p.string().primary(),
    formId: p.string(),
    /** The form's workspace, for its storage quota (null only for uploads older than quotas). */
    workspaceId: p.string().nullable(),
    responseId: p.string().nullable(),
    name: p.string(),
    contentType: p.string(),
    size: p.bigint("number"),
    storageKey: p.string(),
    createdAt: p.datetime(),
  },
});

export type Upload = InferEntity<typeof UploadEntity>;
