// The messages and events made of a stored response: the Submission an owner reads, and the events
// (FORM_RESPONSE, FORM_RESPONSE_PARTIAL) a save writes to the outbox and a sample shows.
import { create, fromJson, type JsonObject, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate, ValueSchema, type Value } from "@bufbuild/protobuf/wkt";
// The form document's rules by module, not its index: the index brings the document schemas and the CEL parser
// with them, which a submission never needs (calculated fields are evaluated in workers).
import type { FormDocument } from "@formsvc/form-document";
import { fieldTexts, isInputBlock } from "@formsvc/form-document/block-types";
import { respondentCountryQuestion } from "@formsvc/form-document/questions";
import { newId } from "@formsvc/platform/ids.ts";
import { envelopeOf } from "@formsvc/platform/events.ts";
import { EventSchema, ResponseCompletedSchema, ResponsePartialSchema, type Event, type ResponseFieldSchema } from "@formsvc/proto/events/v1/events_pb.js";
import type { SubmissionSchema } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import type { StoredAnswers, StoredFile } from "../answers/stored-answer.ts";
import type { Response, Upload } from "../entities/index.ts";

/** The Submission message of a stored response. */
export function submissionMessage(response: Response): MessageInitShape<typeof SubmissionSchema> {
  return {
    id: response.id,
    formId: response.formId,
    version: response.version,
    completed: response.completed,
    createdAt: timestampFromDate(response.createdAt),
    updatedAt: timestampFromDate(response.updatedAt),
    submittedAt: response.submittedAt ? timestampFromDate(response.submittedAt) : undefined,
    language: response.language ?? "",
    verifiedEmail: response.verifiedEmail ?? "",
    answers: Object.fromEntries(
      Object.entries(response.answers).map(([key, answer]) => [
        key,
        {
          questionId: answer.questionId,
          type: answer.type,
          label: answer.label,
          value: fromJson(ValueSchema, answer.value),
          files: (answer.files ?? []).map((f) => ({ id: f.id, name: f.name, contentType: f.contentType, size: BigInt(f.size) })),
        },
      ]),
    ),
  };
}

/** The input blocks of the version the respondent saw, by question text, with the answer (null when unanswered). */
function responseFields(response: Response, document: FormDocument): MessageInitShape<typeof ResponseFieldSchema>[] {
  return document.blocks.filter(isInputBlock).map((block) => {
    const answer = block.key ? response.answers[block.key] : undefined;
    return {
      questionId: block.id ?? "",
      type: block.type,
      label: block.question,
      value: fromJson(ValueSchema, answer?.value ?? null),
      ...fieldTexts(block),
      files: (answer?.files ?? []).map((f) => ({ id: f.id, name: f.name, contentType: f.contentType, size: BigInt(f.size) })),
    };
  });
}

/**
 * The event of a completed response (FORM_RESPONSE): everything a webhook payload needs, so delivery
 * never reads the response back.
 */
export function completionEvent(response: Response, formName: string, document: FormDocument): Event {
  const completed = create(ResponseCompletedSchema, {
    eventId: newId(),
    responseId: response.id,
    formId: response.formId,
    workspaceId: response.workspaceId,
    formVersion: response.version,
    submittedAt: timestampFromDate(response.submittedAt ?? response.updatedAt),
    formName,
    fields: responseFields(response, document),
    hiddenFields: valuesByLabel(response.answers, "HIDDEN_FIELDS"),
    calculatedFields: valuesByLabel(response.answers, "CALCULATED_FIELD"),
    respondentCountry: respondentCountryOf(response.answers),
    respondentLanguage: response.language ?? "",
    verifiedEmail: response.verifiedEmail ?? "",
  });
  return envelopeOf(completed);
}

/**
 * The page a response has reached, from 1: one more than the page breaks before its furthest answered
 * question. A partial save moving it is a FORM_RESPONSE_PARTIAL; saving again on the same page is not.
 */
export function pageReached(document: FormDocument, answers: StoredAnswers): number {
  let page = 1;
  let reached = 1;
  for (const block of document.blocks) {
    if (block.type === "PAGE_BREAK") page += 1;
    else if (isInputBlock(block) && block.key && answers[block.key] && answers[block.key].value !== null) reached = page;
  }
  return reached;
}

/** The event of a partial save that reached another page (FORM_RESPONSE_PARTIAL): the answers so far. */
export function partialEvent(response: Response, formName: string, document: FormDocument, page: number): Event {
  const partial = create(ResponsePartialSchema, {
    eventId: newId(),
    responseId: response.id,
    formId: response.formId,
    workspaceId: response.workspaceId,
    formVersion: response.version,
    savedAt: timestampFromDate(response.updatedAt),
    formName,
    fields: responseFields(response, document),
    hiddenFields: valuesByLabel(response.answers, "HIDDEN_FIELDS"),
    respondentCountry: respondentCountryOf(response.answers),
    respondentLanguage: response.language ?? "",
    verifiedEmail: response.verifiedEmail ?? "",
    page,
  });
  return create(EventSchema, { event: { case: "formResponsePartial", value: partial } });
}

function respondentCountryOf(answers: StoredAnswers): string {
  const value = answers[respondentCountryQuestion.key]?.value;
  return typeof value === "string" ? value : "";
}

/** The values of the stored answers of one extra type (hidden or calculated fields), by name. */
function valuesByLabel(answers: StoredAnswers, type: string): Record<string, Value> {
  const values: Record<string, Value> = {};
  for (const answer of Object.values(answers)) if (answer.type === type) values[answer.label] = fromJson(ValueSchema, answer.value);
  return values;
}

export function fileRef(upload: Upload): StoredFile {
  return { id: upload.id, name: upload.name, contentType: upload.contentType, size: upload.size };
}

/** The questions' raw values of stored answers (what a respondent sent), to merge a later save into. */
export function rawValues(document: FormDocument, answers: StoredAnswers): JsonObject {
  const raw: JsonObject = {};
  for (const block of document.blocks) {
    if (isInputBlock(block) && block.key && answers[block.key]) raw[block.key] = answers[block.key].value;
  }
  return raw;
}
