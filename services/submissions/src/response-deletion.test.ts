import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import type { FormDocument } from "@formsvc/form-document";
import { asCaller } from "@formsvc/platform/caller.ts";
import { loadConfig } from "@formsvc/platform/config.ts";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { createLogger } from "@formsvc/platform/logger.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { rejectsWith } from "@formsvc/platform/testing/rpc-assertions.ts";
import { uploadRequests } from "@formsvc/platform/upload-stream.ts";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { startS3Mock, type S3Mock } from "../../../deploy/s3/s3mock-runner.ts";
import { FakeForms } from "../../forms/src/testing/fake-forms.ts";
import { entities } from "./entities/index.ts";
import type { FileStore } from "./files/file-store.ts";
import { createLocalFileStore } from "./files/local-file-store.ts";
import { createSubmissionsHandlers, routes } from "./handlers/submissions-handlers.ts";
import { migrations } from "./migrations/index.ts";
import { createCompletionNotifier } from "./outbox/completion-notifier.ts";
import { startResponseCountPusher, type ResponseCountPusher } from "./response-counts.ts";
import { deleteResponsesBefore } from "./response-deletion.ts";

// DeleteResponsesBefore (a form's deleteResponsesAfterDays) against a real database and a real file store,
// the local directory and S3 (S3Mock): old responses go with their files, new ones stay, the count drops
// by the completed ones, and one log line records each deletion.

const document: FormDocument = {
  title: "Applications",
  blocks: [
    { id: "b_name", key: "name", type: "SHORT_TEXT", question: "Your name", required: true },
    { id: "b_cv", key: "cv", type: "FILE", question: "Your CV" },
  ],
};
const ada = asCaller("user-ada");
const dayMs = 24 * 60 * 60 * 1000;

let database: TestDatabase;
let orm: MikroORM;
before(async () => {
  database = await createTestDatabase("submissions_retention_test");
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "submissions", entities, migrations });
});
after(async () => {
  await orm?.close(true);
  await database?.drop();
});

let s3: S3Mock | undefined;
after(() => s3?.stop());

const tmpDirs: string[] = [];
after(() => {
  for (const dir of tmpDirs) rmSync(dir, { recursive: true, force: true });
});

const stores: [string, () => Promise<FileStore>][] = [
  [
    "local directory",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "submissions-retention-"));
      tmpDirs.push(dir);
      return createLocalFileStore(join(dir, "files"));
    },
  ],
  [
    "S3 (S3Mock)",
    async () => {
      s3 ??= await startS3Mock();
      const { createS3FileStore } = await import("./files/s3-file-store.ts");
      return createS3FileStore({ ...loadConfig(s3.env).s3!, prefix: `${randomBytes(6).toString("hex")}/` });
    },
  ],
];

