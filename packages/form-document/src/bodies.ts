// REST request bodies of the form endpoints, shared by the gateway (edge validation, OpenAPI) and the
// forms service. Plain zod: no transforms.
import { z } from "zod";
import { formDocumentSchema } from "./schema.ts";
import { formSettingsPatchSchema } from "./settings.ts";

export const formNameSchema = z.string().min(1).max(200).regex(/\S/, "must not be blank").describe("The form's name.");

/** POST /api/v1/forms */
export const createFormBodySchema = z
  .strictObject({
    workspaceId: z.string().min(1).max(200).describe("The workspace the form is created in."),
    name: formNameSchema
      .optional()
      .describe("The form's name; defaults to the document's title, else \"Untitled form\"."),
    document: formDocumentSchema.optional(),
  })
  .meta({
    description: "A new form; it is created as a draft.",
    examples: [{ workspaceId: "Wk8Qm3Rz1TbX9aLc", name: "Event sign-up" }],
  });

/** PATCH /api/v1/forms/:id */
export const updateFormBodySchema = z
  .strictObject({
    name: formNameSchema.optional(),
    document: formDocumentSchema.optional(),
    settings: formSettingsPatchSchema.optional(),
  })
  .meta({
    description:
      "Changes to a form. `document` replaces the whole document: start from a fresh GET of the form, or " +
      "edits made since are lost. `settings` is merged into the current settings. The status cannot be changed here.",
    examples: [{ name: "Event sign-up 2025", settings: { submitLabel: "Register" } }],
  });

export type CreateFormBody = z.infer<typeof createFormBodySchema>;
export type UpdateFormBody = z.infer<typeof updateFormBodySchema>;
