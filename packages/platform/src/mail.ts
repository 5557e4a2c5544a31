// Outgoing email: an outbox table in the sending service's schema, written in the same transaction as
// what the mail is about, and a worker that sends it over SMTP (SMTP_URL, nodemailer) with retries, so
// no request waits for a mail server. Without SMTP_URL each mail is written as an .eml file under
// DATA_DIR/mail instead, so nothing is silently lost on a machine with no mail server.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Transporter } from "nodemailer";
import type { Config } from "./config.ts";
import type { MikroORM } from "./database.ts";
import type { Logger } from "./logger.ts";
import { tableRetention, type PruneTarget } from "./retention.ts";

/** One message: plain text and HTML alternatives of the same content. */
export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Text made safe to place in a mail's HTML (element content or a quoted attribute). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Seconds before each retry of a mail that could not be sent; after the last one it is given up. */
export const mailRetrySchedule = [10, 60, 300, 1800, 7200, 21600];
/** A claimed mail is due again after this long, in case its worker died while sending it. */
const leaseSeconds = 120;
/** Mails claimed by one pass of the worker, and sent at once. */
const batchSize = 20;

/** The DDL of a service's outbox table `"<schema>"."mail_outbox"`, for its migration. */
export function mailOutboxDdl(schema: string): string[] {
  const table = `"${schema}"."mail_outbox"`;
  return [
    `create table ${table} (
      "id" bigserial primary key,
      "to_address" text not null,
      "subject" text not null,
      "text" text not null,
      "html" text not null,
      "attempts" integer not null default 0,
      "next_attempt_at" timestamptz not null default now(),
      "sent_at" timestamptz null,
      "failed_at" timestamptz null,
      "last_error" text null,
      "created_at" timestamptz not null default now()
    )`,
    `create index "mail_outbox_due_index" on ${table} ("next_attempt_at") where "sent_at" is null and "failed_at" is null`,
  ];
}

/**
 * The index `sentMailRetention` deletes by, for a migration of its own: not in `mailOutboxDdl`, whose
 * shipped migrations made outboxes without it.
 */
export function mailOutboxRetentionDdl(schema: string): string[] {
  return [`create index "mail_outbox_finished_at_index" on "${schema}"."mail_outbox" ((coalesce("sent_at", "failed_at")))`];
}

/**
 * Retention of the ORM's schema's outbox: mail sent, or given up, `safetySeconds` before the pass (kept that
 * long to look into what went out); for the operator's `prune`, mail sent or given up before its bound.
 * Mail still to send never goes.
 */
export function sentMailRetention(orm: MikroORM, safetySeconds: number): PruneTarget {
  return tableRetention(orm, {
    table: "mail_outbox",
    olderThanAt: (now) => new Date(now.getTime() - safetySeconds * 1000),
    where: (olderThan) => ({ sql: `coalesce("sent_at", "failed_at") < ?`, params: [olderThan] }),
  });
}

/** The outbox of the ORM's schema. */
export function mailOutboxTable(orm: MikroORM): string {
  return `"${orm.config.get("schema") ?? "public"}"."mail_outbox"`;
}

/**
 * An INSERT of mails into the outbox, as SQL and parameters, to run inside the caller's own statement or
 * transaction (so the mail exists exactly when what it is about does).
 */
export function insertMailsSql(table: string, mails: readonly Mail[]): { sql: string; params: string[] } {
  const rows = mails.map(() => "(?, ?, ?, ?)").join(", ");
  return {
    sql: `insert into ${table} ("to_address", "subject", "text", "html") values ${rows}`,
    params: mails.flatMap((m) => [m.to, m.subject, m.text, m.html]),
  };
}

/** Where mail goes: an SMTP server, or files. */
export interface MailTransport {
  /** Sends one mail; rejects with the server's answer when it is refused. */
  send(mail: Mail): Promise<void>;
  /** For the logs: `smtp://host:port` (no credentials), or the directory. */
  describe: string;
  close(): void;
}

export interface MailSettings {
  /** SMTP_URL: `smtp://user:pass@host:587`, `smtps://...`; undefined writes files. */
  smtpUrl: string | undefined;
  /** MAIL_FROM: the From of every mail. */
  from: string;
  /** Where mail is written without SMTP_URL: DATA_DIR/mail. */
  dir: string;
}

export function mailSettingsOf(config: Config): MailSettings {
  return { smtpUrl: config.smtpUrl, from: config.mailFrom, dir: join(config.dataDir, "mail") };
}

/**
 * nodemailer's transporter for `options`, made on the first mail: most processes send mail seldom or never,
 * and nodemailer (~40 modules) is then never loaded.
 */
function lazyTransporter(options: string | object): { get(): Promise<Transporter>; close(): void } {
  let made: Promise<Transporter> | undefined;
  return {
    get: () => (made ??= import("nodemailer").then(({ default: nodemailer }) => nodemailer.createTransport(options))),
    close: () => void made?.then(
      (transporter) => transporter.close(),
      () => {}, // never made: nothing to close
    ),
  };
}

