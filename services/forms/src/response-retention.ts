// A form's `settings.deleteResponsesAfterDays`: every RETENTION_INTERVAL_SECONDS forms goes over the forms
// that set it (its own settings, one indexed read) and asks submissions, which owns responses and files,
// to delete each one's responses older than the form's days (DeleteResponsesBefore, the way
// DeleteSubmission deletes one). Not a prune target of the platform's retention (retention.ts): the
// operator's `prune` never removes responses, only each form's owner does, by this setting.
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { resolveSettings } from "@formsvc/form-document";
import { qualifiedTable, type MikroORM } from "@formsvc/platform/database.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { Counter, metrics } from "@formsvc/platform/metrics.ts";
import type { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { FormEntity } from "./entities/index.ts";

const dayMs = 24 * 60 * 60 * 1000;

const expired = new Counter({
  name: "form_retention_deleted_total",
  help: "What forms' deleteResponsesAfterDays deleted: completed responses, partial ones, files",
  labelNames: ["what"] as const,
  registers: [metrics],
});

export interface ResponseRetentionOptions {
  orm: MikroORM;
  submissions: Pick<Client<typeof SubmissionsService>, "deleteResponsesBefore">;
  logger?: Logger;
  /** Forms read at a time. */
  batchSize?: number;
  /**
   * How long one form's DeleteResponsesBefore may take; past it submissions stops after its batch in
   * flight, and the next pass deletes the rest.
   */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** What one form's deletion removed in a pass. */
export interface FormResponsesDeleted {
  formId: string;
  days: number;
  before: Date;
  responses: number;
  partials: number;
  files: number;
}

/**
 * One pass: each form whose settings set deleteResponsesAfterDays (in the Trash too: its responses are
 * still stored until it is purged) loses its responses older than that many days before `now`. A form
 * that fails is logged and tried again next pass; submissions not answering ends the pass. Answers what
 * went, by form (the forms that lost nothing left out).
 */
export async function deleteExpiredResponses(options: ResponseRetentionOptions, now = new Date()): Promise<FormResponsesDeleted[]> {
  const { orm, submissions, logger } = options;
  const batchSize = options.batchSize ?? 500;
  const forms = qualifiedTable(orm, FormEntity);
  const done: FormResponsesDeleted[] = [];
  for (let after = ""; ; ) {
    // By the partial index of the forms with the setting (Migration20270201000000).
    const rows = await orm.em.fork().getConnection().execute<{ id: string; days: unknown }[]>(
      `select "id", "settings"->'deleteResponsesAfterDays' as "days" from ${forms}
        where jsonb_typeof("settings"->'deleteResponsesAfterDays') = 'number' and "id" > ? order by "id" limit ?`,
      [after, batchSize],
      "all",
    );
    for (const row of rows) {
      if (options.signal?.aborted) return done;
      // A stored value no longer valid keeps responses, as it reads.
      const days = resolveSettings({ deleteResponsesAfterDays: row.days }).deleteResponsesAfterDays;
      if (days === null) continue;
      const before = new Date(now.getTime() - days * dayMs);
      try {
        const { deleted } = await submissions.deleteResponsesBefore(
          { formId: row.id, before: timestampFromDate(before) },
          { timeoutMs: options.timeoutMs ?? 60_000, signal: options.signal },
        );
        const gone = { formId: row.id, days, before, responses: Number(deleted?.responses ?? 0), partials: Number(deleted?.partials ?? 0), files: Number(deleted?.files ?? 0) };
        if (gone.responses + gone.partials + gone.files === 0) continue;
        // Submissions logs each deletion ({formId, deleted, files, before}); the counter sums them.
        expired.inc({ what: "responses" }, gone.responses);
        expired.inc({ what: "partials" }, gone.partials);
        expired.inc({ what: "files" }, gone.files);
        done.push(gone);
      } catch (err) {
        const code = ConnectError.from(err).code;
        if (code === Code.DeadlineExceeded) {
          // A long backlog (the setting just shortened): submissions stopped after a batch, kept what it
          // deleted (and logged it), and the next pass goes on.
          logger?.info({ formId: row.id, before }, "more responses past the form's deleteResponsesAfterDays than one call deletes: the next pass goes on");
          continue;
        }
        logger?.warn({ err, formId: row.id, before }, "deleting responses past the form's deleteResponsesAfterDays failed (tried again next pass)");
        if (code === Code.Unavailable || code === Code.Canceled) return done;
      }
    }
    if (rows.length < batchSize) return done;
    after = rows.at(-1)!.id;
  }
}

export interface ResponseRetention {
  /** A pass now (after any under way); what it deleted. */
  passNow(): Promise<FormResponsesDeleted[]>;
  /** No more passes; a pass under way stops after its current form. */
  stop(): Promise<void>;
}

/** Runs a pass soon after start (at most `firstAfterMs`, 5 s) and then every `intervalMs`, skipping a tick while one is under way. */
export function startResponseRetention(options: ResponseRetentionOptions & { intervalMs: number; firstAfterMs?: number }): ResponseRetention {
  const stopping = new AbortController();
  let running: Promise<unknown> = Promise.resolve();
  let busy = false;
  const pass = () => deleteExpiredResponses({ ...options, signal: stopping.signal });
  const run = () => {
    if (stopping.signal.aborted || busy) return;
    busy = true;
    running = pass()
      .catch((err: unknown) => options.logger?.warn({ err }, "response retention pass failed (tried again next pass)"))
      .finally(() => (busy = false));
  };
  const first = setTimeout(run, options.firstAfterMs ?? Math.min(options.intervalMs, 5_000));
  const timer = setInterval(run, options.intervalMs);
  first.unref();
  timer.unref();
  return {
    passNow: () => {
      const now = running.catch(() => undefined).then(pass);
      running = now;
      return now;
    },
    stop: async () => {
      stopping.abort();
      clearTimeout(first);
      clearInterval(timer);
      await running.catch(() => undefined);
    },
  };
}
