import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { submissionSchema } from "@formsvc/api-records/schemas";
import { loadConfig } from "@formsvc/platform/config.ts";
import { openDatabase } from "@formsvc/platform/database.ts";
import { createServiceClient } from "@formsvc/platform/rpc.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { envelopeOf } from "../../gateway/src/routes/paging.ts";
import { entities as formsEntities } from "../../services/forms/src/entities/index.ts";
import { migrations as formsMigrations } from "../../services/forms/src/migrations/index.ts";
import { deleteExpiredResponses } from "../../services/forms/src/response-retention.ts";
import { fileStores, type FileStoreName, type FileStoreSetup } from "./file-stores.ts";
import { createUserWithKey, startTestSystem, type TestSystem } from "./system.ts";

/**
 * Responses arrive through the public endpoints a respondent's browser uses, and are read, filtered and
 * deleted over /api/v1 as an integrator would; `store` chooses where uploaded files live.
 */
export function submissionsApiSuite(store: FileStoreName) {
  let sys: TestSystem;
  let files: FileStoreSetup;
  let ada: Awaited<ReturnType<typeof createUserWithKey>>;
  let mallory: Awaited<ReturnType<typeof createUserWithKey>>;
  before(async () => {
    files = await fileStores[store]();
    // The respondent's country comes from COUNTRY_HEADER only behind a trusted proxy (here: the test itself).
    sys = await startTestSystem(`submissions_${store}`, { TRUST_PROXY: "loopback", ...files.env });
    ada = await createUserWithKey(sys, "ada@example.com");
    mallory = await createUserWithKey(sys, "mallory@example.com");
  });
  after(async () => {
    await sys?.stop();
    await files?.stop();
  });

  const document = {
    title: "Survey",
    blocks: [
      { id: "name", key: "name", type: "SHORT_TEXT", question: "Your name", required: true },
      { id: "email", key: "email", type: "EMAIL", question: "Email" },
      { id: "age", key: "age", type: "NUMBER", question: "Age", min: 0, max: 150 },
      { id: "when", key: "when", type: "DATE", question: "Date" },
      { id: "plan", key: "plan", type: "MULTIPLE_CHOICE", question: "Plan", options: [{ id: "free", text: "Free" }, { id: "pro", text: "Pro" }] },
      { id: "tags", key: "tags", type: "CHECKBOXES", question: "Tags", options: [{ id: "a", text: "A" }, { id: "b", text: "B" }] },
      { id: "stars", key: "stars", type: "RATING", question: "Stars", max: 5 },
      { id: "cv", key: "cv", type: "FILE", question: "CV" },
    ],
    hiddenFields: [{ name: "utm_source" }],
  };

  async function publishedForm(doc: object = document) {
    const res = await ada.api("POST", "/forms", { workspaceId: ada.workspace.id, name: "Survey", document: doc });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    await sys.cli("form:publish", "--id", res.body.id);
    return res.body as { id: string };
  }

  async function respond(formId: string, body: object, headers: Record<string, string> = {}) {
    const res = await fetch(`${sys.url}/f/${formId}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  }

  /** The form's responseCount once it reads `expected` (it follows the responses within seconds), or the last one read. */
  async function settledCount(formId: string, expected: number): Promise<number> {
    const read = async () => (await ada.api("GET", `/forms/${formId}`)).body.responseCount as number;
    return eventuallyPasses(read, (count) => count === expected, 15_000, 50).catch(read);
  }

  async function upload(formId: string, bytes: Uint8Array<ArrayBuffer>, name: string, type: string) {
    const form = new FormData();
    form.set("file", new Blob([bytes], { type }), name);
    const res = await fetch(`${sys.url}/f/${formId}/uploads`, { method: "POST", body: form });
    assert.equal(res.status, 200);
    return (await res.json()) as { uploadId: string; name: string; size: number; contentType: string };
  }

  describe(`responses and the submissions API (files: ${store})`, () => {
    it("validates every answer against the form, naming the question", async () => {
      const form = await publishedForm();
      const cases: [object, RegExp][] = [
        [{ answers: { email: "not-an-email" } }, /email/],
        [{ answers: { age: "twelve" } }, /age/],
        [{ answers: { age: 200 } }, /age/],
        [{ answers: { when: "22/11/2026" } }, /when/],
        [{ answers: { plan: "gold" } }, /plan/],
        [{ answers: { tags: ["a", "zzz"] } }, /tags/],
        [{ answers: { stars: 6 } }, /stars/],
        [{ answers: { nope: "x" } }, /nope/],
        [{ answers: { cv: ["not-an-upload"] } }, /cv/],
        [{ answers: {}, completed: true }, /name/],
        [{ answers: { name: "A" }, hidden: { other: "x" } }, /other/],
        [{ answers: "yes" }, /answers/],
      ];
      for (const [body, field] of cases) {
        const res = await respond(form.id, body);
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.match(res.body.error, field, JSON.stringify(body));
      }
      // Required questions bind on completion only: a partial save without the name is fine.
      const partial = await respond(form.id, { answers: { email: "a@example.com" } });
      assert.equal(partial.status, 200);
      assert.equal(partial.body.completed, false);
    });

    it("completes a partial response, filters, and shows answers with signed file links", async () => {
      const form = await publishedForm();
      const pdf = new TextEncoder().encode("%PDF-1.4 pretend");
      const cv = await upload(form.id, pdf, "cv.pdf", "application/pdf");
      assert.equal(cv.size, pdf.length);
      const first = await respond(form.id, { answers: { name: "Ada", email: "ada@example.com" }, hidden: { utm_source: "mail" } });
      const done = await respond(
        form.id,
        { responseId: first.body.responseId, answers: { age: 36, when: "2026-11-22", plan: "pro", tags: ["a", "b"], stars: 5, cv: [cv.uploadId] }, completed: true },
        { "cf-ipcountry": "gb" },
      );
      assert.deepEqual(done.body, { responseId: first.body.responseId, completed: true });
      const other = await respond(form.id, { answers: { name: "Partial Pete" } });

      const completed = await ada.api("GET", `/forms/${form.id}/submissions?filter=completed`);
      assert.equal(completed.status, 200);
      envelopeOf(submissionSchema, "S").parse(completed.body);
      assert.deepEqual(completed.body.items.map((s: { id: string }) => s.id), [first.body.responseId]);
      const partial = await ada.api("GET", `/forms/${form.id}/submissions?filter=partial`);
      assert.deepEqual(partial.body.items.map((s: { id: string }) => s.id), [other.body.responseId]);
      const all = await ada.api("GET", `/forms/${form.id}/submissions?filter=all&limit=1`);
      assert.deepEqual([all.body.items[0].id, all.body.hasMore], [other.body.responseId, true]);
      assert.equal((await ada.api("GET", `/forms/${form.id}/submissions?filter=done`)).status, 400);

      const sub = (await ada.api("GET", `/forms/${form.id}/submissions/${first.body.responseId}`)).body;
      submissionSchema.parse(sub);
      assert.equal(sub.completed, true);
      assert.ok(sub.submittedAt);
      assert.deepEqual(sub.answers.name, { questionId: "name", type: "SHORT_TEXT", label: "Your name", value: "Ada" });
      assert.deepEqual(sub.answers.tags.value, ["a", "b"]);
      assert.equal(sub.answers["hidden:utm_source"].value, "mail");
      assert.equal(sub.answers["meta:country"].value, "GB");
      assert.equal(sub.answers.cv.files.length, 1);
      const fileRes = await fetch(sub.answers.cv.files[0].url);
      assert.equal(fileRes.status, 200);
      if (files.s3Endpoint) {
        // S3: the signed link redirects to a presigned GET of the object store; the gateway streams nothing.
        const redirect = await fetch(sub.answers.cv.files[0].url, { redirect: "manual" });
        assert.equal(redirect.status, 302);
        const location = new URL(redirect.headers.get("location")!);
        assert.equal(location.origin, files.s3Endpoint);
        assert.ok(Number(location.searchParams.get("X-Amz-Expires")) <= 600, "valid for minutes");
        assert.equal(fileRes.headers.get("content-disposition"), "attachment; filename*=UTF-8''cv.pdf");
        assert.equal(fileRes.headers.get("content-type"), "application/pdf");
      }
      assert.deepEqual(new Uint8Array(await fileRes.arrayBuffer()), pdf);
      // Another first character of the signature, whatever it was.
      const tampered = sub.answers.cv.files[0].url.replace(/signature=(.)/, (_: string, first: string) => `signature=${first === "X" ? "Y" : "X"}`);
      assert.equal((await fetch(tampered)).status, 403);

      // The count is submissions' own, pushed to forms off the respondent's path: exact once it settles.
      assert.equal(await settledCount(form.id, 1), 1);
      const deleted = await ada.api("DELETE", `/forms/${form.id}/submissions/${first.body.responseId}`);
      assert.equal(deleted.status, 204);
      assert.equal((await fetch(sub.answers.cv.files[0].url)).status, 404);
      if (files.s3Endpoint) {
        // The object went with the submission: a presigned URL handed out before finds nothing.
        assert.equal((await fetch(new URL(fileRes.url))).status, 404);
      }
      assert.equal((await ada.api("GET", `/forms/${form.id}/submissions/${first.body.responseId}`)).status, 404);
      assert.equal(await settledCount(form.id, 0), 0);
    });

    it("counts exactly: 50 concurrent completions and 5 deletions give a responseCount of 45 once it settles", async () => {
      const form = await publishedForm();
      const saved = await Promise.all(Array.from({ length: 50 }, (_, i) => respond(form.id, { answers: { name: `R${i}` }, completed: true })));
      assert.deepEqual(new Set(saved.map((r) => r.status)), new Set([200]));
      const partial = await respond(form.id, { answers: { name: "half-way" } });
      assert.equal(partial.status, 200);
      const deletions = await Promise.all(
        [...saved.slice(0, 5), partial].map((r) => ada.api("DELETE", `/forms/${form.id}/submissions/${r.body.responseId}`)),
      );
      assert.deepEqual(deletions.map((r) => r.status), [204, 204, 204, 204, 204, 204]);
      assert.equal(await settledCount(form.id, 45), 45);
      const completed = await ada.api("GET", `/forms/${form.id}/submissions?filter=completed&limit=100`);
      assert.equal(completed.body.items.length, 45);
    });

    it("keeps nothing of an upload whose client goes away mid-file, and takes the next one", async () => {
      const form = await publishedForm();
      const boundary = "cut-short";
      const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
      const sent = 3 * 1024 * 1024;
      const req = request(`${sys.url}/f/${form.id}/uploads`, {
        method: "POST",
        headers: { "content-type": `multipart/form-data; boundary=${boundary}`, "content-length": String(head.length + 2 * sent) },
      });
      req.on("error", () => {});
      req.write(head);
      await new Promise((resolve) => req.write(Buffer.alloc(sent, 1), resolve));
      const filesDir = join(sys.env.DATA_DIR, "files");
      const storedNames = async () => (existsSync(filesDir) ? readdirSync(filesDir) : []);
      // On the local store the bytes already arrive in a temporary file while the client still sends.
      if (!files.s3Endpoint) await eventuallyPasses(storedNames, (names) => names.some((n) => n.endsWith(".tmp")));
      req.destroy();
      const db = new pg.Client({ connectionString: sys.databaseUrl });
      await db.connect();
      try {
        if (!files.s3Endpoint) await eventuallyPasses(storedNames, (names) => !names.some((n) => n.endsWith(".tmp")));
        const { rows } = await db.query("select count(*)::int as n from submissions.uploads where form_id = $1", [form.id]);
        assert.equal(rows[0].n, 0);
      } finally {
        await db.end();
      }
      const next = await upload(form.id, new Uint8Array(1024).fill(2), "next.bin", "application/octet-stream");
      assert.equal(next.size, 1024);
    });

    it("shows each response against the version its respondent saw", async () => {
      const form = await publishedForm({ blocks: [{ id: "q", key: "q", type: "SHORT_TEXT", question: "Old question" }] });
      const v1 = (await fetch(`${sys.url}/f/${form.id}/definition`).then((r) => r.json())) as { version: number };
      const old = await respond(form.id, { version: v1.version, answers: { q: "old answer" }, completed: true });
      const current = (await ada.api("GET", `/forms/${form.id}`)).body;
      const patched = await ada.api("PATCH", `/forms/${form.id}`, {
        document: { blocks: [{ id: "q2", key: "q2", type: "LONG_TEXT", question: "New question" }] },
      });
      assert.equal(patched.body.version, current.version + 1);
      const fresh = await respond(form.id, { answers: { q2: "new answer" }, completed: true });
      const oldSub = (await ada.api("GET", `/forms/${form.id}/submissions/${old.body.responseId}`)).body;
      const newSub = (await ada.api("GET", `/forms/${form.id}/submissions/${fresh.body.responseId}`)).body;
      assert.deepEqual([oldSub.version, oldSub.answers.q.label, oldSub.answers.q.value], [v1.version, "Old question", "old answer"]);
      assert.deepEqual([newSub.version, newSub.answers.q2.label], [v1.version + 1, "New question"]);
      // A respondent still on the old page can finish against the version they loaded.
      const late = await respond(form.id, { version: v1.version, answers: { q: "late" }, completed: true });
      assert.equal(late.status, 200);
    });

    it("a form's deleteResponsesAfterDays removes old responses and their files and lowers the count", async () => {
      const form = await publishedForm();
      for (const bad of [0, -1, 1.5]) {
        const refused = await ada.api("PATCH", `/forms/${form.id}`, { settings: { deleteResponsesAfterDays: bad } });
        assert.equal(refused.status, 400, JSON.stringify(bad));
        assert.match(refused.body.error, /deleteResponsesAfterDays/);
      }
      const patched = await ada.api("PATCH", `/forms/${form.id}`, { settings: { deleteResponsesAfterDays: 1 } });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      assert.equal(patched.body.settings.deleteResponsesAfterDays, 1);

      const pdf = (text: string) => new TextEncoder().encode(`%PDF-1.4 ${text}`);
      const oldFile = await upload(form.id, pdf("old"), "old.pdf", "application/pdf");
      const old = await respond(form.id, { answers: { name: "Old", cv: [oldFile.uploadId] }, completed: true });
      const oldPartialFile = await upload(form.id, pdf("old partial"), "old-partial.pdf", "application/pdf");
      const oldPartial = await respond(form.id, { answers: { name: "Old partial", cv: [oldPartialFile.uploadId] } });
      const newFile = await upload(form.id, pdf("new"), "new.pdf", "application/pdf");
      const fresh = await respond(form.id, { answers: { name: "New", cv: [newFile.uploadId] }, completed: true });
      const freshPartial = await respond(form.id, { answers: { name: "New partial" } });
      for (const r of [old, oldPartial, fresh, freshPartial]) assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(await settledCount(form.id, 2), 2);

      // The old file's signed link, and on S3 the presigned URL it redirects to, to follow again afterwards.
      const fileLink = async (responseId: string) => (await ada.api("GET", `/forms/${form.id}/submissions/${responseId}`)).body.answers.cv.files[0].url as string;
      const oldLinks = [await fileLink(old.body.responseId), await fileLink(oldPartial.body.responseId)];
      const newLink = await fileLink(fresh.body.responseId);
      for (const link of oldLinks) assert.equal((await fetch(link)).status, 200);
      const presigned = files.s3Endpoint ? await Promise.all(oldLinks.map(async (link) => (await fetch(link, { redirect: "manual" })).headers.get("location")!)) : [];
      for (const url of presigned) assert.equal((await fetch(url)).status, 200);
      const storedFile = (uploadId: string) => existsSync(join(sys.env.DATA_DIR, "files", uploadId));
      if (!files.s3Endpoint) assert.ok(storedFile(oldFile.uploadId) && storedFile(oldPartialFile.uploadId) && storedFile(newFile.uploadId));

      // Two days old as far as the database knows: submitted (the completed one) and last saved (the partial one) then.
      const db = new pg.Client({ connectionString: sys.databaseUrl });
      await db.connect();
      try {
        const aged = await db.query(
          `update submissions.responses set created_at = now() - interval '2 days', updated_at = now() - interval '2 days',
             submitted_at = case when completed then now() - interval '2 days' end where id = any($1)`,
          [[old.body.responseId, oldPartial.body.responseId]],
        );
        assert.equal(aged.rowCount, 2);

        // The pass forms runs every RETENTION_INTERVAL_SECONDS, now (its own may come first: the outcome is the same).
        const orm = await openDatabase({ databaseUrl: sys.databaseUrl, schema: "forms", entities: formsEntities, migrations: formsMigrations });
        try {
          const submissions = createServiceClient(SubmissionsService, loadConfig(sys.env).services.submissions);
          await deleteExpiredResponses({ orm, submissions });
        } finally {
          await orm.close(true);
        }

        const all = await ada.api("GET", `/forms/${form.id}/submissions?filter=all&limit=100`);
        assert.deepEqual(new Set(all.body.items.map((s: { id: string }) => s.id)), new Set([fresh.body.responseId, freshPartial.body.responseId]));
        for (const gone of [old, oldPartial]) assert.equal((await ada.api("GET", `/forms/${form.id}/submissions/${gone.body.responseId}`)).status, 404);
        for (const link of oldLinks) assert.equal((await fetch(link)).status, 404, "the old files' links find nothing");
        // S3: the objects went too, so a presigned URL handed out before finds nothing.
        for (const url of presigned) assert.equal((await fetch(url)).status, 404);
        if (!files.s3Endpoint) {
          assert.equal(storedFile(oldFile.uploadId), false);
          assert.equal(storedFile(oldPartialFile.uploadId), false);
          assert.equal(storedFile(newFile.uploadId), true);
        }
        const uploads = await db.query("select id from submissions.uploads where form_id = $1", [form.id]);
        assert.deepEqual(uploads.rows.map((r) => r.id), [newFile.uploadId]);
        assert.equal((await fetch(newLink)).status, 200, "the new response keeps its file");
        // The count follows: the old completed response no longer counts.
        assert.equal(await settledCount(form.id, 1), 1);
      } finally {
        await db.end();
      }
    });

    it("masks another user's forms and submissions, and refuses drafts and closed forms", async () => {
      const form = await publishedForm();
      const res = await respond(form.id, { answers: { name: "Secret" }, completed: true });
      const sid = res.body.responseId;
      for (const [method, path] of [
        ["GET", `/forms/${form.id}/submissions`],
        ["GET", `/forms/${form.id}/submissions/${sid}`],
        ["DELETE", `/forms/${form.id}/submissions/${sid}`],
      ]) {
        const foreign = await mallory.api(method, path);
        const missing = await mallory.api(method, path.replace(form.id, "F000000000000000"));
        assert.equal(foreign.status, 404, `${method} ${path}`);
        assert.deepEqual(foreign.body, missing.body);
      }
      assert.equal((await ada.api("GET", `/forms/${form.id}/submissions/${sid}`)).status, 200, "nothing was deleted");

      const draft = await ada.api("POST", "/forms", { workspaceId: ada.workspace.id, document });
      assert.equal((await respond(draft.body.id, { answers: { name: "x" } })).status, 404);
      await sys.cli("form:close", "--id", form.id);
      const closed = await respond(form.id, { answers: { name: "x" }, completed: true });
      assert.equal(closed.status, 409);
      assert.match(closed.body.error, /closed/);
    });
  });
}
