// A real SMTP server on loopback (the `smtp-server` package) that keeps every message it accepts,
// parsed (mailparser), so tests can read what the system mailed and when it arrived.
import type { AddressInfo } from "node:net";
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

export interface ReceivedMail {
  to: string[];
  from: string;
  subject: string;
  text: string;
  html: string;
  /** performance.timeOrigin + performance.now() when the message's data ended. */
  arrivedAt: number;
}

export interface SmtpSink {
  /** SMTP_URL of this server. */
  url: string;
  mails: ReceivedMail[];
  /** Resolves with the first mail (already received or still to come) that `match` accepts. */
  waitFor(match: (mail: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  /** The next `n` answers to DATA are this SMTP error (a transient 451 by default), then mail is accepted. */
  refuseNext(n: number, code?: number): void;
  close(): Promise<void>;
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const mails: ReceivedMail[] = [];
  const waiters: { match: (m: ReceivedMail) => boolean; resolve: (m: ReceivedMail) => void }[] = [];
  let refusals = 0;
  let refusalCode = 451;
  const server = new SMTPServer({
    authOptional: true,
    // Plain SMTP on loopback: no STARTTLS offered, so the client does not ask for a certificate.
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        const arrivedAt = performance.timeOrigin + performance.now();
        // The envelope is reset for the next message once this one is answered.
        const to = session.envelope.rcptTo.map((r) => r.address);
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
        if (refusals > 0) {
          refusals--;
          const err = Object.assign(new Error("try again later"), { responseCode: refusalCode });
          callback(err);
          return;
        }
        callback();
        void simpleParser(Buffer.concat(chunks)).then((parsed) => {
          const mail: ReceivedMail = {
            to,
            from,
            subject: parsed.subject ?? "",
            text: parsed.text ?? "",
            html: typeof parsed.html === "string" ? parsed.html : "",
            arrivedAt,
          };
          mails.push(mail);
          for (const waiter of [...waiters]) {
            if (waiter.match(mail)) {
              waiters.splice(waiters.indexOf(waiter), 1);
              waiter.resolve(mail);
            }
          }
        });
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    waitFor: (match, timeoutMs = 30_000) => {
      const found = mails.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no such mail within ${timeoutMs / 1000} s; received: ${mails.map((m) => `${m.to} "${m.subject}"`).join(", ") || "none"}`)), timeoutMs);
        waiters.push({ match, resolve: (m) => (clearTimeout(timer), resolve(m)) });
      });
    },
    refuseNext: (n, code = 451) => {
      refusals = n;
      refusalCode = code;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The token of the first link to `path` in a mail's text. */
export function linkToken(mail: ReceivedMail, path: string): string {
  const match = new RegExp(`https?://[^\\s/]+${path.replace(/[/]/g, "\\/")}\\?token=([^\\s&]+)`).exec(mail.text);
  if (!match) throw new Error(`no ${path} link in the mail "${mail.subject}":\n${mail.text}`);
  return decodeURIComponent(match[1]);
}
