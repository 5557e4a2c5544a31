import { AttemptEntity } from "./attempt.ts";
import { CursorEntity } from "./cursor.ts";
import { DeliveryEntity } from "./delivery.ts";
import { FailingWebhookEntity } from "./failing-webhook.ts";
import { PayloadEntity } from "./payload.ts";

export { AttemptEntity, CursorEntity, DeliveryEntity, FailingWebhookEntity, PayloadEntity };
export { deliveryStatuses, type Delivery, type DeliveryRecord, type DeliveryStatusName } from "./delivery.ts";
export type { Attempt } from "./attempt.ts";
export type { Cursor } from "./cursor.ts";

/** Every entity of the delivery schema, for openDatabase. */
export const entities = [DeliveryEntity, AttemptEntity, CursorEntity, FailingWebhookEntity, PayloadEntity];
