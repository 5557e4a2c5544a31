import { create, fromBinary, fromJson, toBinary, type JsonObject, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate, ValueSchema, type Value } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Client, type ConnectRouter, type ServiceImpl } from "@connectrpc/connect";
import { LockMode, UniqueConstraintViolationException, type EntityManager, type FilterQuery } from "@mikro-orm/core";
// The form document's rules by module, not its index: the index brings the document schemas and the CEL parser
// with them, which a submission never needs (calculated fields are evaluated in workers).
import type { FormDocument, InputBlock } from "@formsvc/form-document";
// The entry of its own: the package's index loads the document schemas and CEL, which submissions never needs.
import { formLanguages } from "@formsvc/form-document/translations";
import { answerPath, answerProblem, describeProblems, validateAnswers, validateHidden, type AnswerProblem } from "@formsvc/form-document/answers";
import { fieldTexts, isInputBlock, maxUploadBytes, takesUploads } from "@formsvc/form-document/block-types";
import { calculatedFieldKey, respondentCountryQuestion } from "@formsvc/form-document/questions";
import { isPastClosingDate, resolveSettings } from "@formsvc/form-document/settings";
import { GroupCommit } from "@formsvc/platform/group-commit.ts";
import { asCaller, maxSavesPerCall, requireCaller } from "@formsvc/platform/caller.ts";
import { answeredError } from "@formsvc/platform/rpc.ts";
import { rpcErrorOf } from "@formsvc/platform/rpc-error-items.ts";
import { runWithRequestId } from "@formsvc/platform/request-context.ts";
import { contextOf, withContext } from "@formsvc/platform/tracing.ts";
import { qualifiedTable, type MikroORM } from "@formsvc/platform/database.ts";
import { newId } from "@formsvc/platform/ids.ts";
import type { NoticeKeptCache } from "@formsvc/platform/notice-kept-cache.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { keysetAfter, pageOf, pageRequest } from "@formsvc/platform/paging.ts";
import { upstreamFailure } from "@formsvc/platform/upstream-failure.ts";
import { envelopeOf, eventFacts, eventTypeNames, maxSampleEvents } from "@formsvc/platform/events.ts";
import { BadRequestSchema } from "@formsvc/proto/google/rpc/error_details_pb.js";
import { EventSchema, ResponseCompletedSchema, ResponsePartialSchema, type Event, type ResponseFieldSchema } from "@formsvc/proto/events/v1/events_pb.js";
import { FormStatus, type Form, type FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import {
  SubmissionFilter,
  SubmissionsService,
  type SaveResponsesItem,
  type SaveResponsesResponseSchema,
  type SubmissionSchema,
} from "@formsvc/proto/submissions/v1/submissions_pb.js";
import type { StoredAnswers, StoredFile } from "../answers/stored-answer.ts";
import { countryAnswer, normalizeCountry } from "../answers/country.ts";
import { createCalculatedFieldsPool, type CalculatedFieldsPool } from "../calculated-fields-pool.ts";
import { problemsOf } from "../calculated-field-problems.ts";
import { countFormHoldings, deleteFormHoldings, holdingsMessage } from "../form-purge.ts";
import { maxSearchLength, summarizeResponses } from "../summary/response-summary.ts";
import { exportBatches } from "./export-submissions.ts";
import { createInsightsHandlers } from "../insights/insights-handlers.ts";
import { emailVerifications } from "../links/email-verifications.ts";
import { refused } from "../refusal-error.ts";
import { responseLinks } from "../links/response-links.ts";
import { countChangesTable } from "../response-counts.ts";
import { deleteResponses, deleteResponsesBefore, removeStoredFiles, type ResponseDeletionDeps } from "../response-deletion.ts";
import { createCompletionNotifier, type CompletionNotifier } from "../outbox/completion-notifier.ts";
import { outboxColumns, outboxParams, outboxRow, type OutboxRow } from "../outbox/outbox-rows.ts";
import { outboxStream } from "../outbox/outbox-stream.ts";
import { acknowledgeCompletions } from "../outbox/outbox-retention.ts";
import type { FileStore } from "../files/file-store.ts";
import { checkStorageQuota, storageLeft, type StorageQuotas } from "../files/storage-quota.ts";
import { readUploadStream, type ByteLimit } from "../files/upload-stream.ts";
import { defaultFileSettings } from "@formsvc/platform/config.ts";
import { normalizeContentType, sanitizeFileName } from "../files/uploads.ts";
import { OutboxEntity, ResponseEntity, UploadEntity, type Response, type Upload } from "../entities/index.ts";
import { claimKeyCte, earlierAnswer, saveRequestHash, type EarlierAnswer, type SaveKey } from "../idempotency.ts";

/** A completion's calculated fields by name, as SaveResponse tells them (the thank-you screen may recall them). */
function calculatedValues(calculated: StoredAnswers): JsonObject {
  const prefix = calculatedFieldKey("");
  return Object.fromEntries(Object.entries(calculated).filter(([key]) => key.startsWith(prefix)).map(([key, answer]) => [key.slice(prefix.length), answer.value ?? null]));
}

export interface SubmissionsHandlersDeps {
  orm: MikroORM;
  /** The forms service: form status and versions, caller checks. */
  forms: Client<typeof FormsService>;
  /** Where the bytes of uploads live. */
  files: FileStore;
  /** Bytes of uploads a form and a workspace may hold; the defaults of config.ts when absent. */
  quotas?: StorageQuotas;
  logger?: Logger;
  now?: () => Date;
  /** How many form versions to keep in memory (a version's document never changes). */
  versionCacheSize?: number;
  /**
   * Forms as forms last answered them, kept fresh by forms' change notices (see server.ts), so a submit
   * asks forms nothing in the steady state. Absent: forms is asked on every submit.
   */
  openForms?: NoticeKeptCache<Form>;
  /**
   * How often an idle StreamCompletions looks for rows committed by other replicas (milliseconds);
   * completions of this process wake it at once.
   */
  streamPollMs?: number;
  /**
   * Told of every completion of this process once it has committed; StreamCompletions waits on it, and
   * so may others (the Kafka relay). A private one when absent.
   */
  completions?: CompletionNotifier;
  /** Evaluates calculated fields off the event loop, within a deadline. A private pool when absent. */
  calculatedFields?: CalculatedFieldsPool;
  /**
   * Told when a change of a form's response count has committed (a completion, the deletion of a
   * completed response): wakes the pusher (response-counts.ts), which nobody waits for.
   */
  countChanges?: CompletionNotifier;
  /** Told when a mail was written to the outbox (an email verification's code): wakes the mail worker. */
  mailWritten?: () => void;
}

/** One version of a form, as respondents of that version saw it. */
interface FormVersionInfo {
  workspaceId: string;
  version: number;
  document: FormDocument;
}

/** Which responses a filter takes: completed ones (true), partial ones (false) or all (undefined). */
function completedOf(filter: SubmissionFilter): boolean | undefined {
  switch (filter) {
    case SubmissionFilter.UNSPECIFIED:
    case SubmissionFilter.ALL:
      return undefined;
    case SubmissionFilter.COMPLETED:
      return true;
    case SubmissionFilter.PARTIAL:
      return false;
    default:
      throw new ConnectError("filter must be one of all, completed, partial", Code.InvalidArgument);
  }
}

const formNotFound = () => new ConnectError("form not found", Code.NotFound);
/** What a closed form answers: closed by its owner, past its closing date or its response limit. */
const formClosed = () => new ConnectError("this form is closed", Code.FailedPrecondition);
const submissionNotFound = () => new ConnectError("submission not found", Code.NotFound);
const fileNotFound = () => new ConnectError("file not found", Code.NotFound);
/** How long a presigned download URL of the object store stays valid (ReadFile): 5 minutes. */
const downloadUrlSeconds = 5 * 60;

/** The Submission message of a stored response. */
function submissionMessage(response: Response): MessageInitShape<typeof SubmissionSchema> {
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
function completionEvent(response: Response, formName: string, document: FormDocument): Event {
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
function partialEvent(response: Response, formName: string, document: FormDocument, page: number): Event {
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

function fileRef(upload: Upload): StoredFile {
  return { id: upload.id, name: upload.name, contentType: upload.contentType, size: upload.size };
}

/** The questions' raw values of stored answers (what a respondent sent), to merge a later save into. */
function rawValues(document: FormDocument, answers: StoredAnswers): JsonObject {
  const raw: JsonObject = {};
  for (const block of document.blocks) {
    if (isInputBlock(block) && block.key && answers[block.key]) raw[block.key] = answers[block.key].value;
  }
  return raw;
}

function questionOf(document: FormDocument, key: string): InputBlock | undefined {
  return document.blocks.find((b): b is InputBlock => isInputBlock(b) && b.key === key);
}

/** A problem with the upload answer under `key`, naming its question. */
function uploadProblem(document: FormDocument, key: string, message: string): AnswerProblem {
  return answerProblem(key, message, questionOf(document, key)?.question ?? key);
}

/**
 * Field violations one error carries at most: every question of a page, and few enough for the error's
 * trailer (answers under thousands of unknown keys would pass the transport's header limit).
 */
const maxFieldViolations = 100;

/**
 * INVALID_ARGUMENT for answers with problems: the first problems and their count in the message, and a
 * google.rpc.BadRequest detail with a field violation per answer's problem (`field` its key), which the
 * pages show next to the question.
 */
function invalidAnswers(problems: AnswerProblem[]): ConnectError {
  const fieldViolations = problems
    .flatMap((p) => (p.key === undefined ? [] : [{ field: p.key, description: p.message }]))
    .slice(0, maxFieldViolations);
  const details = fieldViolations.length > 0 ? [{ desc: BadRequestSchema, value: { fieldViolations } }] : [];
  return new ConnectError(describeProblems(problems), Code.InvalidArgument, undefined, details);
}

/** The columns of a new response's insert (the recordset of `savedResponses` names them alike). */
const responseColumns = `"id", "form_id", "workspace_id", "version", "completed", "answers", "hidden", "country", "language", "verified_email", "created_at", "updated_at", "submitted_at"`;

/** A new response, with the outbox row of its event if it has one. */
interface NewResponse {
  response: Response;
  outbox: OutboxRow | null;
}

export function createSubmissionsHandlers(deps: SubmissionsHandlersDeps): ServiceImpl<typeof SubmissionsService> {
  const { orm, forms, files, logger } = deps;
  const quotas = deps.quotas ?? defaultFileSettings;
  const now = deps.now ?? (() => new Date());
  const versionCacheSize = deps.versionCacheSize ?? 1_000;
  const streamPollMs = deps.streamPollMs ?? 1_000;
  const completions = deps.completions ?? createCompletionNotifier();
  const calculatedFields = deps.calculatedFields ?? createCalculatedFieldsPool({ logger });
  /** Versions by `<formId> <version>`, least recently used first. */
  const versions = new Map<string, FormVersionInfo>();
  const responsesTable = qualifiedTable(orm, ResponseEntity);
  const outboxTable = qualifiedTable(orm, OutboxEntity);
  const changesTable = countChangesTable(orm);

  function remember(formId: string, info: FormVersionInfo): void {
    const key = `${formId} ${info.version}`;
    versions.delete(key);
    versions.set(key, info);
    while (versions.size > versionCacheSize) versions.delete(versions.keys().next().value!);
  }

  /** The form as forms answers it to respondents (published or closed); kept in `openForms`, if any. */
  async function askedForm(formId: string): Promise<Form> {
    const ask = async () => {
      const { form } = await forms.getPublicForm({ id: formId }).catch((err: unknown) => upstreamFailure("forms", err, { logger }));
      return form?.id === formId ? form : undefined;
    };
    const form = await (deps.openForms ? deps.openForms.read(formId, ask, { fresh: true }) : ask());
    if (!form) throw formNotFound();
    return form;
  }

  /** Why respondents cannot post to the form now, if they cannot: closed (or past its closing date), or not public. */
  function refusalOf(form: Form): ConnectError | undefined {
    if (form.status === FormStatus.CLOSED) return formClosed();
    if (form.status !== FormStatus.PUBLISHED) return formNotFound();
    if (isPastClosingDate(resolveSettings(form.settings), now())) return formClosed();
    return undefined;
  }

  /**
   * The form as respondents see it, when it takes responses: published and before its closing date.
   * Closed: FAILED_PRECONDITION. A held form that would refuse, or is older than the `version` posted, is
   * asked again first, since its notice may still be on the way (a reopened form, a new version).
   */
  async function openForm(formId: string, version = 0): Promise<Form> {
    if (!formId) throw formNotFound();
    const held = deps.openForms?.get(formId);
    const usable = held && !refusalOf(held) && version <= held.version ? held : undefined;
    const form = usable ?? (await askedForm(formId));
    // A held form was just found to take responses.
    const refusal = form === usable ? undefined : refusalOf(form);
    if (refusal) throw refusal;
    // The current version of a published form is final: edits make a new one.
    remember(formId, { workspaceId: form.workspaceId, version: form.version, document: form.document as unknown as FormDocument });
    return form;
  }

  /** One version of the form (cached: a published version never changes). Unknown: INVALID_ARGUMENT. */
  async function versionOf(form: Form, version: number): Promise<FormVersionInfo> {
    if (!Number.isInteger(version) || version < 1 || version > form.version) {
      throw new ConnectError(`version: ${version} is not a version of this form`, Code.InvalidArgument);
    }
    const key = `${form.id} ${version}`;
    const cached = versions.get(key);
    if (cached) {
      remember(form.id, cached);
      return cached;
    }
    const res = await forms.getFormVersion({ formId: form.id, version }).catch((err: unknown) => {
      if (ConnectError.from(err).code === Code.NotFound) {
        throw new ConnectError(`version: ${version} is not a version of this form`, Code.InvalidArgument);
      }
      return upstreamFailure("forms", err, { logger });
    });
    if (!res.document || res.version !== version) {
      throw new ConnectError(`version: ${version} is not a version of this form`, Code.InvalidArgument);
    }
    const info = { workspaceId: res.workspaceId || form.workspaceId, version, document: res.document as unknown as FormDocument };
    remember(form.id, info);
    return info;
  }

  /** Checks the caller may see the form (forms' own check); its NOT_FOUND passes through. */
  async function checkCallerForm(caller: string, formId: string): Promise<void> {
    if (!formId) throw formNotFound();
    await forms.getForm({ id: formId }, asCaller(caller)).catch((err: unknown) => upstreamFailure("forms", err, { logger }));
  }

  /** Removes stored bytes whose rows are gone (committed). A failure leaves an unreachable blob: logged. */
  const removeBlobs = (storageKeys: string[]) => removeStoredFiles(files, storageKeys, logger);
  /** How responses go with their files, whoever deletes them (response-deletion.ts). */
  const deletion: ResponseDeletionDeps = { orm, files, logger, countChanges: deps.countChanges };

  /**
   * The answers of a save merged over the earlier ones of `previous` and checked as a whole (required
   * questions only on completion), with the hidden fields and the respondent's country (the calculated
   * fields are the caller's). `uploads` maps each upload id named to its answer's key; `problems` lists
   * what is wrong with them so far (an upload named twice): the caller adds what only the database can
   * tell (whose uploads they are), then throws them all at once.
   */
  function checkAnswers(document: FormDocument, previous: Response | null, req: { answers?: JsonObject; hidden: Record<string, string>; completed: boolean }, country: string | null) {
    const merged: JsonObject = { ...(previous ? rawValues(document, previous.answers) : {}), ...(req.answers ?? {}) };
    const checked = validateAnswers(document, merged, { completed: req.completed });
    const hidden = { ...(previous?.hidden ?? {}), ...req.hidden };
    const checkedHidden = validateHidden(document, hidden);
    const problems = [...(checked.ok ? [] : checked.problems), ...(checkedHidden.ok ? [] : checkedHidden.problems)];
    if (!checked.ok || !checkedHidden.ok) throw invalidAnswers(problems);
    const answers: StoredAnswers = { ...checked.answers, ...checkedHidden.answers };

    const uploads = new Map<string, string>();
    for (const [key, answer] of Object.entries(answers)) {
      // null: a question the form's logic skipped (validateAnswers), which names no uploads.
      if (!takesUploads(answer.type) || answer.value === null) continue;
      for (const uploadId of answer.value as string[]) {
        if (uploads.has(uploadId)) {
          problems.push(uploadProblem(document, key, `upload "${uploadId}" is already in ${answerPath(uploads.get(uploadId)!)}`));
        }
        uploads.set(uploadId, key);
      }
    }

    const keptCountry = country ?? previous?.country ?? null;
    if (keptCountry) answers["meta:country"] = countryAnswer(keptCountry);
    return { answers, hidden, country: keptCountry, uploads, problems };
  }

  /**
   * The outbox row a save writes, if any: a completion's FORM_RESPONSE, or a FORM_RESPONSE_PARTIAL when a
   * partial save moves the response to another page (`previous`: its answers before this save).
   */
  function saveEvent(response: Response, formName: string, document: FormDocument, previous: StoredAnswers | null) {
    if (response.completed) return outboxRow(completionEvent(response, formName, document), response.updatedAt);
    const page = pageReached(document, response.answers);
    if (previous && pageReached(document, previous) === page) return null;
    return outboxRow(partialEvent(response, formName, document, page), response.updatedAt);
  }

  /** New responses, each with its outbox row if it has an event, as the recordset `savedResponses` reads. */
  function savedRows(saves: NewResponse[]): string {
    return JSON.stringify(
      saves.map(({ response: r, outbox }) => ({
        id: r.id,
        form_id: r.formId,
        workspace_id: r.workspaceId,
        version: r.version,
        completed: r.completed,
        answers: r.answers,
        hidden: r.hidden,
        country: r.country,
        language: r.language,
        verified_email: r.verifiedEmail,
        created_at: r.createdAt,
        updated_at: r.updatedAt,
        submitted_at: r.submittedAt,
        ...(outbox && {
          event_id: outbox.eventId,
          event_type: outbox.eventType,
          payload: Buffer.from(outbox.payload).toString("base64"),
          request_id: outbox.requestId,
          trace_parent: outbox.traceParent,
          event_created_at: outbox.createdAt,
        }),
      })),
    );
  }

  /**
   * The CTEs that store the recordset of `savedRows` (one parameter): the responses, a completion's +1 to its
   * form's count, and the outbox rows; `guard` (a condition) can keep them all from being stored.
   */
  function savedResponses(guard = "true"): string {
    return `"v" as (
         select * from jsonb_to_recordset(?::jsonb) as v("id" text, "form_id" text, "workspace_id" text, "version" int, "completed" boolean,
           "answers" jsonb, "hidden" jsonb, "country" text, "language" text, "verified_email" text, "created_at" timestamptz, "updated_at" timestamptz, "submitted_at" timestamptz,
           "event_id" text, "event_type" text, "payload" text, "request_id" text, "trace_parent" text, "event_created_at" timestamptz)
         where ${guard}),
       "response" as (insert into ${responsesTable} (${responseColumns}) select ${responseColumns} from "v"),
       "counted" as (insert into ${changesTable} ("form_id", "delta") select "form_id", 1 from "v" where "completed"),
       "event" as (insert into ${outboxTable} ${outboxColumns}
         select "event_id", "form_id", "event_type", decode("payload", 'base64'), "request_id", "trace_parent", "event_created_at"
           from "v" where "event_id" is not null)`;
  }

  /**
   * A new response under an Idempotency-Key: the key's row, the response and its outbox row in one statement,
   * all or none. False when the key was already claimed (nothing stored).
   */
  async function insertClaimedResponse(save: NewResponse, key: SaveKey): Promise<boolean> {
    const claim = claimKeyCte(orm, key, { responseId: save.response.id, completed: save.response.completed }, save.response.createdAt);
    const [row] = await orm.em.getConnection().execute<{ claimed: number }[]>(
      `with "claim" as (${claim.sql}), ${savedResponses(`exists (select 1 from "claim")`)}
       select count(*)::int as "claimed" from "claim"`,
      [...claim.params, savedRows([save])],
    );
    return row.claimed > 0;
  }

  /** New responses (no Idempotency-Key), atomically in one statement for the lot. */
  async function insertResponses(saves: NewResponse[]): Promise<void[]> {
    await orm.em.getConnection().execute(`with ${savedResponses()} select null`, [savedRows(saves)], "run");
    return saves.map(() => undefined);
  }
  // Respondents' new responses by group commit: under load one statement for many (the first waits for nothing).
  const newResponses = new GroupCommit(insertResponses);

  /** Appends a change of the form's response count in the transaction of `em` (folded by the pusher). */
  async function changeCount(em: EntityManager, formId: string, delta: 1 | -1): Promise<void> {
    await em.getConnection().execute(`insert into ${changesTable} ("form_id", "delta") values (?, ?)`, [formId, delta], "run", em.getTransactionContext());
  }

  /** The answer of the save that claimed `key` first (committed, since claiming waited for it). */
  async function repeatOf(key: SaveKey): Promise<EarlierAnswer> {
    const answer = await earlierAnswer(orm, key, now());
    if (!answer) throw new ConnectError("a save with this Idempotency-Key is in progress; send it again", Code.Aborted);
    return answer;
  }

  /**
   * Holds the form's response limit for the rest of the transaction: completions of a limited form take
   * a transaction-scoped advisory lock on it, one at a time, and count its completed responses after the
   * one before them committed; at the limit the form answers as closed. Exact however many complete at once.
   * A limit read from a held form may be older than the form (raised or cleared, its notice still on the
   * way): at the limit, forms is asked again before refusing, as `openForm` does for a closed form.
   */
  async function holdResponseLimit(em: EntityManager, formId: string, limit: number): Promise<void> {
    const connection = em.getConnection();
    const transaction = em.getTransactionContext();
    await connection.execute(`select pg_advisory_xact_lock(hashtextextended(?, 0))`, [`response-limit:${formId}`], "all", transaction);
    const [row] = await connection.execute<{ completed: number }[]>(
      `select count(*)::int as "completed" from ${responsesTable} where "form_id" = ? and "completed"`,
      [formId],
      "all",
      transaction,
    );
    if (row.completed < limit) return;
    if (!deps.openForms) throw formClosed();
    const form = await askedForm(formId);
    const refusal = refusalOf(form);
    if (refusal) throw refusal;
    const current = resolveSettings(form.settings).responseLimit;
    if (current !== null && row.completed >= current) throw formClosed();
  }

  /** After a completion committed (its count change with it): wake the relay or stream, and the count pusher. */
  function completed(): void {
    completions.notify();
    deps.countChanges?.notify();
  }

  const links = responseLinks({ orm, forms, logger, now });
  const emails = emailVerifications({ orm, forms, logger, now, mailWritten: deps.mailWritten });
  const handlers: ServiceImpl<typeof SubmissionsService> = {
    ...createInsightsHandlers({ orm, forms, logger }),
    ...links.handlers,
    ...emails.handlers,
    async saveResponse(req, ctx) {
      // A repeat under the same Idempotency-Key answers what the first save did, whatever happened since.
      const key: SaveKey | undefined = req.idempotencyKey ? { formId: req.formId, key: req.idempotencyKey, hash: saveRequestHash(req) } : undefined;
      const earlier = key && (await earlierAnswer(orm, key, now()));
      if (earlier) return earlier;
      const form = await openForm(req.formId, req.version);
      // A form answered only through single-use links: every save carries a usable token; a completion uses it up below.
      const linkToken = resolveSettings(form.settings).requireSingleUseLink ? req.linkToken : undefined;
      if (linkToken !== undefined) await links.check(form.id, linkToken);
      // A form asking for a confirmed email: every save carries a confirmed verification, whose address the response keeps.
      const verification = resolveSettings(form.settings).requireEmailVerification ? req.emailVerification : undefined;
      const verifiedEmail = verification !== undefined ? await emails.check(form.id, verification) : null;

      // The response continued, if any, and the version its respondent saw.
      let version = req.version || form.version;
      let existing: Response | null = null;
      if (req.responseId) {
        existing = await orm.em.fork().findOne(ResponseEntity, { id: req.responseId, formId: form.id });
        if (!existing) throw new ConnectError("response not found", Code.NotFound);
        if (existing.completed) throw new ConnectError("this response is already completed", Code.FailedPrecondition);
        if (req.version === 0) version = existing.version;
        else if (req.version !== existing.version) {
          throw new ConnectError(
            `version: this response was started on version ${existing.version} of the form, not ${req.version}`,
            Code.InvalidArgument,
          );
        }
      }
      const { document, workspaceId } = await versionOf(form, version);
      const country = normalizeCountry(req.country);
      // The language the respondent answers in, when the form offers it; else the form's own for a new
      // response, and for a continued one the language it has.
      const formSettings = resolveSettings(form.settings);
      const offered = formLanguages(formSettings).find((l) => l.toLowerCase() === req.language.toLowerCase());
      const language = offered ?? (req.responseId ? null : formSettings.language);
      // A completion of a form with a response limit is counted against it in the transaction below.
      const responseLimit = req.completed ? formSettings.responseLimit : null;
      const blobsToRemove: string[] = [];

      // A new response's answers are checked once, here; a continued one's in the transaction, against
      // its locked row. A new response naming no uploads (the common case) is one INSERT statement:
      // nothing to read or lock, so no transaction and one round trip to Postgres instead of four.
      const checkedNew = req.responseId ? undefined : checkAnswers(document, null, req, country);
      // On completion, the calculated fields: on a worker thread within a deadline, before any transaction,
      // so no lock or connection waits on them. A continued response's are worked out over its answers as
      // read above; the transaction makes sure they are still the stored ones. A call given up by its
      // caller stops waiting for them (and stores nothing).
      const calculating = req.completed && (document.calculatedFields?.length ?? 0) > 0;
      const calculated = calculating
        ? await calculatedFields.evaluate({
            formId: form.id,
            workspaceId,
            document,
            answers: (checkedNew ?? checkAnswers(document, existing, req, country)).answers,
            signal: ctx.signal,
          })
        : {};
      if (checkedNew) Object.assign(checkedNew.answers, calculated);
      const usesLink = req.completed && linkToken !== undefined;
      const usesVerification = req.completed && verification !== undefined;
      if (checkedNew && checkedNew.uploads.size === 0 && responseLimit === null && !usesLink && !usesVerification) {
        const at = now();
        const response: Response = {
          id: newId(),
          formId: form.id,
          workspaceId,
          version,
          completed: req.completed,
          answers: checkedNew.answers,
          hidden: checkedNew.hidden,
          country: checkedNew.country,
          language,
          verifiedEmail,
          createdAt: at,
          updatedAt: at,
          submittedAt: req.completed ? at : null,
        };
        const outbox = saveEvent(response, form.name, document, null);
        if (key) {
          if (!(await insertClaimedResponse({ response, outbox }, key))) return repeatOf(key);
        } else await newResponses.add({ response, outbox });
        if (req.completed) completed();
        else if (outbox) completions.notify();
        return { responseId: response.id, completed: response.completed, calculated: calculatedValues(calculated) };
      }

      const result = await orm.em.fork().transactional(async (em) => {
        if (responseLimit !== null) await holdResponseLimit(em, form.id, responseLimit);
        const at = now();
        let response: Response | null = null;
        if (req.responseId) {
          response = await em.findOne(ResponseEntity, { id: req.responseId, formId: form.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
          if (!response) throw new ConnectError("response not found", Code.NotFound);
          if (response.completed) throw new ConnectError("this response is already completed", Code.FailedPrecondition);
        }
        const responseId = response?.id ?? newId();
        if (key) {
          const claim = claimKeyCte(orm, key, { responseId, completed: req.completed }, at);
          if ((await em.getConnection().execute(claim.sql, claim.params, "all", em.getTransactionContext())).length === 0) return null;
        }
        const { answers, hidden, country: keptCountry, uploads: named, problems } = checkedNew ?? checkAnswers(document, response, req, country);
        if (!checkedNew) {
          if (calculating && response!.updatedAt.getTime() !== existing!.updatedAt.getTime()) {
            throw new ConnectError("this response was saved again while it was being completed; send it again", Code.Aborted);
          }
          Object.assign(answers, calculated);
        }

        // Uploads: those named must be this form's, unattached or already this response's; those this
        // response no longer names go (rows now, bytes after commit).
        const uploads = new Map<string, Upload>();
        if (named.size > 0) {
          const rows = await em.find(UploadEntity, { id: { $in: [...named.keys()] } }, { lockMode: LockMode.PESSIMISTIC_WRITE });
          for (const row of rows) uploads.set(row.id, row);
        }
        for (const [uploadId, key] of named) {
          const upload = uploads.get(uploadId);
          if (!upload || upload.formId !== form.id || (upload.responseId !== null && upload.responseId !== responseId)) {
            problems.push(uploadProblem(document, key, `"${uploadId}" is not an upload of this form`));
          }
        }
        if (problems.length > 0) throw invalidAnswers(problems);
        for (const answer of Object.values(answers)) {
          if (!takesUploads(answer.type)) continue;
          answer.files = answer.value === null ? [] : (answer.value as string[]).map((id) => fileRef(uploads.get(id)!));
        }
        for (const upload of uploads.values()) upload.responseId = responseId;
        if (response) {
          const released = await em.find(
            UploadEntity,
            named.size > 0 ? { responseId, id: { $nin: [...named.keys()] } } : { responseId },
          );
          for (const upload of released) {
            blobsToRemove.push(upload.storageKey);
            em.remove(upload);
          }
        }

        const previous = response ? response.answers : null;
        if (response) {
          response.answers = answers;
          response.hidden = hidden;
          response.country = keptCountry;
          response.language = language ?? response.language;
          response.verifiedEmail = verifiedEmail ?? response.verifiedEmail;
          response.updatedAt = at;
        } else {
          response = em.create(ResponseEntity, {
            id: responseId,
            formId: form.id,
            workspaceId,
            version,
            completed: false,
            answers,
            hidden,
            country: keptCountry,
            language,
            verifiedEmail,
            createdAt: at,
            updatedAt: at,
            submittedAt: null,
          });
        }
        if (req.completed) {
          if (usesLink) await links.use(em, form.id, linkToken, responseId, at);
          if (usesVerification) await emails.use(em, form.id, verification, responseId, at);
          response.completed = true;
          response.submittedAt = at;
          await changeCount(em, form.id, +1);
        }
        const outbox = saveEvent(response, form.name, document, previous);
        if (outbox) em.create(OutboxEntity, outbox);
        return { responseId, completed: response.completed, event: outbox !== null };
      }).catch((err: unknown) => {
        // Two verifications of one address completing at once: the unique index lets one through.
        if (err instanceof UniqueConstraintViolationException && String(err.message).includes("responses_form_id_verified_email_unique")) throw refused("emailUsed");
        throw err;
      });

      // null: another save claimed the key first (and has committed); its answer stands.
      if (!result) return repeatOf(key!);
      await removeBlobs(blobsToRemove);
      if (result.completed) completed();
      else if (result.event) completions.notify();
      return { responseId: result.responseId, completed: result.completed, calculated: calculatedValues(calculated) };
    },

    async createUpload(requests) {
      const upload = await readUploadStream(requests);
      const form = await openForm(upload.header.formId);
      const tooLarge: ByteLimit = {
        bytes: maxUploadBytes,
        exceeded: () => new ConnectError(`file: is larger than ${maxUploadBytes / (1024 * 1024)} MiB`, Code.InvalidArgument),
      };
      if (upload.announced !== undefined && upload.announced > maxUploadBytes) throw tooLarge.exceeded();
      const id = newId();
      const name = sanitizeFileName(upload.header.name);
      const contentType = normalizeContentType(upload.header.contentType);
      const owner = { formId: form.id, workspaceId: form.workspaceId };
      // A full quota refuses before the bytes are stored: an announced size at once, bytes not announced
      // as soon as they pass what is left. The count under the lock below is the one that binds.
      const left = await storageLeft(orm.em.fork(), orm, owner, quotas);
      if (upload.announced !== undefined && upload.announced > left.bytes) throw left.exceeded();
      // Bytes first, passed on to the store as they come: a row never points at nothing. A put cut short
      // (past a limit, fewer or more bytes than announced, a sender gone) leaves nothing; a failed insert
      // removes the bytes again.
      await files.put(id, upload.chunks([tooLarge, left]), { name, contentType });
      const size = upload.received();
      try {
        await orm.em.fork().transactional(async (em) => {
          await checkStorageQuota(em, orm, { ...owner, size }, quotas, { lock: true });
          em.create(UploadEntity, {
            id,
            formId: form.id,
            workspaceId: form.workspaceId,
            responseId: null,
            name,
            contentType,
            size,
            storageKey: id,
            createdAt: now(),
          });
        });
      } catch (err) {
        await removeBlobs([id]);
        throw err;
      }
      return { uploadId: id, name, size: BigInt(size), contentType };
    },

    async listSubmissions(req, ctx) {
      const caller = requireCaller(ctx);
      const window = pageRequest(req);
      const completed = completedOf(req.filter);
      await checkCallerForm(caller, req.formId);
      const em = orm.em.fork();
      const conditions: object[] = [{ formId: req.formId }];
      if (completed !== undefined) conditions.push({ completed });
      if (req.since) conditions.push({ submittedAt: { $gte: timestampDate(req.since) } });
      if (req.until) conditions.push({ submittedAt: { $lt: timestampDate(req.until) } });
      if (req.updatedSince) conditions.push({ updatedAt: { $gte: timestampDate(req.updatedSince) } });
      if (req.afterId) {
        const after = await em.findOne(ResponseEntity, { id: req.afterId, formId: req.formId }, { fields: ["id", "createdAt"] });
        if (!after) throw new ConnectError("afterId names no submission of this form", Code.InvalidArgument);
        conditions.push(keysetAfter(responsesTable, "created_at", "asc", { at: after.createdAt, id: after.id }));
      }
      if (window.after) conditions.push(keysetAfter(responsesTable, "created_at", "desc", window.after));
      const rows = await em.find(ResponseEntity, { $and: conditions } as FilterQuery<Response>, {
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        limit: window.fetch,
        offset: window.offset,
      });
      const page = pageOf(rows, window.limit, (row) => row.createdAt);
      return { submissions: page.items.map(submissionMessage), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },

    async *exportSubmissions(req, ctx) {
      const completed = completedOf(req.filter);
      await checkCallerForm(requireCaller(ctx), req.formId);
      const query = { formId: req.formId, completed, since: req.since && timestampDate(req.since), until: req.until && timestampDate(req.until) };
      for await (const submissions of exportBatches(orm.em.fork(), responsesTable, query, ctx.signal)) yield { submissions };
    },

    async getSubmission(req, ctx) {
      await checkCallerForm(requireCaller(ctx), req.formId);
      const response = req.submissionId
        ? await orm.em.fork().findOne(ResponseEntity, { id: req.submissionId, formId: req.formId })
        : null;
      if (!response) throw submissionNotFound();
      return { submission: submissionMessage(response) };
    },

    async deleteSubmission(req, ctx) {
      await checkCallerForm(requireCaller(ctx), req.formId);
      if (!req.submissionId) throw submissionNotFound();
      // Rows first, in one transaction: from its commit on, neither the submission nor its files are
      // served. The bytes go after; one left behind by a failure is unreachable (and logged).
      const deleted = await deleteResponses(deletion, req.formId, [req.submissionId]);
      if (deleted.responses + deleted.partials === 0) throw submissionNotFound();
      return {};
    },

    async getFormStorage(req, ctx) {
      await checkCallerForm(requireCaller(ctx), req.formId);
      const table = qualifiedTable(orm, UploadEntity);
      const [row] = (await orm.em.fork().execute(
        `select count(*)::text as "files", coalesce(sum("size"), 0)::text as "bytes" from ${table}
          where "form_id" = ? and "response_id" is not null`,
        [req.formId],
      )) as { files: string; bytes: string }[];
      return { files: BigInt(row.files), bytes: BigInt(row.bytes), quotaBytes: BigInt(quotas.formQuotaBytes) };
    },

    async listResponseEvents(req, ctx) {
      const caller = requireCaller(ctx);
      const completed = req.eventType === eventTypeNames.formResponse ? true : req.eventType === eventTypeNames.formResponsePartial ? false : undefined;
      if (completed === undefined) throw new ConnectError(`eventType: one of ${eventTypeNames.formResponse}, ${eventTypeNames.formResponsePartial}`, Code.InvalidArgument);
      if (!Number.isInteger(req.limit) || req.limit < 1 || req.limit > maxSampleEvents) {
        throw new ConnectError(`limit: 1 to ${maxSampleEvents}`, Code.InvalidArgument);
      }
      if (!req.formId) throw formNotFound();
      const { form } = await forms.getForm({ id: req.formId }, asCaller(caller)).catch((err: unknown) => upstreamFailure("forms", err, { logger }));
      const rows = await orm.em.fork().find(ResponseEntity, { formId: req.formId, completed }, { orderBy: [{ createdAt: "desc" }, { id: "desc" }], limit: req.limit });
      const events: Event[] = [];
      for (const response of rows) {
        const { document } = await versionOf(form!, response.version);
        const event = completed ? completionEvent(response, form!.name, document) : partialEvent(response, form!.name, document, pageReached(document, response.answers));
        // A sample is no event that happened: its id says so, and stays the same from call to call.
        event.event.value!.eventId = `sample_${response.id}`;
        events.push(event);
      }
      return { events };
    },

    async summarizeResponses(req, ctx) {
      if (!req.formId) throw formNotFound();
      if (req.search.length > maxSearchLength) throw new ConnectError(`search: at most ${maxSearchLength} characters`, Code.InvalidArgument);
      const { form } = await forms.getForm({ id: req.formId }, asCaller(requireCaller(ctx))).catch((err: unknown) => upstreamFailure("forms", err, { logger }));
      return summarizeResponses(orm.em.fork(), responsesTable, form!.document as unknown as FormDocument, {
        formId: req.formId,
        since: req.since && timestampDate(req.since),
        until: req.until && timestampDate(req.until),
        search: req.search,
      });
    },

    async listCalculatedFieldProblems(req, ctx) {
      await checkCallerForm(requireCaller(ctx), req.formId);
      const problems = await problemsOf(orm, req.formId);
      return { problems: problems.map((p) => ({ field: p.field, reason: p.reason, count: BigInt(p.count), lastAt: timestampFromDate(p.lastAt) })) };
    },

    async readFile(req) {
      // Only files of a response are served: an upload nobody submitted, or one whose response was
      // deleted, is not found.
      const upload = req.fileId
        ? await orm.em.fork().findOne(UploadEntity, { id: req.fileId, responseId: { $ne: null } })
        : null;
      if (!upload) throw fileNotFound();
      const file = { ...fileRef(upload), size: BigInt(upload.size) };
      if (files.downloadUrl) {
        // The row was there a moment ago; a deletion now removes the object, and the URL finds nothing.
        return { file, downloadUrl: await files.downloadUrl(upload.storageKey, upload, downloadUrlSeconds) };
      }
      const content = await files.get(upload.storageKey);
      // Gone between the two reads: the submission was deleted meanwhile.
      if (!content) throw fileNotFound();
      return { file, content };
    },

    async recordFormEvent(req) {
      // Internal (forms' outbox forwarder): a form event joins the outbox, once per event id.
      const event = req.event;
      const kind = event?.event.case;
      if (!event || (kind !== "formPublished" && kind !== "formClosed" && kind !== "formDeleted")) {
        throw new ConnectError("event: must be a FORM_PUBLISHED, FORM_CLOSED or FORM_DELETED event", Code.InvalidArgument);
      }
      const { eventId, formId } = eventFacts(event);
      if (!eventId || !formId) throw new ConnectError("event: needs an event id and a form id", Code.InvalidArgument);
      const row = { ...outboxRow(event, now()), requestId: req.requestId || null, traceParent: req.traceParent || null };
      await orm.em.getConnection().execute(
        `insert into ${outboxTable} ${outboxColumns}
         values (?, ?, ?, ?, ?, ?, ?) on conflict ("event_id") do nothing`,
        outboxParams(row),
        "run",
      );
      completions.notify();
      return {};
    },

    async countFormResponses(req) {
      // Internal (forms checks the caller, the role and the Trash).
      if (!req.formId) throw formNotFound();
      return { holdings: holdingsMessage(await countFormHoldings(orm, req.formId)) };
    },

    async deleteFormResponses(req) {
      // Internal (forms' PurgeForm, for a form in the Trash, which takes no responses or uploads).
      if (!req.formId) throw formNotFound();
      return { deleted: holdingsMessage(await deleteFormHoldings(req.formId, { orm, files, logger })) };
    },

    async deleteResponsesBefore(req, ctx) {
      // Internal (forms' pass over the forms with settings.deleteResponsesAfterDays).
      if (!req.formId) throw formNotFound();
      if (!req.before) throw new ConnectError("before: is required", Code.InvalidArgument);
      const deleted = await deleteResponsesBefore(deletion, req.formId, timestampDate(req.before), { signal: ctx.signal });
      return { deleted: holdingsMessage(deleted) };
    },

    async *streamCompletions(req, ctx) {
      yield* outboxStream(orm, { afterCursor: req.afterCursor, signal: ctx.signal, completions, pollMs: streamPollMs });
    },

    async acknowledgeCompletions(req) {
      // Internal (delivery's embedded stream): how far it has durably handled the outbox, for retention.
      if (!req.follower || req.follower.length > 200) throw new ConnectError("a follower's name (at most 200 characters) is required", Code.InvalidArgument);
      await acknowledgeCompletions(orm, req.follower, req.cursor);
      return {};
    },

    async *saveResponses(req, ctx) {
      // Internal (the gateway's respondents' saves that arrived together). Each item is a SaveResponse under
      // its own request id and trace, all at once (their new responses share group commits); each result
      // goes back as soon as its save is done.
      if (req.items.length > maxSavesPerCall) throw new ConnectError(`at most ${maxSavesPerCall} saves per call`, Code.InvalidArgument);
      const saveItem = (item: SaveResponsesItem, index: number): Promise<SaveResponsesOutcome & { index: number }> =>
        runWithRequestId(item.requestId || undefined, () =>
          withContext(contextOf(item.traceParent), async () => {
            try {
              if (!item.save) throw new ConnectError("an item without its save", Code.InvalidArgument);
              return { index, outcome: { case: "saved" as const, value: await handlers.saveResponse(item.save, ctx) } };
            } catch (err) {
              return { index, outcome: { case: "error" as const, value: rpcErrorOf(answeredError(err, { logger, method: "SaveResponses" })) } };
            }
          }),
        );
      // Each result queued as its save finishes (a save never rejects: its error is its outcome).
      const finished: (SaveResponsesOutcome & { index: number })[] = [];
      let wake: (() => void) | undefined;
      req.items.forEach((item, index) =>
        void saveItem(item, index).then((done) => {
          finished.push(done);
          wake?.();
        }),
      );
      for (let sent = 0; sent < req.items.length; sent++) {
        while (finished.length === 0) await new Promise<void>((resolve) => (wake = resolve));
        yield finished.shift()!;
      }
    },
  };
  return handlers;
}

type SaveResponsesOutcome = MessageInitShape<typeof SaveResponsesResponseSchema>;

export function routes(router: ConnectRouter, handlers: ServiceImpl<typeof SubmissionsService>): void {
  router.service(SubmissionsService, handlers);
}
