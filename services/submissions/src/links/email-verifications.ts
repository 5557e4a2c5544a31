// Email verification (issue 31, settings.requireEmailVerification): before answering, the respondent
// confirms an address by a 6-digit code mailed to it (through this service's mail outbox, like receipts).
// A verification's id is a 256-bit secret the gateway keeps in the respondent's browser (a cookie); every
// save of such a form carries a confirmed one, its address is stored with the response, and a completion
// uses it up. Each address completes one response of the form (a unique index on responses binds that).
// Codes are kept as hashes, expire after 10 minutes and take 5 wrong tries.
import { createHash, randomInt, timingSafeEqual } from "node:crypto";
import { Code, ConnectError, type Client, type ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/core";
import { resolveSettings } from "@formsvc/form-document/settings";
import type { MikroORM } from "@formsvc/platform/database.ts";
import { tableRetention, type PruneTarget } from "@formsvc/platform/retention.ts";
import { newId } from "@formsvc/platform/ids.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { escapeHtml, insertMailsSql, mailOutboxTable, type Mail } from "@formsvc/platform/mail.ts";
import { upstreamFailure } from "@formsvc/platform/upstream-failure.ts";
import type { FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import type { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { refused } from "../refusal-error.ts";

/** How long a mailed code may be entered. */
export const codeLifetimeMs = 10 * 60_000;
/** Wrong codes a verification takes before it is spent. */
export const maxCodeAttempts = 5;
/** How long a confirmed address may be used to answer (a long form, a break). */
const confirmedLifetimeMs = 24 * 3600_000;
/** Codes mailed to one address for one form in a code's lifetime: more are refused (no mail flood). */
export const maxCodesPerAddress = 5;
/** Characters of a verification id (base62): about 256 bits. */
const idLength = 43;

/** An address as the mail outbox takes it: one @, no spaces, a dot in the domain. */
const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

interface VerificationRow {
  id: string;
  form_id: string;
  email: string;
  code_hash: Buffer;
  expires_at: Date;
  attempts: number;
  confirmed_at: Date | null;
  used_at: Date | null;
}

const codeHashOf = (id: string, code: string) => createHash("sha256").update(`${id}\n${code}`).digest();

type VerificationHandlers = Pick<ServiceImpl<typeof SubmissionsService>, "startEmailVerification" | "confirmEmailVerification">;

export interface EmailVerifications {
  handlers: VerificationHandlers;
  /** The confirmed address of a save of a form requiring verification: PERMISSION_DENIED (emailRequired, emailUsed) otherwise. */
  check(formId: string, verificationId: string): Promise<string>;
  /** Uses the verification up for `responseId`, in the transaction completing it. */
  use(em: EntityManager, formId: string, verificationId: string, responseId: string, at: Date): Promise<void>;
}

/** The mail with the code (English: the hosted pages' languages are the gateway's). */
function codeMail(to: string, formName: string, code: string): Mail {
  const minutes = codeLifetimeMs / 60_000;
  return {
    to,
    subject: `Your code for "${formName}": ${code}`,
    text: `Your code to answer "${formName}" is:\n\n${code}\n\nIt works for ${minutes} minutes. If you did not ask for it, ignore this mail.\n`,
    html: `<!doctype html><html><body style="font-family: sans-serif; line-height: 1.5"><p>Your code to answer <strong>${escapeHtml(formName)}</strong> is:</p><p style="font-size: 28px; letter-spacing: 4px"><strong>${code}</strong></p><p>It works for ${minutes} minutes. If you did not ask for it, ignore this mail.</p></body></html>`,
  };
}

export function emailVerifications(deps: { orm: MikroORM; forms: Client<typeof FormsService>; logger?: Logger; now?: () => Date; mailWritten?: () => void }): EmailVerifications {
  const { orm, forms, logger } = deps;
  const now = deps.now ?? (() => new Date());
  const schema = orm.config.get("schema") ?? "public";
  const table = `"${schema}"."email_verifications"`;
  const responses = `"${schema}"."responses"`;
  const connection = () => orm.em.fork().getConnection();
  const find = async (formId: string, id: string): Promise<VerificationRow | undefined> => {
    if (!id || id.length > 100) return undefined;
    const [row] = (await connection().execute(`select * from ${table} where "id" = ? and "form_id" = ?`, [id, formId], "all")) as VerificationRow[];
    return row;
  };
  const answered = async (formId: string, email: string): Promise<boolean> => {
    const rows = await connection().execute(`select 1 from ${responses} where "form_id" = ? and lower("verified_email") = lower(?) and "completed" limit 1`, [formId, email], "all");
    return rows.length > 0;
  };

  return {
    async check(formId, verificationId) {
      const row = await find(formId, verificationId);
      if (!row?.confirmed_at || new Date(row.confirmed_at).getTime() + confirmedLifetimeMs <= now().getTime()) throw refused("emailRequired");
      if (row.used_at) throw refused("emailUsed");
      return row.email;
    },

    async use(em, formId, verificationId, responseId, at) {
      const rows = (await em.getConnection().execute(
        `update ${table} set "used_at" = ?, "response_id" = ? where "id" = ? and "form_id" = ? and "confirmed_at" is not null and "used_at" is null returning "id"`,
        [at, responseId, verificationId, formId],
        "all",
        em.getTransactionContext(),
      )) as { id: string }[];
      if (rows.length !== 1) throw refused("emailUsed");
    },

    handlers: {
      async startEmailVerification(req) {
        const email = req.email.trim();
        if (email.length > 254 || !emailPattern.test(email)) throw new ConnectError("email: must be an email address", Code.InvalidArgument);
        const { form } = await forms.getPublicForm({ id: req.formId }).catch((err: unknown) => upstreamFailure("forms", err, { notFoundMessage: "form not found", logger }));
        if (!form) throw new ConnectError("form not found", Code.NotFound);
        if (!resolveSettings(form.settings).requireEmailVerification) throw new ConnectError("this form does not ask respondents to confirm an email address", Code.FailedPrecondition);
        if (await answered(form.id, email)) throw refused("emailUsed");
        const at = now();
        const [{ count }] = (await connection().execute(
          `select count(*)::int as "count" from ${table} where "form_id" = ? and lower("email") = lower(?) and "created_at" > ?`,
          [form.id, email, new Date(at.getTime() - codeLifetimeMs)],
          "all",
        )) as { count: number }[];
        if (count >= maxCodesPerAddress) throw new ConnectError("too many codes were asked for this address: try again in a few minutes", Code.ResourceExhausted);
        const id = newId(idLength);
        const code = String(randomInt(0, 1_000_000)).padStart(6, "0");
        // The verification and its mail in one transaction: the mail worker sends what was committed.
        await orm.em.fork().transactional(async (em) => {
          const tx = em.getTransactionContext();
          await em
            .getConnection()
            .execute(`insert into ${table} ("id", "form_id", "email", "code_hash", "created_at", "expires_at") values (?, ?, ?, ?, ?, ?)`, [id, form.id, email, codeHashOf(id, code), at, new Date(at.getTime() + codeLifetimeMs)], "run", tx);
          const mail = insertMailsSql(mailOutboxTable(orm), [codeMail(email, form.name, code)]);
          await em.getConnection().execute(mail.sql, mail.params, "run", tx);
        });
        deps.mailWritten?.();
        return { verificationId: id };
      },

      async confirmEmailVerification(req) {
        const row = await find(req.formId, req.verificationId);
        if (!row) throw refused("emailRequired");
        if (row.confirmed_at) return { email: row.email };
        if (new Date(row.expires_at).getTime() <= now().getTime()) throw refused("emailCodeExpired");
        if (row.attempts >= maxCodeAttempts) throw refused("emailCodeAttempts");
        const code = req.code.replace(/\s/g, "");
        if (/^\d{6}$/.test(code) && timingSafeEqual(codeHashOf(row.id, code), Buffer.from(row.code_hash))) {
          // Confirmed once: of two confirmations at once, both see it confirmed.
          await connection().execute(`update ${table} set "confirmed_at" = coalesce("confirmed_at", ?) where "id" = ?`, [now(), row.id], "run");
          return { email: row.email };
        }
        // Counted in the row, so that tries on every replica add up.
        const [counted] = (await connection().execute(`update ${table} set "attempts" = "attempts" + 1 where "id" = ? returning "attempts"`, [row.id], "all")) as { attempts: number }[];
        throw refused(counted.attempts >= maxCodeAttempts ? "emailCodeAttempts" : "emailCodeWrong");
      },
    },
  };
}

/** How long a verification is of any use: its code's life, then a day of its confirmed address. */
const verificationUseMs = codeLifetimeMs + confirmedLifetimeMs;

/** Verifications past any use (they hold addresses: a completed response keeps its own copy), for submissions' retention. */
export function emailVerificationsTarget(orm: MikroORM, now: () => Date = () => new Date()): PruneTarget {
  return tableRetention(orm, {
    table: "email_verifications",
    olderThanAt: (at) => new Date(at.getTime() - verificationUseMs),
    where: (olderThan) => ({ sql: `"created_at" < ?`, params: [new Date(Math.min(olderThan.getTime(), now().getTime() - verificationUseMs))] }),
  });
}

/** Deletes a purged form's verifications (form-purge.ts). */
export async function deleteVerificationsOf(orm: MikroORM, formId: string): Promise<void> {
  await orm.em.fork().getConnection().execute(`delete from "${orm.config.get("schema") ?? "public"}"."email_verifications" where "form_id" = ?`, [formId], "run");
}
