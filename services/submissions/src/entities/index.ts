import { OutboxEntity } from "./outbox.ts";
import { ResponseEntity } from "./response.ts";
import { UploadEntity } from "./upload.ts";

export { OutboxEntity, ResponseEntity, UploadEntity };
export type { Outbox } from "./outbox.ts";
export type { Response } from "./response.ts";
export type { Upload } from "./upload.ts";

/** Every entity of the submissions schema, for openDatabase. */
export const entities = [ResponseEntity, UploadEntity, OutboxEntity];
