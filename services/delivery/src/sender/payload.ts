import { toJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampDate, ValueSchema, type Value } from "@bufbuild/protobuf/wkt";
import { takesOptions, takesUploads } from "@formsvc/form-document/block-types";
import { eventTypeOf } from "@formsvc/platform/events.ts";
import type { FileLinks } from "@formsvc/platform/file-links.ts";
import type { Event, FormChanged, ResponseCompleted, ResponseField, ResponsePartial } from "@formsvc/proto/events/v1/events_pb.js";

/** A file of a FILE or SIGNATURE answer, with a signed link that serves its bytes. */
export interface PayloadFile {
  id: string;
  name: string;
  url: string;
  mimeType: string;
  size: number;
}

/**
 * One element of `data.fields`: the spec's four members, then what makes the value usable without
 * another call: `options` for choice questions (Tally's shape), `rows` and `columns` for a matrix, `files`
 * for FILE and SIGNATURE ones.
 */
export interface PayloadField {
  questionId: string;
  type: string;
  label: string;
  value: JsonValue;
  options?: { id: string; text: string }[];
  rows?: { id: string; text: string }[];
  columns?: { id: string; text: string }[];
  files?: PayloadFile[];
}

/** FORM_RESPONSE's data (spec, "Request to the receiver", extended in README "Webhooks"). */
export interface ResponseData {
  responseId: string;
  formId: string;
  formName: string;
  submittedAt: string;
  fields: PayloadField[];
  hiddenFields: Record<string, JsonValue>;
  calculatedFields: Record<string, JsonValue>;
  /** ISO 3166-1 alpha-2, or null when unknown. */
  respondentCountry: string | null;
  /** BCP 47, or null for responses stored before it was recorded. */
  language: string | null;
  /** The address the respondent confirmed by a mailed code; present only when the form asked for one. */
  verifiedEmail?: string;
}

/** FORM_RESPONSE_PARTIAL's data: the answers so far (calculated fields come with the completion). */
export interface PartialResponseData {
  responseId: string;
  formId: string;
  formName: string;
  savedAt: string;
  /** The page reached, from 1. */
  page: number;
  fields: PayloadField[];
  hiddenFields: Record<string, JsonValue>;
  respondentCountry: string | null;
  language: string | null;
  verifiedEmail?: string;
}

/** FORM_PUBLISHED, FORM_CLOSED and FORM_DELETED's data. */
export interface FormData {
  formId: string;
  workspaceId: string;
  formName: string;
  /** After the change: published or closed; for FORM_DELETED the status it had before the Trash. */
  status: string;
  version: number;
  changedAt: string;
}

/** The JSON body a receiver gets: the envelope of every event type, `data` by type. */
export interface WebhookPayload {
  eventId: string;
  eventType: string;
  createdAt: string;
  data: ResponseData | PartialResponseData | FormData;
}

function jsonOf(value: Value | undefined): JsonValue {
  return value ? toJson(ValueSchema, value) : null;
}

function jsonMap(values: Record<string, Value>): Record<string, JsonValue> {
  return Object.fromEntries(Object.entries(values).map(([name, value]) => [name, jsonOf(value)]));
}

function payloadField(field: ResponseField, links: FileLinks, signedAtMs: number): PayloadField {
  const out: PayloadField = { questionId: field.questionId, type: field.type, label: field.label, value: jsonOf(field.value) };
  if (takesOptions(field.type)) out.options = field.options.map((o) => ({ id: o.id, text: o.text }));
  if (field.rows.length > 0) {
    out.rows = field.rows.map((r) => ({ id: r.id, text: r.text }));
    out.columns = field.columns.map((c) => ({ id: c.id, text: c.text }));
  }
  if (takesUploads(field.type)) {
    out.files = field.files.map((f) => ({
      id: f.id,
      name: f.name,
      url: links.sign(f.id, signedAtMs),
      mimeType: f.contentType,
      size: Number(f.size),
    }));
  }
  return out;
}

/**
 * The body of an event. `createdAt` is when the event was born (the completion, the partial save, the
 * form's change) and file links are signed as of that time (valid seven days from it): the body depends
 * on the event alone, and a redelivered event yields the very same bytes. An unanswered question's
 * value is null.
 */
export function webhookPayload(event: Event, links: FileLinks): WebhookPayload {
  const eventType = eventTypeOf(event);
  const { case: kind, value } = event.event;
  switch (kind) {
    case "formResponse": {
      const { createdAt, data } = responsePayload(value, links);
      return { eventId: value.eventId, eventType, createdAt, data };
    }
    case "formResponsePartial": {
      const { createdAt, data } = partialPayload(value, links);
      return { eventId: value.eventId, eventType, createdAt, data };
    }
    case "formPublished":
    case "formClosed":
    case "formDeleted": {
      const { createdAt, data } = formPayload(value);
      return { eventId: value.eventId, eventType, createdAt, data };
    }
    default:
      throw new Error("an event without a type");
  }
}

function responsePayload(event: ResponseCompleted, links: FileLinks): { createdAt: string; data: ResponseData } {
  const submitted = event.submittedAt ? timestampDate(event.submittedAt) : new Date();
  const submittedAt = submitted.toISOString();
  return {
    createdAt: submittedAt,
    data: {
      responseId: event.responseId,
      formId: event.formId,
      formName: event.formName,
      submittedAt,
      fields: event.fields.map((f) => payloadField(f, links, submitted.getTime())),
      hiddenFields: jsonMap(event.hiddenFields),
      calculatedFields: jsonMap(event.calculatedFields),
      respondentCountry: event.respondentCountry || null,
      language: event.respondentLanguage || null,
      ...(event.verifiedEmail ? { verifiedEmail: event.verifiedEmail } : {}),
    },
  };
}

function partialPayload(event: ResponsePartial, links: FileLinks): { createdAt: string; data: PartialResponseData } {
  const saved = event.savedAt ? timestampDate(event.savedAt) : new Date();
  const savedAt = saved.toISOString();
  return {
    createdAt: savedAt,
    data: {
      responseId: event.responseId,
      formId: event.formId,
      formName: event.formName,
      savedAt,
      page: event.page,
      fields: event.fields.map((f) => payloadField(f, links, saved.getTime())),
      hiddenFields: jsonMap(event.hiddenFields),
      respondentCountry: event.respondentCountry || null,
      language: event.respondentLanguage || null,
      ...(event.verifiedEmail ? { verifiedEmail: event.verifiedEmail } : {}),
    },
  };
}

function formPayload(event: FormChanged): { createdAt: string; data: FormData } {
  const changedAt = (event.changedAt ? timestampDate(event.changedAt) : new Date()).toISOString();
  return {
    createdAt: changedAt,
    data: { formId: event.formId, workspaceId: event.workspaceId, formName: event.formName, status: event.status, version: event.version, changedAt },
  };
}

/**
 * The body as sent, serialised once when the delivery is created and stored with it, so every attempt
 * (automatic or by hand) sends, and signs, exactly the same bytes.
 */
export function serializePayload(event: Event, links: FileLinks): string {
  return JSON.stringify(webhookPayload(event, links));
}

/**
 * The body of a test event: an event of one of the webhook's types built from the form as it is now (a
 * response's answers are samples: see sampleEvent), flagged `test: true`, so a receiver can be checked end
 * to end (signature included) against the shape its real events will have.
 */
export function testPayload(event: Event, links: FileLinks): WebhookPayload & { test: true } {
  const { eventId, eventType, createdAt, data } = webhookPayload(event, links);
  return { eventId, eventType, createdAt, test: true, data };
}
