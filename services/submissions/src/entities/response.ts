import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import type { StoredAnswers } from "../answers/stored-answer.ts";

/**
 * A response to a form: partial while the respondent is filling it in, completed on submit (and never
 * changed after). `version` is the form version the respondent saw; `answers` hold, by key, the
 * questions as they were in that version, with the hidden fields (`hidden:<name>`), the country
 * (`meta:country`) and the calculated fields (`calculated:<name>`).
 */
export const ResponseEntity = defineEntity({
  name: "Response",
  tableName: "responses",
  properties: {
    id: p.string().primary(),
    formId: p.string(),
    workspaceId: p.string(),
    version: p.integer(),
    completed: p.boolean(),
    answers: p.json<StoredAnswers>(),
    /** The hidden fields' values by name, as given. */
    hidden: p.json<Record<string, string>>(),
    /** Two-letter code, or null when unknown. */
    country: p.string().nullable(),
    /** The language the respondent answered in (BCP 47); null for responses stored before it was recorded. */
    language: p.string().nullable(),
    /** The address the respondent confirmed by a mailed code (settings.requireEmailVerification); null: none. */
    verifiedEmail: p.string().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    /** When the response was completed. */
    submittedAt: p.datetime().nullable(),
  },
});

export type Response = InferEntity<typeof ResponseEntity>;
