import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import type { Browser, Page } from "playwright-core";
import { ensureAppBuilt } from "@formsvc/launcher/app-build.ts";
import { createServiceClient } from "@formsvc/platform/rpc.ts";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { appClient } from "./support/app-client.ts";
import { launchBrowser, screenshot, watchPage, signedInContext } from "./support/browser.ts";
import { mailedFileLinkToken } from "./support/mail-files.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { startReceiver } from "./support/receiver.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";

// The Trash's Delete forever, Duplicate and templates against the whole running system (files in the
// local store under DATA_DIR): a form with responses, partial ones and files goes to the Trash, the
// preview counts what goes, the purge deletes it from the database and the file store, and the app does
// the same in Chromium (screenshots trash-purge, form-duplicate, templates). The form's webhooks and
// their deliveries (which keep the payloads sent) go too.

let sys: TestSystem;
let browser: Browser;
let db: pg.Client;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

before(async () => {
  ensureAppBuilt(undefined, { quiet: true });
  receiver = await startReceiver();
  [sys, browser] = await Promise.all([startTestSystem("form_trash", { WEBHOOK_ALLOW_PRIVATE_URLS: "true" }), launchBrowser()]);
  db = new pg.Client({ connectionString: sys.databaseUrl });
  await db.connect();
});
after(async () => {
  await db?.end();
  await browser?.close();
  await sys?.stop();
  await receiver?.close();
});

const unique = (label: string) => `${label}.${Date.now()}.${Math.random().toString(36).slice(2, 8)}@example.com`;

/** Someone signed up in their own browser, with their personal workspace. */
async function person(label: string) {
  const email = unique(label);
  const { call, cookies } = appClient(sys.url);
  await call("GET", "/session");
  const signedUp = await call("POST", "/auth/signup", { email, name: label, password: `${label} keeps a long passphrase` });
  assert.equal(signedUp.status, 201, JSON.stringify(signedUp.body));
  const workspace = (await call("GET", "/workspaces")).body.items[0];
  return { email, call, cookies, workspace };
}
type Person = Awaited<ReturnType<typeof person>>;

const document = {
  title: "Applications",
  blocks: [
    { id: "name", key: "name", type: "SHORT_TEXT", question: "Your name", required: true },
    { id: "cv", key: "cv", type: "FILE", question: "Your CV" },
  ],
};

async function upload(formId: string, bytes: number): Promise<string> {
  const body = new FormData();
  body.set("file", new Blob([randomBytes(bytes)], { type: "application/pdf" }), "cv.pdf");
  const res = await fetch(`${sys.url}/f/${formId}/uploads`, { method: "POST", body });
  const answer = (await res.json()) as { uploadId: string };
  assert.equal(res.status, 200, JSON.stringify(answer));
  return answer.uploadId;
}

