// Each form's count of completed responses is submissions' own: it is exact here, and forms holds a
// copy (Form.responseCount) that this module keeps up to date off the respondent's path.
//
// - A completion, and the deletion of completed responses, appends a change (+1; -n for n deleted together) to
//   `response_count_changes` in its own transaction or statement: inserts only, so concurrent completions
//   of one form never wait on a shared row, and a change exists exactly when its response does.
// - The pusher folds the changes into `form_response_counts` (deleting the rows it adds up, in the same
//   statement: each change is counted once, whichever replica folds it), bumping the revision of each
//   count that moved, then sends the absolute counts forms has not taken yet (SetResponseCounts, in
//   batches) and marks them pushed. Absolute counts with a revision make a push idempotent and
//   self-healing: a push lost to a crash or a forms outage is sent again, a late one changes nothing.
// - It runs at start, when this process commits a change (at most every `spacingMs`), every `pollMs`
//   (changes of other replicas, pushes that failed) and after a failure with a backoff.
import type { Client } from "@connectrpc/connect";
import type { MikroORM } from "@formsvc/platform/database.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import type { FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import type { CompletionNotifier } from "./outbox/completion-notifier.ts";
import { followOutbox, outboxPauses } from "./outbox/outbox-pauses.ts";

function schemaOf(orm: MikroORM): string {
  return `"${orm.config.get("schema") ?? "public"}"`;
}

/** The table of count changes not folded yet (form_id, delta). */
export function countChangesTable(orm: MikroORM): string {
  return `${schemaOf(orm)}."response_count_changes"`;
}

/** The table of counts (form_id, completed, revision, pushed_revision). */
export function responseCountsTable(orm: MikroORM): string {
  return `${schemaOf(orm)}."form_response_counts"`;
}

/**
 * Folds run one at a time across replicas (a transaction-scoped advisory lock): two at once could take
 * the same rows' locks in different orders and deadlock. They are off the respondent's path.
 */
const foldLock = "submissions:response-count-fold";

/** Adds the changes committed so far into the counts; answers how many forms' counts moved. */
export async function foldCountChanges(orm: MikroORM): Promise<number> {
  return orm.em.fork().transactional(async (em) => {
    const connection = em.getConnection();
    const tx = em.getTransactionContext();
    await connection.execute(`select pg_advisory_xact_lock(hashtextextended(?, 0))`, [foldLock], "all", tx);
    const rows = await connection.execute<unknown[]>(
      `with "folded" as (delete from ${countChangesTable(orm)} returning "form_id", "delta"),
            "sums" as (select "form_id", sum("delta")::bigint as "delta" from "folded" group by "form_id" having sum("delta") <> 0)
       insert into ${responseCountsTable(orm)} as c ("form_id", "completed", "revision")
       select "form_id", "delta", 1 from "sums"
       on conflict ("form_id") do update set "completed" = c."completed" + excluded."completed", "revision" = c."revision" + 1
       returning c."form_id"`,
      [],
      "all",
      tx,
    );
    return rows.length;
  });
}

/**
 * Sets the form's count to what its responses are now, whatever changes are pending (dropped, in the
 * same statement, so one snapshot decides both: a completion committing meanwhile is neither counted
 * nor dropped, and its change comes later). After a form's responses are purged.
 */
export async function recountForm(orm: MikroORM, formId: string, responsesTable: string): Promise<void> {
  await orm.em.fork().transactional(async (em) => {
    const connection = em.getConnection();
    const tx = em.getTransactionContext();
    await connection.execute(`select pg_advisory_xact_lock(hashtextextended(?, 0))`, [foldLock], "all", tx);
    await connection.execute(
      `with "dropped" as (delete from ${countChangesTable(orm)} where "form_id" = ?)
       insert into ${responseCountsTable(orm)} as c ("form_id", "completed", "revision")
       select ?, (select count(*) from ${responsesTable} where "form_id" = ? and "completed"), 1
       on conflict ("form_id") do update set "completed" = excluded."completed", "revision" = c."revision" + 1`,
      [formId, formId, formId],
      "run",
      tx,
    );
  });
}

