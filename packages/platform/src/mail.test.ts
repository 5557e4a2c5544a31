import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { defineEntity, p } from "@mikro-orm/core";
import { Migration } from "@mikro-orm/migrations";
import { openDatabase, type MikroORM } from "./database.ts";
import { createLogger } from "./logger.ts";
import { insertMailsSql, mailOutboxDdl, mailOutboxTable, mailTransport, startMailWorker, type Mail, type MailTransport } from "./mail.ts";
import { createTestDatabase, type TestDatabase } from "./testing/database.ts";
import { eventually } from "./testing/eventually.ts";

class MailOutbox extends Migration {
  override up(): void {
    for (const sql of mailOutboxDdl("mailtest")) this.addSql(sql);
  }
}

/** The ORM needs an entity; the worker itself reads the table with SQL. */
const OutboxRow = defineEntity({ name: "MailOutboxRow", tableName: "mail_outbox", properties: { id: p.string().primary() } });

let database: TestDatabase;
let orm: MikroORM;
const logger = createLogger("mail-test", "silent");

before(async () => {
  database = await createTestDatabase("mail_test");
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "mailtest", entities: [OutboxRow], migrations: [{ name: "MailOutbox", class: MailOutbox }] });
});
after(async () => {
  await orm?.close(true);
  await database?.drop();
});

const mail = (to: string): Mail => ({ to, subject: `Hello ${to}`, text: "plain", html: "<p>html</p>" });

async function enqueue(...mails: Mail[]) {
  const { sql, params } = insertMailsSql(mailOutboxTable(orm), mails);
  await orm.em.getConnection().execute(sql, params, "run");
}

async function rowOf(to: string) {
  const [row] = await orm.em.getConnection().execute(`select "attempts", "sent_at", "failed_at", "last_error" from ${mailOutboxTable(orm)} where "to_address" = ?`, [to]);
  return row as { attempts: number; sent_at: Date | null; failed_at: Date | null; last_error: string | null };
}

/** A transport that fails with each of `failures` in turn, then sends; it records what it sent. */
function scriptedTransport(failures: Error[]): MailTransport & { sent: Mail[] } {
  const sent: Mail[] = [];
  return {
    sent,
    describe: "smtp://scripted",
    send: async (m) => {
      const failure = failures.shift();
      if (failure) throw failure;
      sent.push(m);
    },
    close: () => {},
  };
}

const smtpError = (code: number) => Object.assign(new Error(`${code} refused`), { responseCode: code });

/** Waits until `check` holds, polling the database. */
describe("the mail outbox worker", () => {
  it("sends what is written, once woken, and marks it sent", async () => {
    const transport = scriptedTransport([]);
    const worker = startMailWorker({ orm, transport, logger, pollMs: 60_000 });
    try {
      await enqueue(mail("a@example.com"), mail("b@example.com"));
      worker.wake();
      await eventually(async () => (await rowOf("b@example.com")).sent_at !== null && (await rowOf("a@example.com")).sent_at !== null, 5_000, "the outbox to reach the expected state");
      assert.deepEqual(transport.sent.map((m) => m.to).sort(), ["a@example.com", "b@example.com"]);
      assert.equal((await rowOf("a@example.com")).attempts, 1);
    } finally {
      await worker.stop();
    }
  });

  it("retries a transient failure on the schedule and gives up a refused mail (5xx) or one out of attempts", async () => {
    const transport = scriptedTransport([new Error("connect ECONNREFUSED"), smtpError(451)]);
    const worker = startMailWorker({ orm, transport, logger, retrySchedule: [0, 0], pollMs: 20 });
    try {
      await enqueue(mail("retry@example.com"));
      await eventually(async () => (await rowOf("retry@example.com")).sent_at !== null, 5_000, "the outbox to reach the expected state");
      assert.equal((await rowOf("retry@example.com")).attempts, 3, "two failures, then sent");
    } finally {
      await worker.stop();
    }
    const refusing = scriptedTransport([smtpError(550)]);
    const refused = startMailWorker({ orm, transport: refusing, logger, retrySchedule: [0, 0], pollMs: 20 });
    try {
      await enqueue(mail("nobody@example.com"));
      await eventually(async () => (await rowOf("nobody@example.com")).failed_at !== null, 5_000, "the outbox to reach the expected state");
      assert.deepEqual([(await rowOf("nobody@example.com")).attempts, (await rowOf("nobody@example.com")).last_error], [1, "550 refused"]);
    } finally {
      await refused.stop();
    }
    const failing = scriptedTransport([new Error("down"), new Error("down"), new Error("down"), new Error("down")]);
    const exhausted = startMailWorker({ orm, transport: failing, logger, retrySchedule: [0, 0], pollMs: 20 });
    try {
      await enqueue(mail("unlucky@example.com"));
      await eventually(async () => (await rowOf("unlucky@example.com")).failed_at !== null, 5_000, "the outbox to reach the expected state");
      assert.equal((await rowOf("unlucky@example.com")).attempts, 3, "the first attempt and one per step of the schedule");
      assert.deepEqual(failing.sent, []);
    } finally {
      await exhausted.stop();
    }
  });

  it("without SMTP_URL writes each mail as an .eml file, text and HTML alternatives", async () => {
    const dir = mkdtempSync(join(tmpdir(), "formsvc-mail-"));
    try {
      const transport = mailTransport({ smtpUrl: undefined, from: "Forms <forms@example.com>", dir: join(dir, "mail") });
      await transport.send(mail("file@example.com"));
      const [file, ...others] = readdirSync(join(dir, "mail"));
      assert.equal(others.length, 0);
      assert.match(file, /\.eml$/);
      const eml = readFileSync(join(dir, "mail", file), "utf8");
      assert.match(eml, /^To: file@example\.com$/m);
      assert.match(eml, /^From: Forms <forms@example\.com>$/m);
      assert.match(eml, /^Subject: Hello file@example\.com$/m);
      assert.match(eml, /multipart\/alternative/);
      assert.match(eml, /<p>html<\/p>/);
      transport.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