async function respond(formId: string, answers: object, completed: boolean): Promise<string> {
  const res = await fetch(`${sys.url}/f/${formId}/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ answers, completed }),
  });
  const answer = (await res.json()) as { responseId: string };
  assert.equal(res.status, 200, JSON.stringify(answer));
  return answer.responseId;
}

/**
 * A published form of `owner`'s workspace with `completed` responses each with a file of 1,000 bytes, one
 * partial response with a file of 500 bytes, and one upload nobody attached (300 bytes).
 */
async function formWithResponses(owner: Person, workspaceId: string, name: string, completed: number, options: { webhook?: boolean } = {}) {
  const created = await owner.call("POST", "/forms", { workspaceId, name, document });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const formId: string = created.body.id;
  if (options.webhook) assert.equal((await owner.call("POST", `/forms/${formId}/webhooks`, { url: receiver.url })).status, 201);
  assert.equal((await owner.call("POST", `/forms/${formId}/publish`)).status, 200);
  const uploadIds: string[] = [];
  const responseIds: string[] = [];
  for (let i = 0; i < completed; i++) {
    const cv = await upload(formId, 1000);
    uploadIds.push(cv);
    responseIds.push(await respond(formId, { name: `Applicant ${i}`, cv: [cv] }, true));
  }
  const partialCv = await upload(formId, 500);
  uploadIds.push(partialCv);
  responseIds.push(await respond(formId, { name: "Still typing", cv: [partialCv] }, false));
  uploadIds.push(await upload(formId, 300));
  return { formId, uploadIds, responseIds, bytes: completed * 1000 + 500 + 300 };
}

const filesDir = () => join(sys.env.DATA_DIR, "files");
const rows = async (sql: string, formId: string) => Number((await db.query(sql, [formId])).rows[0].count);

describe("deleting a form in the Trash for good", () => {
  let owner: Person;
  let member: Person;
  let stranger: Person;
  let teamId: string;

  before(async () => {
    [owner, member, stranger] = await Promise.all([person("owner"), person("member"), person("stranger")]);
    const team = await owner.call("POST", "/workspaces", { name: "Hiring" });
    assert.equal(team.status, 201, JSON.stringify(team.body));
    teamId = team.body.id;
    // The member is invited and accepts by the mailed link, signed in (written under DATA_DIR/mail).
    assert.equal((await owner.call("POST", `/workspaces/${teamId}/invites`, { email: member.email, role: "member" })).status, 201);
    const accepted = await member.call("POST", "/invitations/accept", { token: await mailedFileLinkToken(sys.env.DATA_DIR, member.email, "/app/accept-invite") });
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
  });

  it("counts what goes, refuses outside the Trash and without the role, then deletes responses, partials and files", async () => {
    const { formId, uploadIds, responseIds, bytes } = await formWithResponses(owner, teamId, "Applications 2027", 3, { webhook: true });
    const deliveries = `select count(*) from delivery.deliveries where form_id = $1`;
    await eventuallyPasses(() => rows(deliveries, formId), (n) => n === 3, 30_000, 100);
    const completedId = responseIds[0];
    const { body: submission } = await owner.call("GET", `/forms/${formId}/submissions/${completedId}`);
    const fileLink: string = submission.submission.answers.cv.files[0].url;
    assert.equal((await fetch(fileLink)).status, 200, "the file is served before");
    for (const id of uploadIds) assert.ok(existsSync(join(filesDir(), id)), `upload ${id} is in the file store`);

    const notInTrash = await owner.call("DELETE", `/forms/${formId}/purge`);
    assert.deepEqual([notInTrash.status, notInTrash.body], [409, { error: "only a form in the Trash can be deleted for good; move it to the Trash first" }]);
    assert.equal((await owner.call("GET", `/forms/${formId}/purge-preview`)).status, 409);

    assert.equal((await owner.call("POST", `/forms/${formId}/trash`)).status, 204);
    const expected = { responses: 3, partials: 1, files: 5, bytes };
    const preview = await owner.call("GET", `/forms/${formId}/purge-preview`);
    assert.deepEqual([preview.status, preview.body], [200, expected]);

    for (const [who, status] of [[member, 403], [stranger, 404]] as const) {
      assert.equal((await who.call("GET", `/forms/${formId}/purge-preview`)).status, status);
      const refused = await who.call("DELETE", `/forms/${formId}/purge`);
      assert.equal(refused.status, status, JSON.stringify(refused.body));
    }
    assert.match((await member.call("DELETE", `/forms/${formId}/purge`)).body.error, /owner or an admin/);
    assert.equal(await rows(`select count(*) from submissions.responses where form_id = $1`, formId), 4, "the refusals deleted nothing");

    const purged = await owner.call("DELETE", `/forms/${formId}/purge`);
    assert.deepEqual([purged.status, purged.body], [200, expected]);

    assert.equal(await rows(`select count(*) from submissions.responses where form_id = $1`, formId), 0);
    assert.equal(await rows(`select count(*) from submissions.uploads where form_id = $1`, formId), 0);
    assert.equal(await rows(`select count(*) from forms.forms where id = $1`, formId), 0);
    assert.equal(await rows(`select count(*) from forms.form_versions where form_id = $1`, formId), 0);
    assert.equal(await rows(`select count(*) from webhooks.webhooks where form_id = $1`, formId), 0);
    assert.equal(await rows(deliveries, formId), 0, "the deliveries, with the payloads they sent");
    assert.equal(await rows(`select count(*) from delivery.attempts a join delivery.deliveries d on d.id = a.delivery_id where d.form_id = $1`, formId), 0);
    for (const id of uploadIds) assert.equal(existsSync(join(filesDir(), id)), false, `upload ${id} is gone from the file store`);
    assert.equal((await fetch(fileLink)).status, 404, "the signed link finds nothing");

    assert.equal((await owner.call("GET", `/forms/${formId}`)).status, 404);
    assert.equal((await owner.call("GET", `/forms/${formId}/submissions/${completedId}`)).status, 404);
    assert.equal((await owner.call("POST", `/forms/${formId}/restore`)).status, 404);
    assert.equal((await owner.call("DELETE", `/forms/${formId}/purge`)).status, 404);
    const trash = await owner.call("GET", `/forms?trashed=true&workspaceId=${teamId}`);
    assert.ok(!trash.body.items.some((f: { id: string }) => f.id === formId), "no longer in the Trash");

    const key = await owner.call("POST", "/api-keys", { name: "purge check" });
    assert.equal(key.status, 201);
    const viaApi = await fetch(`${sys.url}/api/v1/forms/${formId}`, { headers: { authorization: `Bearer ${key.body.key}` } });
    assert.equal(viaApi.status, 404);
    const submissionsViaApi = await fetch(`${sys.url}/api/v1/forms/${formId}/submissions`, { headers: { authorization: `Bearer ${key.body.key}` } });
    assert.equal(submissionsViaApi.status, 404);
  });

  it("a purge cut short after the responses went leaves the form in the Trash, to be purged again", async () => {
    const { formId, uploadIds } = await formWithResponses(owner, teamId, "Half purged", 2);
    assert.equal((await owner.call("POST", `/forms/${formId}/trash`)).status, 204);
    // What forms asks of submissions first, as if forms died right after it.
    const submissions = createServiceClient(SubmissionsService, sys.env.SUBMISSIONS_URL);
    const first = await submissions.deleteFormResponses({ formId });
    assert.deepEqual([first.deleted?.responses, first.deleted?.partials, first.deleted?.files], [2n, 1n, 4n]);
    for (const id of uploadIds) assert.equal(existsSync(join(filesDir(), id)), false);

    const trash = await owner.call("GET", `/forms?trashed=true&workspaceId=${teamId}`);
    assert.ok(trash.body.items.some((f: { id: string }) => f.id === formId), "still in the Trash");
    assert.deepEqual((await owner.call("GET", `/forms/${formId}/purge-preview`)).body, { responses: 0, partials: 0, files: 0, bytes: 0 });
    const purged = await owner.call("DELETE", `/forms/${formId}/purge`);
    assert.deepEqual([purged.status, purged.body], [200, { responses: 0, partials: 0, files: 0, bytes: 0 }]);
    assert.equal(await rows(`select count(*) from forms.forms where id = $1`, formId), 0);
  });
});

describe("the Trash, Duplicate and templates in Chromium", () => {
  let owner: Person;
  let page: Page;
  let problems: string[];

  before(async () => {
    owner = await person("chromium");
    const context = await signedInContext(browser, sys.url, owner.cookies, { viewport: { width: 1200, height: 850 } });
    page = await context.newPage();
    problems = watchPage(page, []);
  });

  it("Delete forever names the counts and takes the form's name typed", async () => {
    const { formId } = await formWithResponses(owner, owner.workspace.id, "Spring hiring", 3);
    assert.equal((await owner.call("POST", `/forms/${formId}/trash`)).status, 204);

    await page.goto(`${sys.url}/app/trash`);
    await page.getByRole("button", { name: "Delete Spring hiring forever" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete “Spring hiring” forever?" });
    await dialog.getByText("Delete forever: 3 responses, 1 partial response and 5 files.").waitFor();
    const confirm = dialog.getByRole("button", { name: "Delete forever" });
    assert.equal(await confirm.isDisabled(), true, "disabled until the name is typed");
    await dialog.getByLabel("Type Spring hiring to confirm").fill("Spring hirin");
    assert.equal(await confirm.isDisabled(), true);
    await dialog.getByLabel("Type Spring hiring to confirm").fill("Spring hiring");
    assert.equal(await confirm.isDisabled(), false);
    await screenshot(page, "trash-purge");
    await confirm.click();

    await page.getByText("“Spring hiring” is deleted for good, with 3 responses, 1 partial response and 5 files.").waitFor();
    await page.getByText("The Trash is empty").waitFor();
    assert.equal(await rows(`select count(*) from submissions.responses where form_id = $1`, formId), 0);
    assert.equal(await rows(`select count(*) from forms.forms where id = $1`, formId), 0);
    assert.deepEqual(problems, []);
  });

  it("Duplicate makes a draft copy with the same document and settings, from the list and from the form", async () => {
    const created = await owner.call("POST", "/forms", { workspaceId: owner.workspace.id, name: "Team lunch", document });
    const sourceId: string = created.body.id;
    assert.equal((await owner.call("PATCH", `/forms/${sourceId}`, { settings: { submitLabel: "Count me in", responseLimit: 12 } })).status, 200);
    assert.equal((await owner.call("POST", `/forms/${sourceId}/publish`)).status, 200);
    await respond(sourceId, { name: "Ada" }, true);

    await page.goto(`${sys.url}/app/forms`);
    await page.getByRole("button", { name: "Duplicate Team lunch" }).click();
    await page.getByText("“Team lunch (copy)” is created as a draft.").waitFor();
    const copyRow = page.getByRole("row", { name: /Team lunch \(copy\)/ });
    await copyRow.waitFor();
    await screenshot(page, "form-duplicate");

    const list = (await owner.call("GET", `/forms?workspaceId=${owner.workspace.id}`)).body.items as { id: string; name: string }[];
    const copyId = list.find((f) => f.name === "Team lunch (copy)")!.id;
    const [source, copy] = [(await owner.call("GET", `/forms/${sourceId}`)).body, (await owner.call("GET", `/forms/${copyId}`)).body];
    assert.notEqual(copy.id, source.id);
    assert.deepEqual([copy.status, copy.version, copy.responseCount], ["draft", 1, 0]);
    assert.deepEqual(copy.document, source.document, "same blocks, ids and keys");
    assert.deepEqual(copy.settings, source.settings);
    assert.equal(copy.settings.submitLabel, "Count me in");

    await page.goto(`${sys.url}/app/forms/${copyId}/edit`);
    await page.getByRole("button", { name: "Duplicate", exact: true }).click();
    await page.waitForURL((url) => url.pathname.endsWith("/edit") && !url.pathname.includes(copyId));
    await page.getByRole("heading", { name: "Team lunch (copy) (copy)" }).waitFor();
    assert.deepEqual(problems, []);
  });

  it("New form offers blank or a template; the job application comes with its file upload", async () => {
    await page.goto(`${sys.url}/app/forms`);
    await page.getByRole("button", { name: "New form" }).first().click();
    const dialog = page.getByRole("dialog", { name: "New form" });
    for (const name of ["Blank form", "Contact us", "Event sign-up", "Feedback", "Job application"]) {
      await dialog.getByRole("button", { name: new RegExp(`^${name}`) }).waitFor();
    }
    await screenshot(page, "templates");
    await dialog.getByRole("button", { name: /^Job application/ }).click();
    await page.waitForURL(/\/app\/forms\/[^/]+\/edit$/);
    await page.getByRole("heading", { name: "Job application" }).waitFor();
    const formId = /\/forms\/([^/]+)\/edit/.exec(page.url())![1];
    const form = (await owner.call("GET", `/forms/${formId}`)).body;
    assert.equal(form.status, "draft");
    const cv = form.document.blocks.find((b: { key?: string }) => b.key === "q_cv");
    assert.deepEqual([cv.type, cv.required], ["FILE", true]);
    assert.deepEqual(problems, []);
  });
});