for (const [storeName, makeStore] of stores) {
  describe(`DeleteResponsesBefore (files: ${storeName})`, () => {
    const fakeForms = new FakeForms();
    fakeForms.members["ws-ada"] = ["user-ada"];
    let files: FileStore;
    let client: Client<typeof SubmissionsService>;
    let counts: ResponseCountPusher;
    const logged: Record<string, unknown>[] = [];
    const logger = createLogger("submissions-test", "info", { write: (line: string) => void logged.push(JSON.parse(line)) });
    const countChanges = createCompletionNotifier();
    const formPrefix = `f${randomBytes(4).toString("hex")}`;
    let formCounter = 0;

    before(async () => {
      files = await makeStore();
      const handlers = createSubmissionsHandlers({ orm, forms: fakeForms.client, files, logger, countChanges });
      client = createClient(SubmissionsService, createRouterTransport((router) => routes(router, handlers)));
      counts = startResponseCountPusher({ orm, forms: fakeForms.client, logger, changes: countChanges, pollMs: 100, spacingMs: 0 });
    });
    after(() => counts?.stop());

    function newForm() {
      return fakeForms.add({ id: `${formPrefix}${++formCounter}`, workspaceId: "ws-ada", versions: [document] });
    }

    /** A response (with a file when `file` names it), its id and the file's storage key. */
    async function respond(formId: string, completed: boolean, file?: string) {
      let cv: string[] = [];
      if (file) {
        const upload = await client.createUpload(uploadRequests({ formId, name: `${file}.pdf`, contentType: "application/pdf" }, new TextEncoder().encode(`%PDF ${file}`)));
        cv = [upload.uploadId];
      }
      const saved = await client.saveResponse({ formId, answers: { name: file ?? "no file", ...(file ? { cv } : {}) }, completed });
      return { id: saved.responseId, fileKey: cv[0] };
    }

    /** Sets the response's times `days` days back, as if it had been made then (`saved`: its last save, when later). */
    async function age(id: string, days: number, saved = days) {
      const at = new Date(Date.now() - days * dayMs);
      const savedAt = new Date(Date.now() - saved * dayMs);
      await orm.em
        .fork()
        .getConnection()
        .execute(
          `update "submissions"."responses" set "created_at" = ?, "updated_at" = ?, "submitted_at" = case when "completed" then ?::timestamptz end where "id" = ?`,
          [at, savedAt, savedAt, id],
          "run",
        );
    }

    async function countOf(formId: string): Promise<number> {
      await counts.flush();
      return fakeForms.forms.get(formId)!.responseCount;
    }

    it("deletes the form's responses older than `before` with their files, keeps the newer ones, lowers the count and logs the deletion", async () => {
      const form = newForm();
      const other = newForm();
      const oldCompleted = await respond(form.id, true, "old-completed");
      const oldPartial = await respond(form.id, false, "old-partial");
      const oldCompletedNoFile = await respond(form.id, true);
      // Started long ago, but its respondent saved it yesterday: still being filled in.
      const resumedPartial = await respond(form.id, false, "resumed-partial");
      const fresh = await respond(form.id, true, "fresh");
      const otherForms = await respond(other.id, true, "other-form");
      await age(oldCompleted.id, 40);
      await age(oldPartial.id, 40);
      await age(oldCompletedNoFile.id, 31);
      await age(resumedPartial.id, 40, 1);
      await age(otherForms.id, 40);
      assert.equal(await countOf(form.id), 3);
      assert.equal(await countOf(other.id), 1);

      const before = new Date(Date.now() - 30 * dayMs);
      logged.length = 0;
      const { deleted } = await client.deleteResponsesBefore({ formId: form.id, before: timestampFromDate(before) });
      assert.deepEqual(
        { responses: deleted?.responses, partials: deleted?.partials, files: deleted?.files, bytes: deleted?.bytes },
        { responses: 2n, partials: 1n, files: 2n, bytes: BigInt("%PDF old-completed".length + "%PDF old-partial".length) },
      );

      for (const gone of [oldCompleted, oldPartial, oldCompletedNoFile]) {
        await rejectsWith(client.getSubmission({ formId: form.id, submissionId: gone.id }, ada), Code.NotFound);
      }
      for (const key of [oldCompleted.fileKey, oldPartial.fileKey]) {
        assert.equal(await files.get(key), undefined, `the file ${key} is gone from the store`);
        await rejectsWith(client.readFile({ fileId: key }), Code.NotFound);
      }
      const uploadRows = await orm.em.fork().getConnection().execute(`select "id" from "submissions"."uploads" where "id" in (?)`, [[oldCompleted.fileKey, oldPartial.fileKey]]);
      assert.deepEqual(uploadRows, []);
      for (const kept of [resumedPartial, fresh]) {
        assert.equal((await client.getSubmission({ formId: form.id, submissionId: kept.id }, ada)).submission?.id, kept.id);
        assert.ok(await files.get(kept.fileKey), "a kept response keeps its file");
      }
      assert.ok(await client.getSubmission({ formId: other.id, submissionId: otherForms.id }, ada), "another form's responses are not touched");
      assert.ok(await files.get(otherForms.fileKey));

      // The count drops by the completed ones deleted, as DeleteSubmission lowers it.
      assert.equal(await countOf(form.id), 1);
      assert.equal(await countOf(other.id), 1);
      // The record of the deletion: one line for the form.
      const lines = logged.filter((l) => l.msg === "responses past the form's deleteResponsesAfterDays deleted");
      assert.equal(lines.length, 1);
      assert.deepEqual(
        { formId: lines[0].formId, deleted: lines[0].deleted, completed: lines[0].completed, partials: lines[0].partials, files: lines[0].files, before: lines[0].before },
        { formId: form.id, deleted: 3, completed: 2, partials: 1, files: 2, before: before.toISOString() },
      );

      // Again: nothing left to delete, and nothing logged.
      logged.length = 0;
      const again = await client.deleteResponsesBefore({ formId: form.id, before: timestampFromDate(before) });
      assert.deepEqual([again.deleted?.responses, again.deleted?.partials, again.deleted?.files], [0n, 0n, 0n]);
      assert.equal(logged.filter((l) => l.msg === "responses past the form's deleteResponsesAfterDays deleted").length, 0);
    });

    it("goes a batch at a time until nothing old is left", async () => {
      const form = newForm();
      const old = [];
      for (let i = 0; i < 5; i++) old.push(await respond(form.id, i % 2 === 0, `batch-${i}`));
      for (const r of old) await age(r.id, 10);
      const kept = await respond(form.id, true, "kept");
      const deleted = await deleteResponsesBefore({ orm, files, logger, countChanges }, form.id, new Date(Date.now() - dayMs), { batchSize: 2 });
      assert.deepEqual(deleted, { responses: 3, partials: 2, files: 5, bytes: deleted.bytes });
      for (const r of old) assert.equal(await files.get(r.fileKey), undefined);
      const rows = await orm.em.fork().getConnection().execute<{ id: string }[]>(`select "id" from "submissions"."responses" where "form_id" = ?`, [form.id]);
      assert.deepEqual(rows.map((r) => r.id), [kept.id]);
      assert.equal(await countOf(form.id), 1);
    });

    it("stops between batches once the call is given up", async () => {
      const form = newForm();
      for (let i = 0; i < 3; i++) await age((await respond(form.id, true)).id, 10);
      const given = new AbortController();
      given.abort();
      const deleted = await deleteResponsesBefore({ orm, files, logger, countChanges }, form.id, new Date(), { batchSize: 1, signal: given.signal });
      assert.equal(deleted.responses, 0);
      assert.equal(await countOf(form.id), 3);
    });

    it("needs a form and a time", async () => {
      await rejectsWith(client.deleteResponsesBefore({ formId: "", before: timestampFromDate(new Date()) }), Code.NotFound);
      await rejectsWith(client.deleteResponsesBefore({ formId: "someform" }), Code.InvalidArgument, /before/);
    });
  });
}
