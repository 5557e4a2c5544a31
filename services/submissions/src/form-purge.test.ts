import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { entities, ResponseEntity, UploadEntity } from "./entities/index.ts";
import type { FileStore } from "./files/file-store.ts";
import { createLocalFileStore } from "./files/local-file-store.ts";
import { countFormHoldings, deleteFormHoldings } from "./form-purge.ts";
import { readInsights, recordInsights } from "./insights/insight-aggregates.ts";
import { migrations } from "./migrations/index.ts";

// Purging a form's responses against a real database and a local file store: what is counted, that
// only that form's rows, bytes and insights go, and that a store failing half-way leaves what a second call finds.

let database: TestDatabase;
let orm: MikroORM;
let dir: string;
let files: FileStore;

before(async () => {
  database = await createTestDatabase("submissions_purge_test");
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "submissions", entities, migrations });
  dir = await mkdtemp(join(tmpdir(), "purge-"));
  files = createLocalFileStore(dir);
});
after(async () => {
  await orm?.close(true);
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

/** A form with `completed` completed responses and one partial one, each with a file of `size` bytes, and one unattached upload. */
async function seed(formId: string, completed: number, size: number): Promise<string[]> {
  const em = orm.em.fork();
  const at = new Date();
  const keys: string[] = [];
  const addUpload = async (responseId: string | null) => {
    const id = `${formId}-u${keys.length}`;
    await files.put(id, new Uint8Array(size));
    em.create(UploadEntity, { id, formId, workspaceId: "ws", responseId, name: "f.bin", contentType: "application/octet-stream", size, storageKey: id, createdAt: at });
    keys.push(id);
  };
  for (let i = 0; i <= completed; i++) {
    const id = `${formId}-r${i}`;
    const done = i < completed;
    em.create(ResponseEntity, { id, formId, workspaceId: "ws", version: 1, completed: done, answers: {}, hidden: {}, country: null, createdAt: at, updatedAt: at, submittedAt: done ? at : null });
    await addUpload(id);
  }
  await addUpload(null);
  await em.flush();
  return keys;
}

const stored = async (key: string) => (await files.get(key)) !== undefined;

describe("purging a form's responses", () => {
  it("counts and then deletes the form's responses, partials, uploads and bytes, and nothing of another form", async () => {
    const keys = await seed("formA", 3, 100);
    const others = await seed("formB", 1, 10);
    const counted = (formId: string) => ({ formId, day: "2026-05-01", views: 2n });
    await recordInsights(orm, { days: [counted("formA"), counted("formB")], questions: [{ formId: "formA", day: "2026-05-01", key: "q", shown: 1n }] });
    assert.deepEqual(await countFormHoldings(orm, "formA"), { responses: 3, partials: 1, files: 5, bytes: 500 });

    assert.deepEqual(await deleteFormHoldings("formA", { orm, files, batchSize: 2 }), { responses: 3, partials: 1, files: 5, bytes: 500 });
    assert.deepEqual(await countFormHoldings(orm, "formA"), { responses: 0, partials: 0, files: 0, bytes: 0 });
    for (const key of keys) assert.equal(await stored(key), false, key);
    assert.deepEqual(await countFormHoldings(orm, "formB"), { responses: 1, partials: 1, files: 3, bytes: 30 });
    for (const key of others) assert.equal(await stored(key), true, key);
    assert.deepEqual([(await readInsights(orm, "formA")).views, (await readInsights(orm, "formA")).questions.size], [0, 0], "its insights go with it");
    assert.equal((await readInsights(orm, "formB")).views, 2);
    assert.deepEqual(await deleteFormHoldings("formA", { orm, files }), { responses: 0, partials: 0, files: 0, bytes: 0 }, "again: nothing left");
  });

  it("a store that fails keeps the rows of the files it did not remove; a second call finishes", async () => {
    const keys = await seed("formC", 4, 50);
    let deletes = 0;
    const failing: FileStore = {
      ...files,
      delete: async (key) => {
        if (++deletes === 3) throw new Error("store down");
        await files.delete(key);
      },
    };
    await assert.rejects(deleteFormHoldings("formC", { orm, files: failing, batchSize: 2 }), /store down/);
    const left = await countFormHoldings(orm, "formC");
    assert.deepEqual(left, { responses: 4, partials: 1, files: 4, bytes: 200 }, "the first batch went, rows and bytes");
    assert.equal(await stored(keys[0]), false);

    assert.deepEqual(await deleteFormHoldings("formC", { orm, files }), { responses: 4, partials: 1, files: 4, bytes: 200 });
    for (const key of keys) assert.equal(await stored(key), false, key);
  });
});
