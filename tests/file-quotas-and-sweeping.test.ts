import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { fileStores, type FileStoreSetup } from "./support/file-stores.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { createUserWithKey, startTestSystem, type TestSystem } from "./support/system.ts";

// Storage quotas and sweeping with shortened settings, on S3 (S3Mock): a form may hold 5 MiB and a
// workspace 6 MiB; unattached uploads and those of partial responses go after 3 s, swept every second.
const MiB = 1024 * 1024;
let sys: TestSystem;
let files: FileStoreSetup;
let owner: Awaited<ReturnType<typeof createUserWithKey>>;
before(async () => {
  files = await fileStores.s3();
  sys = await startTestSystem("file_quotas", {
    ...files.env,
    STORAGE_QUOTA_PER_FORM: String(5 * MiB),
    STORAGE_QUOTA_PER_WORKSPACE: String(6 * MiB),
    UPLOAD_UNATTACHED_TTL_SECONDS: "3",
    UPLOAD_ABANDONED_TTL_SECONDS: "3",
    UPLOAD_SWEEP_INTERVAL_SECONDS: "1",
  });
  owner = await createUserWithKey(sys, "quotas@example.com");
});
after(async () => {
  await sys?.stop();
  await files?.stop();
});

async function publishedForm(): Promise<string> {
  const res = await owner.api("POST", "/forms", {
    workspaceId: owner.workspace.id,
    name: "Files",
    document: { blocks: [{ id: "f", key: "f", type: "FILE", question: "Files" }] },
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  await sys.cli("form:publish", "--id", res.body.id);
  return res.body.id;
}

async function upload(formId: string, bytes: number) {
  const body = new FormData();
  body.set("file", new Blob([randomBytes(bytes)], { type: "application/octet-stream" }), "file.bin");
  const res = await fetch(`${sys.url}/f/${formId}/uploads`, { method: "POST", body });
  return { status: res.status, body: (await res.json()) as { uploadId: string; error?: string } };
}

async function respond(formId: string, uploadIds: string[], completed: boolean) {
  const res = await fetch(`${sys.url}/f/${formId}/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ answers: { f: uploadIds }, completed }),
  });
  return { status: res.status, body: (await res.json()) as { responseId: string; error?: string } };
}

async function fileLinks(formId: string, responseId: string): Promise<string[]> {
  const sub = await owner.api("GET", `/forms/${formId}/submissions/${responseId}`);
  return (sub.body.answers.f.files as { url: string }[]).map((f) => f.url);
}

describe("storage quotas and sweeping (S3)", () => {
  it("refuses with 413 JSON an upload past the form's quota, then past the workspace's", async () => {
    const first = await publishedForm();
    const kept = await upload(first, 3 * MiB);
    assert.equal(kept.status, 200);
    assert.equal((await respond(first, [kept.body.uploadId], true)).status, 200);
    const tooMuch = await upload(first, 3 * MiB);
    assert.equal(tooMuch.status, 413);
    assert.deepEqual(tooMuch.body, { error: "file: this form's storage quota of 5 MiB is full" });

    const second = await publishedForm();
    const fits = await upload(second, 2 * MiB);
    assert.equal(fits.status, 200);
    assert.equal((await respond(second, [fits.body.uploadId], true)).status, 200);
    // The form would hold 3.5 MiB (it may), the workspace 6.5 MiB (it may not).
    const overWorkspace = await upload(second, 1.5 * MiB);
    assert.equal(overWorkspace.status, 413);
    assert.deepEqual(overWorkspace.body, { error: "file: this workspace's storage quota of 6 MiB is full" });
  });

  it("sweeps unattached uploads and those of abandoned partial responses, objects too; completed ones stay", async () => {
    const formId = await publishedForm();
    const unattached = await upload(formId, 1000);
    const ofPartial = await upload(formId, 1000);
    const ofCompleted = await upload(formId, 1000);
    const partial = await respond(formId, [ofPartial.body.uploadId], false);
    const completed = await respond(formId, [ofCompleted.body.uploadId], true);
    const [partialLink] = await fileLinks(formId, partial.body.responseId);
    const [completedLink] = await fileLinks(formId, completed.body.responseId);
    const partialObject = (await fetch(partialLink)).url;
    assert.equal(new URL(partialObject).origin, files.s3Endpoint);

    await eventuallyPasses(async () => (await fetch(partialLink)).status, (status) => status === 404, 20_000, 250);
    // The sweep deletes the rows, then their objects: the link goes first.
    await eventuallyPasses(async () => (await fetch(partialObject)).status, (status) => status === 404, 20_000, 250);
    const late = await respond(formId, [unattached.body.uploadId], true);
    assert.equal(late.status, 400);
    assert.match(late.body.error!, /is not an upload of this form/);
    const kept = await fetch(completedLink);
    assert.equal(kept.status, 200);
    assert.equal((await kept.arrayBuffer()).byteLength, 1000);
  });
});
