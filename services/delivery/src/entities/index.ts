import { AttemptEntity } from "./attempt.ts";
import { CursorEntity } from "./cursor.ts";
import { DeliveryEntity } from "./delivery.ts";
import { FailingWebhookEntity } from "./failing-webhook.ts";

export { AttemptEntity, CursorEntity, DeliveryEntity, FailingWebhookEntity };
export { deliveryStatuses, type Delivery, type DeliveryStatusName } from "./delivery.ts";
export type { Attempt } from "./attempt.ts";
export type { Cursor } from "./cursor.ts";

/** Every entity of the delivery schema, for openDatabase. */
export const entities = [DeliveryEntity, AttemptEntity, CursorEntity, FailingWebhookEntity];
