// The event behind a test delivery, of any type: for a response event the form's current questions, each
// with a sample answer; for a form event the form as it is now.
import { create, fromJson, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate, ValueSchema } from "@bufbuild/protobuf/wkt";
import type { FormDocument } from "@formsvc/form-document";
import { fieldTexts, isInputBlock } from "@formsvc/form-document/block-types";
import { sampleAnswer } from "@formsvc/form-document/sample-answers";
import { eventCaseOf } from "@formsvc/platform/events.ts";
import {
  EventSchema,
  FormChangedSchema,
  ResponseCompletedSchema,
  ResponseFieldSchema,
  ResponsePartialSchema,
  type Event,
  type ResponseField,
} from "@formsvc/proto/events/v1/events_pb.js";

export interface SampleForm {
  id: string;
  workspaceId: string;
  name: string;
  /** published, closed, ... as the form's status reads. */
  status: string;
  version: number;
  document: JsonObject;
}

function sampleFields(document: FormDocument): ResponseField[] {
  return (document.blocks ?? []).filter(isInputBlock).map((block) => create(ResponseFieldSchema, {
    questionId: block.id ?? "",
    type: block.type,
    label: block.question,
    value: fromJson(ValueSchema, sampleAnswer(block)),
    ...fieldTexts(block),
  }));
}

/** A sample event of `eventType` (one of eventTypes) about `form`. */
export function sampleEvent(eventType: string, init: { eventId: string; responseId: string; form: SampleForm; at: Date }): Event {
  // The stored document is normalised: every block and option has an id, every input block a key.
  const document = init.form.document as unknown as FormDocument;
  const { eventId, responseId, form } = init;
  const at = timestampFromDate(init.at);
  const hiddenFields = Object.fromEntries((document.hiddenFields ?? []).map((f) => [f.name, fromJson(ValueSchema, "sample")]));
  const response = { eventId, responseId, formId: form.id, workspaceId: form.workspaceId, formVersion: form.version, formName: form.name, fields: sampleFields(document), hiddenFields, respondentCountry: "GB", respondentLanguage: "en" };
  const changed = { eventId, formId: form.id, workspaceId: form.workspaceId, formName: form.name, version: form.version, changedAt: at };
  const kind = eventCaseOf(eventType);
  switch (kind) {
    case "formResponse": {
      const calculatedFields = Object.fromEntries((document.calculatedFields ?? []).map((f) => [f.name, fromJson(ValueSchema, null)]));
      return create(EventSchema, { event: { case: "formResponse", value: create(ResponseCompletedSchema, { ...response, submittedAt: at, calculatedFields }) } });
    }
    case "formResponsePartial":
      return create(EventSchema, { event: { case: "formResponsePartial", value: create(ResponsePartialSchema, { ...response, savedAt: at, page: 1 }) } });
    case "formPublished":
    case "formClosed":
    case "formDeleted": {
      const status = kind === "formPublished" ? "published" : kind === "formClosed" ? "closed" : form.status;
      return create(EventSchema, { event: { case: kind, value: create(FormChangedSchema, { ...changed, status }) } });
    }
    default:
      throw new Error(`no such event type: ${eventType}`);
  }
}
