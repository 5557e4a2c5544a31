// What every part of submissions' RPCs shares (split by concern: intake.ts, files.ts, reads.ts, internal.ts):
// its dependencies with their defaults, its tables, and the forms it answers for: the form as respondents see
// it (kept fresh by forms' notices), each version respondents saw (cached: a published version never changes),
// and forms' own check of a caller.
import { Code, ConnectError, type Client } from "@connectrpc/connect";
// The form document's rules by module, not its index: the index brings the document schemas and the CEL parser
// with them, which a submission never needs (calculated fields are evaluated in workers).
import type { FormDocument } from "@formsvc/form-document";
import { isPastClosingDate, resolveSettings } from "@formsvc/form-document/settings";
import { asCaller } from "@formsvc/platform/caller.ts";
import { qualifiedTable, type MikroORM } from "@formsvc/platform/database.ts";
import type { NoticeKeptCache } from "@formsvc/platform/notice-kept-cache.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { upstreamFailure } from "@formsvc/platform/upstream-failure.ts";
import { FormStatus, type Form, type FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { createCalculatedFieldsPool, type CalculatedFieldsPool } from "../calculated-fields-pool.ts";
import { countChangesTable } from "../response-counts.ts";
import { removeStoredFiles, type ResponseDeletionDeps } from "../response-deletion.ts";
import { createCompletionNotifier, type CompletionNotifier } from "../outbox/completion-notifier.ts";
import type { FileStore } from "../files/file-store.ts";
import type { StorageQuotas } from "../files/storage-quota.ts";
import { defaultFileSettings } from "@formsvc/platform/config.ts";
import { OutboxEntity, ResponseEntity } from "../entities/index.ts";

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
export interface FormVersionInfo {
  workspaceId: string;
  version: number;
  document: FormDocument;
}

export const formNotFound = () => new ConnectError("form not found", Code.NotFound);
/** What a closed form answers: closed by its owner, past its closing date or its response limit. */
export const formClosed = () => new ConnectError("this form is closed", Code.FailedPrecondition);

export type SubmissionsContext = ReturnType<typeof submissionsContext>;

export function submissionsContext(deps: SubmissionsHandlersDeps) {
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

  /** After a completion committed (its count change with it): wake the relay or stream, and the count pusher. */
  function completed(): void {
    completions.notify();
    deps.countChanges?.notify();
  }

  return {
    deps,
    orm,
    forms,
    files,
    logger,
    quotas,
    now,
    streamPollMs,
    completions,
    calculatedFields,
    responsesTable,
    outboxTable,
    changesTable,
    askedForm,
    refusalOf,
    openForm,
    versionOf,
    checkCallerForm,
    removeBlobs,
    deletion,
    completed,
  };
}
