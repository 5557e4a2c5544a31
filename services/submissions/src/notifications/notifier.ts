// Response notifications and receipts, never on the respondent's path: the notifier follows the outbox
// with its own cursor (a transaction id, as StreamCompletions does), and for each completed response of
// a form whose settings ask for it writes mails into submissions' mail outbox, which the platform's
// mail worker sends. Cursor and mails move in one transaction, so each completion is mailed once (a
// replica that finds the cursor moved under it drops its batch). Addresses and answers are never logged.
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { resolveSettings, sendsNotifications, type FormSettings } from "@formsvc/form-document/settings";
import type { MikroORM } from "@formsvc/platform/database.ts";
import { decodeEvent, formResponseEventType } from "@formsvc/platform/events.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { insertMailsSql, mailOutboxTable, type Mail } from "@formsvc/platform/mail.ts";
import type { ResponseCompleted } from "@formsvc/proto/events/v1/events_pb.js";
import type { FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { Role, type IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import type { CompletionNotifier } from "../outbox/completion-notifier.ts";
import { followOutbox, outboxPauses, type OutboxRead } from "../outbox/outbox-pauses.ts";
import { wholeTransactionsAfter } from "../outbox/outbox-rows.ts";
import { notificationMail, receiptAddress, receiptMail } from "./mails.ts";

/** Outbox rows read per pass. */
const batchSize = 100;
/**
 * How long a form's settings and a workspace's members are reused (ms): settings are not versioned, so
 * a change reaches notifications within this long, while a busy form asks forms and identity rarely.
 */
const cacheMs = 10_000;

export interface ResponseNotifierOptions {
  orm: MikroORM;
  forms: Client<typeof FormsService>;
  identity: Client<typeof IdentityService>;
  logger: Logger;
  /** PUBLIC_URL: the app's links in the mails. */
  publicUrl: string;
  /** Completions of this process: each wakes the notifier at once (others' are found by polling). */
  completions: CompletionNotifier;
  /** Told after mails were written, to send them now. */
  mailWritten: () => void;
  /** How often an idle notifier looks for completions of other replicas (ms). 500 when absent. */
  pollMs?: number;
  /** The pause after a failure (a service away), doubling up to 10 s (ms). 200 when absent. */
  minBackoffMs?: number;
}

export interface ResponseNotifier {
  stop(): Promise<void>;
}

/** A value reused for `cacheMs`; concurrent asks share one load. */
function ttlCache<T>(load: (key: string) => Promise<T>): (key: string) => Promise<T> {
  const entries = new Map<string, { value: Promise<T>; at: number }>();
  return (key) => {
    const now = Date.now();
    const cached = entries.get(key);
    if (cached && now - cached.at < cacheMs) return cached.value;
    if (entries.size > 10_000) entries.clear();
    const value = load(key);
    entries.set(key, { value, at: now });
    value.catch(() => entries.delete(key));
    return value;
  };
}

const isNotFound = (err: unknown) => ConnectError.from(err).code === Code.NotFound;

interface MemberAddress {
  email: string;
  owner: boolean;
}

export function startResponseNotifier(options: ResponseNotifierOptions): ResponseNotifier {
  const { orm, forms, identity, logger, publicUrl } = options;
  const pollMs = options.pollMs ?? 500;
  const minBackoff = options.minBackoffMs ?? 200;
  const schema = orm.config.get("schema") ?? "public";
  const cursorTable = `"${schema}"."notification_cursor"`;
  const mailTable = mailOutboxTable(orm);

  /** A form's settings; undefined once it is gone (trashed or deleted): nothing is mailed for it. */
  const settingsOf = ttlCache(async (formId): Promise<FormSettings | undefined> => {
    try {
      const { form } = await forms.getPublicForm({ id: formId });
      return form ? resolveSettings(form.settings) : undefined;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  });

  const membersOf = ttlCache(async (workspaceId): Promise<MemberAddress[]> => {
    try {
      const { members } = await identity.listMembers({ workspaceId });
      return members.flatMap((m) => (m.user ? [{ email: m.user.email, owner: m.role === Role.OWNER }] : []));
    } catch (err) {
      if (isNotFound(err)) return [];
      throw err;
    }
  });

  /** The mails one completion asks for. */
  async function mailsOf(event: ResponseCompleted): Promise<Mail[]> {
    const settings = await settingsOf(event.formId);
    if (!settings || !sendsNotifications(settings)) return [];
    const { owner, members, receiptQuestionId } = settings.notifications;
    const mails: Mail[] = [];
    if (owner || members.length > 0) {
      // Only the workspace's own people: a form's settings cannot send its responses anywhere else.
      const chosen = new Set(members.map((m) => m.toLowerCase()));
      const recipients = (await membersOf(event.workspaceId)).filter((m) => (owner && m.owner) || chosen.has(m.email.toLowerCase()));
      for (const to of new Set(recipients.map((m) => m.email))) mails.push(notificationMail(to, event, publicUrl));
    }
    const respondent = receiptQuestionId ? receiptAddress(event, receiptQuestionId) : undefined;
    if (respondent) mails.push(receiptMail(respondent, event));
    return mails;
  }

  /**
   * One pass: the next batch of outbox rows after the cursor; whether more are waiting, or none can be read
   * yet (`"held back"`: committed rows behind an older transaction still running). Reading and
   * addressing run outside any transaction (a transaction holding an id would hold back every outbox
   * reader's horizon, StreamCompletions' too); only writing the mails and moving the cursor is one, and
   * only if the cursor is still where this pass read it (else another replica mailed the batch).
   */
  async function pass(): Promise<OutboxRead> {
    const connection = orm.em.getConnection();
    const [cursorRow] = await connection.execute<{ txid: string }[]>(`select "txid"::text as "txid" from ${cursorTable}`);
    if (!cursorRow) throw new Error("the notification cursor is missing: migrations were not applied");
    // As StreamCompletions: whole transactions, older than the oldest one running, so none is skipped.
    const { rows: whole, read } = await wholeTransactionsAfter<{ event_type: string | null; payload: Buffer; txid: string }>(
      orm,
      `"event_type", "payload"`,
      cursorRow.txid,
      batchSize,
    );
    if (whole.length === 0) return read;
    const completions = whole.filter((r) => r.event_type === null || r.event_type === formResponseEventType);
    const mails = (
      await Promise.all(
        completions.map((row) => {
          const envelope = decodeEvent(row.payload, row.event_type);
          return envelope.event.case === "formResponse" ? mailsOf(envelope.event.value) : [];
        }),
      )
    ).flat();
    // The cursor moves only from where this pass read it; without mails in one statement, with them in their
    // transaction, the row locked by the move first.
    type Connection = ReturnType<typeof orm.em.getConnection>;
    const moveCursor = async (moving: Connection, tx?: Parameters<Connection["execute"]>[3]): Promise<boolean> => {
      const result = await moving.execute(`update ${cursorTable} set "txid" = ?::text::xid8 where "txid" = ?::text::xid8`, [whole.at(-1)!.txid, cursorRow.txid], "run", tx);
      return Number((result as { affectedRows?: number }).affectedRows ?? 0) === 1;
    };
    const moved =
      mails.length === 0
        ? await moveCursor(connection)
        : await orm.em.fork().transactional(async (em) => {
            const tx = em.getTransactionContext();
            if (!(await moveCursor(em.getConnection(), tx))) return false;
            const insert = insertMailsSql(mailTable, mails);
            await em.getConnection().execute(insert.sql, insert.params, "run", tx);
            return true;
          });
    if (moved && mails.length > 0) options.mailWritten();
    return read;
  }

  const pauses = outboxPauses(options.completions);

  const loop = followOutbox(
    pauses,
    { minMs: minBackoff, maxMs: 10_000 },
    async () => {
      // More waiting: read on. Otherwise wait for a completion (or another replica's, by polling).
      await pauses.afterPass(await pass(), pollMs);
    },
    (err, { retryInMs }) => logger.warn({ error: err instanceof Error ? err.message : String(err), retryInMs }, "response notifications failed: retrying"),
  );

  return {
    async stop() {
      pauses.stop();
      await loop;
    },
  };
}
