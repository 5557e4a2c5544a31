import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import type { FormDocument, FormSettingsPatch } from "@formsvc/form-document";

export const formStatuses = ["draft", "published", "closed"] as const;
export type FormStatusName = (typeof formStatuses)[number];

/**
 * A form with its current (normalized) document. `blockKeys` remembers every key ever assigned on the
 * form, by block id, so a key never changes and is never given to another block. `settings` holds only
 * the settings that were set; defaults apply to the rest when read.
 */
export const FormEntity = defineEntity({
  name: "Form",
  tableName: "forms",
  properties: {
    id: p.string().primary(),
    workspaceId: p.string(),
    name: p.string(),
    status: p.enum(formStatuses),
    document: p.json<FormDocument>(),
    blockKeys: p.json<Record<string, string>>(),
    settings: p.json<FormSettingsPatch>(),
    version: p.integer(),
    responseCount: p.bigint("number"),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    /** Set while the form is in the Trash. */
    trashedAt: p.datetime().nullable(),
  },
});

export type Form = InferEntity<typeof FormEntity>;
