import { FormEntity } from "./form.ts";
import { FormEventEntity } from "./form-event.ts";
import { FormVersionEntity } from "./form-version.ts";

export { FormEntity, FormEventEntity, FormVersionEntity };
export { formStatuses, type Form, type FormStatusName } from "./form.ts";
export type { FormEvent } from "./form-event.ts";
export type { FormVersion } from "./form-version.ts";

/** Every entity of the forms schema, for openDatabase. */
export const entities = [FormEntity, FormVersionEntity, FormEventEntity];
