import assert from "node:assert/strict";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Code, createClient, createRouterTransport } from "@connectrpc/connect";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { createLogger } from "@formsvc/platform/logger.ts";
import { prune, retentionPass } from "@formsvc/platform/retention.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { rejectsWith } from "@formsvc/platform/testing/rpc-assertions.ts";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { FakeForms } from "../../forms/src/testing/fake-forms.ts";
import { entities } from "./entities/index.ts";
import { createLocalFileStore } from "./files/local-file-store.ts";
import { createSubmissionsHandlers, routes } from "./handlers/submissions-handlers.ts";
import { migrations } from "./migrations/index.ts";
import { submissionsRetention } from "./retention.ts";
import { addOutboxRow, outboxIds } from "./testing/outbox-rows.ts";

const hour = 3600;
const ago = (seconds: number) => new Date(Date.now() - seconds * 1000);

let database: TestDatabase;
let orm: MikroORM;
const warnings: string[] = [];
const logger = createLogger("submissions-retention-test", "silent");
logger.warn = ((_obj: unknown, msg: string) => void warnings.push(msg)) as typeof logger.warn;

before(async () => {
  database = await createTestDatabase("formsvc_submissions_retention");
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "submissions", entities, migrations });
});
after(async () => {
  await orm?.close();
  await database?.drop();
});

const sql = <T = unknown[]>(query: string, params: unknown[] = []) => orm.em.getConnection().execute(query, params, "all") as Promise<T>;
const rowsOf = async (table: string) => Number((await sql<{ n: string }[]>(`select count(*)::text as "n" from "submissions"."${table}"`))[0].n);

async function addKey(key: string, createdAt: Date): Promise<void> {
  await sql(`insert into "submissions"."idempotency_keys" ("form_id", "key", "request_hash", "response_id", "completed", "created_at") values ('f1', ?, 'h', 'r1', true, ?)`, [key, createdAt]);
}

async function addMail(sentAt: Date | null, failedAt: Date | null = null): Promise<void> {
  await sql(`insert into "submissions"."mail_outbox" ("to_address", "subject", "text", "html", "sent_at", "failed_at") values ('a@example.com', 's', 't', 'h', ?, ?)`, [sentAt, failedAt]);
}

describe("submissions' retention targets", () => {
  it("a pass removes passed outbox rows, expired Idempotency-Keys and sent mail past the window; the operator's prune never what is still of use, nor responses", async () => {
    const targets = submissionsRetention(orm, { safetySeconds: hour }, { bus: "kafka", notifications: false });
    assert.deepEqual(
      targets.map((t) => t.what),
      ["submissions.outbox", "submissions.idempotency_keys", "submissions.mail_outbox", "submissions.email_verifications"],
    );
    const passed = await addOutboxRow(orm, ago(2 * hour), true);
    const unpublished = await addOutboxRow(orm, ago(2 * hour), false);
    const recent = await addOutboxRow(orm, ago(60), true);
    await addKey("expired", ago(25 * hour));
    await addKey("fresh", ago(hour));
    await addMail(ago(2 * hour));
    await addMail(null, ago(2 * hour)); // given up
    await addMail(ago(60));
    await addMail(null); // still to send
    for (const [id, hours] of [["old", 25], ["new", 1]] as const) {
      await sql(`insert into "submissions"."email_verifications" ("id", "form_id", "email", "code_hash", "created_at", "expires_at") values (?, 'f1', 'a@example.com', '\\x00', ?, ?)`, [id, ago(hours * hour), ago(hours * hour)]);
    }
    await sql(`insert into "submissions"."responses" ("id", "form_id", "workspace_id", "version", "completed", "created_at", "updated_at", "submitted_at")
      values ('r1', 'f1', 'w1', 1, true, now() - interval '400 days', now() - interval '400 days', now() - interval '400 days')`);

    assert.deepEqual(await retentionPass(targets, logger), { "submissions.outbox": 1, "submissions.idempotency_keys": 1, "submissions.mail_outbox": 2, "submissions.email_verifications": 1 });
    assert.deepEqual(warnings, []);
    assert.deepEqual(await outboxIds(orm), [unpublished.id, recent.id]);
    assert.ok(!(await outboxIds(orm)).includes(passed.id));

    // The operator's prune with a bound to come: what every consumer passed, mail sent or given up; never a
    // key still answering repeats, mail still to send, an unpublished row or a response.
    const future = new Date(Date.now() + 60_000);
    const counted = await prune(targets, future, true);
    assert.deepEqual(counted, { "submissions.outbox": 1, "submissions.idempotency_keys": 0, "submissions.mail_outbox": 1, "submissions.email_verifications": 0 });
    assert.deepEqual(await prune(targets, future, false), counted);
    assert.deepEqual(await outboxIds(orm), [unpublished.id]);
    assert.equal(await rowsOf("idempotency_keys"), 1);
    assert.equal(await rowsOf("mail_outbox"), 1);
    assert.equal(await rowsOf("responses"), 1);
  });

  it("AcknowledgeCompletions refuses a call without a follower", async () => {
    const handlers = createSubmissionsHandlers({ orm, forms: new FakeForms().client, files: createLocalFileStore(join(tmpdir(), `${database.name}-files`)), logger });
    const client = createClient(SubmissionsService, createRouterTransport((router) => routes(router, handlers)));
    await rejectsWith(client.acknowledgeCompletions({ follower: "", cursor: 5n }), Code.InvalidArgument, "a follower's name (at most 200 characters) is required");
    await client.acknowledgeCompletions({ follower: "submissions-outbox", cursor: 5n });
    assert.equal(await rowsOf("outbox_followers"), 1);
  });
});
