import { FormEntity } from "./form.ts";
import { FormVersionEntity } from "./form-version.ts";

export { FormEntity, FormVersionEntity };
export { formStatuses, type Form, type FormStatusName } from "./form.ts";
export type { FormVersion } from "./form-version.ts";

/** Every entity of the forms schema, for openDatabase. */
export const entities = [FormEntity, FormVersionEntity];
