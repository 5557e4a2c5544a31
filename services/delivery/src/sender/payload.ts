import { toJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampDate, ValueSchema } from "@bufbuild/protobuf/wkt";
import type { ResponseCompleted } from "@formsvc/proto/events/v1/events_pb.js";

/** The only eventType there is so far. */
export const formResponseEventType = "FORM_RESPONSE";

/** The JSON body a receiver gets (spec, "Request to the receiver"). */
export interface WebhookPayload {
  eventId: string;
  eventType: typeof formResponseEventType;
  createdAt: string;
  data: {
    responseId: string;
    formId: string;
    formName: string;
    submittedAt: string;
    fields: { questionId: string; type: string; label: string; value: JsonValue }[];
  };
}

/**
 * The body for a ResponseCompleted event. The event is born when the response is completed, so
 * `createdAt` is the completion time too: the body depends on the event alone, and a redelivered event
 * yields the very same bytes. An unanswered question's value is null.
 */
export function webhookPayload(event: ResponseCompleted): WebhookPayload {
  const submittedAt = (event.submittedAt ? timestampDate(event.submittedAt) : new Date()).toISOString();
  return {
    eventId: event.eventId,
    eventType: formResponseEventType,
    createdAt: submittedAt,
    data: {
      responseId: event.responseId,
      formId: event.formId,
      formName: event.formName,
      submittedAt,
      fields: event.fields.map((f) => ({
        questionId: f.questionId,
        type: f.type,
        label: f.label,
        value: f.value ? toJson(ValueSchema, f.value) : null,
      })),
    },
  };
}

/**
 * The body as sent, serialised once when the delivery is created and stored with it, so every attempt
 * (automatic or by hand) sends, and signs, exactly the same bytes.
 */
export function serializePayload(event: ResponseCompleted): string {
  return JSON.stringify(webhookPayload(event));
}
