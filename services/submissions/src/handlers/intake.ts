// Respondents' saves: SaveResponse (a new or continued response, its answers checked, uploads attached,
// calculated fields, a response limit, single-use links and verified emails, its event in the outbox, all in
// one statement or one transaction) and SaveResponses (the gateway's saves that arrived together).
import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { LockMode, UniqueConstraintViolationException, type EntityManager } from "@mikro-orm/core";
// The form document's rules by module, not its index: the index brings the document schemas and the CEL parser
// with them, which a submission never needs (calculated fields are evaluated in workers).
import type { FormDocument, InputBlock } from "@formsvc/form-document";
// The entry of its own: the package's index loads the document schemas and CEL, which submissions never needs.
import { formLanguages } from "@formsvc/form-document/translations";
import { answerPath, answerProblem, describeProblems, validateAnswers, validateHidden, type AnswerProblem } from "@formsvc/form-document/answers";
import { isInputBlock, takesUploads } from "@formsvc/form-document/block-types";
import { calculatedFieldKey } from "@formsvc/form-document/questions";
import { resolveSettings } from "@formsvc/form-document/settings";
import { GroupCommit } from "@formsvc/platform/group-commit.ts";
import { maxSavesPerCall } from "@formsvc/platform/caller.ts";
import { answeredError } from "@formsvc/platform/rpc.ts";
import { rpcErrorOf } from "@formsvc/platform/rpc-error-items.ts";
import { runWithRequestId } from "@formsvc/platform/request-context.ts";
import { contextOf, withContext } from "@formsvc/platform/tracing.ts";
import { newId } from "@formsvc/platform/ids.ts";
import { BadRequestSchema } from "@formsvc/proto/google/rpc/error_details_pb.js";
import { SubmissionsService, type SaveResponsesItem, type SaveResponsesResponseSchema } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import type { StoredAnswers } from "../answers/stored-answer.ts";
import { countryAnswer, normalizeCountry } from "../answers/country.ts";
import { emailVerifications } from "../links/email-verifications.ts";
import { refused } from "../refusal-error.ts";
import { responseLinks } from "../links/response-links.ts";
import { outboxColumns, outboxRow, type OutboxRow } from "../outbox/outbox-rows.ts";
import { OutboxEntity, ResponseEntity, UploadEntity, type Response, type Upload } from "../entities/index.ts";
import { claimKeyCte, earlierAnswer, saveRequestHash, type EarlierAnswer, type SaveKey } from "../idempotency.ts";
import { formClosed, type SubmissionsContext } from "./context.ts";
import { completionEvent, fileRef, pageReached, partialEvent, rawValues } from "./response-events.ts";

/** A completion's calculated fields by name, as SaveResponse tells them (the thank-you screen may recall them). */
function calculatedValues(calculated: StoredAnswers): JsonObject {
  const prefix = calculatedFieldKey("");
  return Object.fromEntries(Object.entries(calculated).filter(([key]) => key.startsWith(prefix)).map(([key, answer]) => [key.slice(prefix.length), answer.value ?? null]));
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

export function intakeHandlers(c: SubmissionsContext, parts: { links: ReturnType<typeof responseLinks>; emails: ReturnType<typeof emailVerifications> }) {
  const { orm, logger, now, completions, calculatedFields, responsesTable, outboxTable, changesTable, askedForm, refusalOf, openForm, versionOf, removeBlobs, completed, deps } = c;
  const { links, emails } = parts;
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

  const handlers: Pick<ServiceImpl<typeof SubmissionsService>, "saveResponse" | "saveResponses"> = {
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