/**
 * Sends forms every count it has not taken yet, `batchSize` forms a call, and marks each pushed at the
 * revision sent (a count that moved meanwhile has a newer revision and goes in a later pass). Answers
 * how many counts were sent; a failed call throws, leaving its counts to send again.
 */
export async function pushResponseCounts(
  orm: MikroORM,
  forms: Client<typeof FormsService>,
  options: { batchSize?: number; timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<number> {
  const batchSize = options.batchSize ?? 500;
  const table = responseCountsTable(orm);
  let sent = 0;
  for (let after = ""; ; ) {
    const rows = await orm.em.fork().getConnection().execute<{ form_id: string; completed: string; revision: string }[]>(
      // Never below 0 (forms refuses that): a count folds negative when a response counted by no change
      // (completed by a replica of an older version during an upgrade) is deleted.
      `select "form_id", greatest("completed", 0)::text as "completed", "revision"::text as "revision" from ${table}
        where "pushed_revision" < "revision" and "form_id" > ? order by "form_id" limit ?`,
      [after, batchSize],
    );
    if (rows.length === 0) return sent;
    await forms.setResponseCounts(
      { counts: rows.map((r) => ({ formId: r.form_id, count: BigInt(r.completed), revision: BigInt(r.revision) })) },
      { timeoutMs: options.timeoutMs ?? 5_000, signal: options.signal },
    );
    await orm.em.fork().getConnection().execute(
      `update ${table} c set "pushed_revision" = greatest(c."pushed_revision", u."revision")
         from jsonb_to_recordset(?::jsonb) as u("form_id" text, "revision" bigint) where c."form_id" = u."form_id"`,
      [JSON.stringify(rows.map((r) => ({ form_id: r.form_id, revision: r.revision })))],
      "run",
    );
    sent += rows.length;
    if (rows.length < batchSize) return sent;
    after = rows.at(-1)!.form_id;
  }
}

export interface ResponseCountPusherOptions {
  orm: MikroORM;
  forms: Client<typeof FormsService>;
  logger?: Logger;
  /** Told when this process has committed a count change: a pass follows at once (spaced). */
  changes?: CompletionNotifier;
  /** The backstop: a pass this often however quiet (other replicas' changes, failed pushes). */
  pollMs?: number;
  /** The least time between the starts of two passes, so a busy form costs one push per interval. */
  spacingMs?: number;
  batchSize?: number;
  /** How long one SetResponseCounts may take. */
  timeoutMs?: number;
}

export interface ResponseCountPusher {
  /** One pass now (fold, then push everything pending); a failure throws. Settles the counts of changes committed before it. */
  flush(): Promise<void>;
  /** Ends the loop, cutting short a push in flight. What is left is pushed by the next pass of any replica. */
  stop(): Promise<void>;
}

export function startResponseCountPusher(options: ResponseCountPusherOptions): ResponseCountPusher {
  const { orm, forms, logger } = options;
  const pollMs = options.pollMs ?? 5_000;
  // A quarter second: under a burst, four pushes a second (each a fold in Postgres and a call to forms) rather than twenty.
  const spacingMs = options.spacingMs ?? 250;
  const pauses = outboxPauses(options.changes);
  const stopping = new AbortController();

  async function pass(): Promise<void> {
    await foldCountChanges(orm);
    await pushResponseCounts(orm, forms, { batchSize: options.batchSize, timeoutMs: options.timeoutMs, signal: stopping.signal });
  }

  const loop = followOutbox(
    pauses,
    { minMs: 100, maxMs: 5_000 },
    async () => {
      const startedAt = Date.now();
      await pass();
      const spacing = spacingMs - (Date.now() - startedAt);
      if (spacing > 0) await pauses.sleep(spacing, false);
      await pauses.sleep(pollMs, true);
    },
    (err, { retryInMs }) => logger?.warn({ error: err instanceof Error ? err.message : String(err), retryInMs }, "response counts not pushed: retrying"),
  );

  return {
    flush: pass,
    async stop() {
      pauses.stop();
      stopping.abort();
      await loop;
    },
  };
}
