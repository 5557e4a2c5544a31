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

/** The event_type of a delivery made by SendTestEvent (its body says FORM_RESPONSE, with `test: true`). */
export const testEventType = "TEST";

/**
 * The body of a test event: shaped like a FORM_RESPONSE, flagged `test: true`, with made-up answers, so a
 * receiver can be checked end to end (signature included) before a real response arrives.
 */
export function testPayload(init: { eventId: string; formId: string; responseId: string; at: Date }): WebhookPayload & { test: true } {
  const at = init.at.toISOString();
  return {
    eventId: init.eventId,
    eventType: formResponseEventType,
    createdAt: at,
    test: true,
    data: {
      responseId: init.responseId,
      formId: init.formId,
      formName: "Test event",
      submittedAt: at,
      fields: [
        { questionId: "test_name", type: "SHORT_TEXT", label: "Your full name", value: "Ada Lovelace" },
        { questionId: "test_email", type: "EMAIL", label: "Email address", value: "ada@example.com" },
        { questionId: "test_rating", type: "RATING", label: "How did we do?", value: 5 },
      ],
    },
  };
}