/** The transport the settings describe. */
export function mailTransport(settings: MailSettings): MailTransport {
  if (settings.smtpUrl) {
    // Pooled: a few kept-alive connections carry every mail, rather than one handshake per mail.
    const transporter = lazyTransporter(settings.smtpUrl.includes("?") ? settings.smtpUrl : `${settings.smtpUrl}?pool=true&maxConnections=4`);
    const url = new URL(settings.smtpUrl);
    return {
      describe: `${url.protocol}//${url.host}`,
      send: async (mail) => void (await (await transporter.get()).sendMail({ from: settings.from, ...mail })),
      close: transporter.close,
    };
  }
  const composer = lazyTransporter({ streamTransport: true, buffer: true, newline: "unix" });
  let sequence = 0;
  return {
    describe: settings.dir,
    send: async (mail) => {
      const { message } = (await (await composer.get()).sendMail({ from: settings.from, ...mail })) as { message: Buffer };
      await mkdir(settings.dir, { recursive: true, mode: 0o700 });
      const name = `${new Date().toISOString().replace(/[:.]/g, "-")}-${process.pid}-${sequence++}.eml`;
      await writeFile(join(settings.dir, name), message, { mode: 0o600 });
    },
    close: composer.close,
  };
}

export interface MailWorkerOptions {
  orm: MikroORM;
  transport: MailTransport;
  logger: Logger;
  /** Seconds between attempts; `mailRetrySchedule` by default. */
  retrySchedule?: readonly number[];
  /** How often the outbox is read when nothing woke the worker (ms). */
  pollMs?: number;
}

export interface MailWorker {
  /** Sends what is due now (call after writing mail in this process); otherwise it polls. */
  wake(): void;
  /** Resolves once every mail claimed so far has been handled (for tests and benchmarks). */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

interface ClaimedMail extends Mail {
  id: string;
  attempts: number;
}

/** Whether an SMTP failure is final: a 5xx answer (the address or the message is refused). */
function permanent(err: unknown): boolean {
  const code = (err as { responseCode?: number }).responseCode;
  return typeof code === "number" && code >= 500;
}

/**
 * Sends the outbox: claims due mails (`FOR UPDATE SKIP LOCKED`, so replicas share the work), sends them,
 * and records each outcome; a failed mail is due again on the schedule, a refused one (5xx) or one out of
 * attempts is given up with its error. Addresses and contents are never logged, only outbox ids.
 */
export function startMailWorker(options: MailWorkerOptions): MailWorker {
  const { orm, transport, logger } = options;
  const table = mailOutboxTable(orm);
  const schedule = options.retrySchedule ?? mailRetrySchedule;
  const pollMs = options.pollMs ?? 1_000;
  const connection = () => orm.em.getConnection();
  let running = true;
  let again = false;
  let pass: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const claim = () =>
    connection().execute<(ClaimedMail & { to_address: string })[]>(
      `update ${table} set "attempts" = "attempts" + 1, "next_attempt_at" = now() + make_interval(secs => ?)
        where "id" in (select "id" from ${table} where "sent_at" is null and "failed_at" is null and "next_attempt_at" <= now()
                        order by "next_attempt_at" limit ? for update skip locked)
        returning "id", "to_address", "subject", "text", "html", "attempts"`,
      [leaseSeconds, batchSize],
    );

  const sendOne = async (mail: ClaimedMail & { to_address: string }) => {
    try {
      await transport.send({ to: mail.to_address, subject: mail.subject, text: mail.text, html: mail.html });
      await connection().execute(`update ${table} set "sent_at" = now(), "last_error" = null where "id" = ?`, [mail.id]);
    } catch (err) {
      const error = (err instanceof Error ? err.message : String(err)).slice(0, 500);
      const giveUp = permanent(err) || mail.attempts > schedule.length;
      if (giveUp) {
        await connection().execute(`update ${table} set "failed_at" = now(), "last_error" = ? where "id" = ?`, [error, mail.id]);
        logger.error({ mailId: mail.id, attempts: mail.attempts, error }, "a mail could not be sent: given up");
      } else {
        const retryIn = schedule[mail.attempts - 1];
        await connection().execute(`update ${table} set "next_attempt_at" = now() + make_interval(secs => ?), "last_error" = ? where "id" = ?`, [retryIn, error, mail.id]);
        logger.warn({ mailId: mail.id, attempts: mail.attempts, retryInSeconds: retryIn, error }, "a mail could not be sent: retrying");
      }
    }
  };

  const runPasses = async () => {
    do {
      again = false;
      const mails = await claim();
      await Promise.all(mails.map(sendOne));
      // A full batch: there may be more due at once.
      if (mails.length === batchSize) again = true;
    } while (again && running);
  };

  const kick = () => {
    if (!running) return;
    if (pass) {
      again = true;
      return;
    }
    clearTimeout(timer);
    pass = runPasses()
      .catch((err: unknown) => logger.warn({ error: err instanceof Error ? err.message : String(err) }, "reading the mail outbox failed: trying again"))
      .finally(() => {
        pass = undefined;
        if (running) timer = setTimeout(kick, again ? 0 : pollMs);
      });
  };

  logger.info({ to: transport.describe }, transport.describe.includes("://") ? "mail is sent over SMTP" : "no SMTP_URL: outgoing mail is written to files");
  kick();
  return {
    wake: kick,
    idle: async () => {
      while (pass) await pass;
    },
    async stop() {
      running = false;
      clearTimeout(timer);
      await pass;
      transport.close();
    },
  };
}
