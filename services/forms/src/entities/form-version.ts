import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import type { FormDocument } from "@formsvc/form-document";

/**
 * One version of a form's document. A draft's current version changes in place; once the form has
 * been published, every change of the document makes a new version.
 */
export const FormVersionEntity = defineEntity({
  name: "FormVersion",
  tableName: "form_versions",
  properties: {
    formId: p.string().primary(),
    version: p.integer().primary(),
    document: p.json<FormDocument>(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

export type FormVersion = InferEntity<typeof FormVersionEntity>;
