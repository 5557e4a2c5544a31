import assert from "node:assert/strict";
import { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { idempotentRequests } from "../gateway/src/idempotency.ts";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { create, type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import express from "express";
import type { Browser, Page, Response } from "playwright-core";
import { normalizeDocument } from "@formsvc/form-document";
import { createLogger } from "@formsvc/platform/logger.ts";
import { receiveUpload } from "@formsvc/platform/upload-stream.ts";
import { FormSchema, FormStatus, FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { BadRequestSchema } from "@formsvc/proto/google/rpc/error_details_pb.js";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { errorHandler } from "../gateway/src/http-errors.ts";
import { hostedFormRoutes } from "../gateway/src/hosted/routes.ts";
import { MemorySlidingWindow } from "../gateway/src/rate-limit/sliding-window.ts";
import { drawSignature, launchBrowser, screenshot } from "./support/browser.ts";
import { fileStores, type FileStoreSetup } from "./support/file-stores.ts";
import { createUserWithKey, startTestSystem, type TestSystem } from "./support/system.ts";

// A respondent in Chromium: the hosted form page, its script, partial saves and resuming, uploads and
// the signature pad. First over fake services (the page's behaviour alone), then against the whole
// running system, read back over /api/v1 as the form's owner would.

/** The form of both parts: two pages, a file, a signature and a hidden field. */
const twoPages = {
  title: "Conference sign-up",
  blocks: [
    { type: "HEADING", text: "About you" },
    { type: "SHORT_TEXT", key: "full_name", question: "Your full name", required: true },
    { type: "EMAIL", key: "email", question: "Email address" },
    { type: "MULTIPLE_CHOICE", key: "ticket", question: "Ticket", options: [{ id: "o_std", text: "Standard" }, { id: "o_vip", text: "VIP" }] },
    { type: "PAGE_BREAK" },
    { type: "FILE", key: "cv", question: "Upload your CV" },
    { type: "SIGNATURE", key: "signature", question: "Sign here" },
    { type: "LONG_TEXT", key: "notes", question: "Anything else?" },
  ],
  hiddenFields: [{ name: "utm_source" }],
};

const cvBytes = Buffer.from("Ada Lovelace, CV\nAnalytical Engine programmer.\n");
const pngMagic = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

let browser: Browser;
before(async () => {
  browser = await launchBrowser();
});
after(() => browser?.close());

/** Resolves with the next POST to an URL ending in `suffix`. */
function nextPost(page: Page, suffix: string): Promise<Response> {
  return page.waitForResponse((res) => res.request().method() === "POST" && new URL(res.url()).pathname.endsWith(suffix));
}

/** Draws a zigzag on the signature pad with the mouse. */
/** The text of a question's error line. */
const errorOf = (page: Page, key: string) => page.locator(`[data-key="${key}"] .hf-error`).textContent();

// ---- part one: the page over fake services -------------------------------------------------------

interface FakeResponse {
  answers: Record<string, unknown>;
  hidden: Record<string, string>;
  completed: boolean;
  version: number;
}

/** Submissions' refusal of an answer: the problem in the message, and by the answer's key in a BadRequest detail. */
function invalidAnswer(key: string, problem: string): ConnectError {
  return new ConnectError(`answers.${key}: ${problem}`, Code.InvalidArgument, undefined, [
    { desc: BadRequestSchema, value: { fieldViolations: [{ field: key, description: problem }] } },
  ]);
}

function fakeSystem() {
  const forms: Record<string, { document: JsonObject; settings?: JsonObject }> = {
    two: { document: normalizeDocument(twoPages as never).document as unknown as JsonObject },
    simple: {
      document: normalizeDocument({
        title: "Quick poll",
        blocks: [
          { type: "SHORT_TEXT", key: "name", question: "Name", required: true },
          { type: "MULTIPLE_CHOICE", key: "plan", question: "Plan", options: [{ id: "free", text: "Free" }, { id: "pro", text: "Pro" }] },
          { type: "CHECKBOXES", key: "tags", question: "Tags", options: [{ id: "a", text: "Alpha" }, { id: "b", text: "Beta" }] },
          { type: "NUMBER", key: "age", question: "Age" },
        ],
        hiddenFields: [{ name: "ref" }],
      }).document as unknown as JsonObject,
    },
  };
  const responses = new Map<string, FakeResponse>();
  const uploads = new Map<string, { name: string; contentType: string; content: Buffer }>();
  const requests: { responseId: string; completed: boolean }[] = [];
  const transport = createRouterTransport((router) => {
    router.service(FormsService, {
      getPublicForm: (req) => {
        const form = forms[req.id];
        if (!form) throw new ConnectError("form not found", Code.NotFound);
        return {
          form: create(FormSchema, { id: req.id, name: req.id, status: FormStatus.PUBLISHED, version: 2, document: form.document, settings: form.settings ?? {} }),
          showBranding: true,
        };
      },
    });
    router.service(SubmissionsService, {
      saveResponse: (req) => {
        requests.push({ responseId: req.responseId, completed: req.completed });
        if (req.answers?.email === "taken@example.com") throw invalidAnswer("email", "this address has already answered");
        const id = req.responseId || `resp${responses.size + 1}`;
        const existing = responses.get(id);
        if (req.responseId && !existing) throw new ConnectError("response not found", Code.NotFound);
        const next: FakeResponse = {
          answers: { ...existing?.answers, ...req.answers },
          hidden: { ...existing?.hidden, ...req.hidden },
          completed: req.completed,
          version: req.version,
        };
        if (req.completed && !next.answers.full_name && req.formId === "two") throw invalidAnswer("full_name", "is required");
        responses.set(id, next);
        return { responseId: id, completed: req.completed };
      },
      createUpload: async (requests) => {
        const req = await receiveUpload(requests);
        const id = `up${uploads.size + 1}`;
        uploads.set(id, { name: req.name, contentType: req.contentType, content: Buffer.from(req.content) });
        return { uploadId: id, name: req.name, size: BigInt(req.content.length), contentType: req.contentType };
      },
    });
  });
  const store = new MemorySlidingWindow();
  const app = express();
  app.use(
    "/f",
    hostedFormRoutes({
      logger: createLogger("hosted-browser-test", "silent"),
      forms: createClient(FormsService, transport),
      submissions: createClient(SubmissionsService, transport),
      // No request here sends an Idempotency-Key.
      idempotency: idempotentRequests(createClient(IdentityService, createRouterTransport(() => {})), "test-secret"),
      rateLimits: { store, perIp: 10_000 },
      brandingUrl: "http://localhost:8080/app/signup",
    }),
  );
  app.use(errorHandler(createLogger("hosted-browser-test", "silent")));
  return { app, store, responses, uploads, requests };
}

describe("the hosted form page in Chromium, over fake services", () => {
  const fake = fakeSystem();
  let base = "";
  let server: ReturnType<express.Express["listen"]>;
  before(async () => {
    server = fake.app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.close();
    await fake.store.close();
  });

  it("checks a page before leaving it, saves progress, resumes, uploads, signs and submits", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("pageerror", (err) => problems.push(err.message));
    page.on("console", (msg) => msg.type() === "error" && problems.push(msg.text()));
    await page.goto(`${base}/f/two?utm_source=newsletter`);

    assert.equal(await page.getByRole("heading", { level: 1 }).textContent(), "Conference sign-up");
    assert.equal(await page.locator("#hf-progress-label").textContent(), "Page 1 of 2");
    assert.equal(await page.getByLabel("Upload your CV").isVisible(), false, "one page at a time");
    assert.equal(await page.getByRole("button", { name: "Submit" }).isVisible(), false);

    // A required question left empty: the page stays, the problem is announced next to it.
    await page.getByRole("button", { name: "Next" }).click();
    assert.equal(await errorOf(page, "full_name"), "This question is required.");
    assert.equal(await page.getByLabel("Your full name").getAttribute("aria-invalid"), "true");
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("name")), "full_name", "focus moves to the question");
    await page.getByLabel("Email address").fill("not an email");
    await page.getByLabel("Your full name").fill("Ada Lovelace");
    await page.getByRole("button", { name: "Next" }).click();
    assert.equal(await errorOf(page, "email"), "Enter a valid email address.");
    assert.equal(fake.requests.length, 0, "nothing is sent while the page has problems");

    await page.getByLabel("Email address").fill("ada@example.com");
    await page.getByLabel("VIP").check();
    const saved = nextPost(page, "/responses");
    await page.getByRole("button", { name: "Next" }).click();
    const partial = await (await saved).json();
    assert.equal(partial.completed, false);
    await page.getByLabel("Upload your CV").waitFor({ state: "visible" });
    assert.equal(await page.locator("#hf-progress-label").textContent(), "Page 2 of 2");
    const stored = fake.responses.get(partial.responseId)!;
    assert.deepEqual(stored.answers, { full_name: "Ada Lovelace", email: "ada@example.com", ticket: "o_vip" });
    assert.deepEqual(stored.hidden, { utm_source: "newsletter" });
    assert.equal(stored.version, 2);
    await page.close();

    // Back later in the same browser, without the link's query string: the same response, on page one.
    const again = await context.newPage();
    again.on("pageerror", (err) => problems.push(err.message));
    await again.goto(`${base}/f/two`);
    assert.equal(await again.getByLabel("Your full name").inputValue(), "Ada Lovelace");
    assert.equal(await again.getByLabel("Email address").inputValue(), "ada@example.com");
    assert.equal(await again.getByLabel("VIP").isChecked(), true);
    assert.equal(await again.locator("#hf-resume").isVisible(), true);
    const resaved = nextPost(again, "/responses");
    await again.getByRole("button", { name: "Next" }).click();
    assert.equal(JSON.parse((await resaved).request().postData()!).responseId, partial.responseId);

    const uploaded = nextPost(again, "/uploads");
    await again.getByLabel("Upload your CV").setInputFiles({ name: "cv.txt", mimeType: "text/plain", buffer: cvBytes });
    const cv = await (await uploaded).json();
    await again.getByText("cv.txt", { exact: false }).waitFor();
    await drawSignature(again);
    await again.getByLabel("Anything else?").fill("See you there.");
    await screenshot(again, "hosted-fake-page-2");

    const submitted = nextPost(again, "/responses");
    await again.getByRole("button", { name: "Submit" }).click();
    const done = await (await submitted).json();
    assert.deepEqual(done, { responseId: partial.responseId, completed: true });
    await again.getByRole("heading", { name: "Thank you!" }).waitFor();
    await screenshot(again, "hosted-fake-thanks");

    const final = fake.responses.get(partial.responseId)!;
    assert.equal(final.completed, true);
    assert.equal(final.answers.notes, "See you there.");
    assert.deepEqual(final.answers.cv, [cv.uploadId]);
    assert.deepEqual(fake.uploads.get(cv.uploadId)?.content, cvBytes);
    const signatureId = (final.answers.signature as string[])[0];
    const signature = fake.uploads.get(signatureId)!;
    assert.equal(signature.contentType, "image/png");
    assert.deepEqual([...signature.content.subarray(0, 8)], pngMagic);
    assert.deepEqual(final.hidden, { utm_source: "newsletter" });
    assert.equal(await again.evaluate(() => localStorage.length), 0, "a finished response is forgotten");
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("shows the server's problem next to the question it names, and signs with the keyboard", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${base}/f/two`);
    await page.getByLabel("Your full name").fill("Grace Hopper");
    await page.getByLabel("Email address").fill("taken@example.com");
    await page.getByRole("button", { name: "Next" }).click();
    await page.locator('[data-key="email"] .hf-error:not(:empty)').waitFor();
    assert.equal(await errorOf(page, "email"), "This address has already answered");
    assert.equal(await page.getByLabel("Upload your CV").isVisible(), false, "the page stays");

    await page.getByLabel("Email address").fill("grace@example.com");
    await page.getByRole("button", { name: "Next" }).click();
    await page.getByLabel("Or type your name to sign instead").waitFor({ state: "visible" });
    await page.getByLabel("Or type your name to sign instead").focus();
    await page.keyboard.type("Grace Hopper");
    const submitted = nextPost(page, "/responses");
    await page.keyboard.press("Tab");
    await page.getByRole("button", { name: "Submit" }).press("Enter");
    const done = await (await submitted).json();
    assert.equal(done.completed, true);
    const signatureId = (fake.responses.get(done.responseId)!.answers.signature as string[])[0];
    assert.deepEqual([...fake.uploads.get(signatureId)!.content.subarray(0, 8)], pngMagic);
    await context.close();
  });

  it("fits a phone's screen", async () => {
    const context = await browser.newContext({ viewport: { width: 360, height: 740 }, deviceScaleFactor: 2, hasTouch: true });
    const page = await context.newPage();
    await page.goto(`${base}/f/two`);
    const widths = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
    assert.ok(widths[0] <= widths[1], `no sideways scrolling (${widths[0]} > ${widths[1]})`);
    const field = await page.getByLabel("Your full name").boundingBox();
    assert.ok(field && field.width > 280, "inputs use the width there is");
    await screenshot(page, "hosted-fake-phone");
    await context.close();
  });

  it("works as a plain HTML form without JavaScript", async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    const before = fake.requests.length;
    await page.goto(`${base}/f/simple?ref=poster`);
    // The browser's own checks stand in for the script's (the server checks again, see routes.test.ts).
    await page.getByRole("button", { name: "Submit" }).click();
    assert.equal(await page.getByLabel("Name").evaluate((el) => (el as HTMLInputElement).validity.valueMissing), true);
    assert.equal(fake.requests.length, before, "an empty required question keeps the form from being sent");
    await page.getByLabel("Name").fill("Alan");
    await page.getByLabel("Pro").check();
    await page.getByLabel("Alpha").check();
    await page.getByLabel("Beta").check();
    await page.getByLabel("Age", { exact: true }).fill("41");
    await page.getByRole("button", { name: "Submit" }).click();
    await page.getByRole("heading", { name: "Thank you!" }).waitFor();
    const last = [...fake.responses.values()].at(-1)!;
    assert.deepEqual(last.answers, { name: "Alan", plan: "pro", tags: ["a", "b"], age: 41 });
    assert.deepEqual(last.hidden, { ref: "poster" });
    assert.equal(last.completed, true);
    await context.close();
  });
});

// ---- part two: the whole system ------------------------------------------------------------------

// Once with files in the local directory, once in a real S3-compatible server (S3Mock).
for (const store of ["local", "s3"] as const) describe(`hosted forms end to end (files: ${store})`, () => {
  let sys: TestSystem;
  let files: FileStoreSetup;
  let owner: Awaited<ReturnType<typeof createUserWithKey>>;
  before(async () => {
    files = await fileStores[store]();
    sys = await startTestSystem(`hosted_${store}`, files.env);
    owner = await createUserWithKey(sys, "owner@example.com");
  });
  after(async () => {
    await sys?.stop();
    await files?.stop();
  });

  it("a respondent leaves after page one, comes back, uploads, signs and submits; the owner reads and deletes it", async () => {
    const created = await owner.api("POST", "/forms", { workspaceId: owner.workspace.id, name: "Conference", document: twoPages });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const formId: string = created.body.id;
    const draftPage = await fetch(`${sys.url}/f/${formId}`);
    assert.equal(draftPage.status, 404, "drafts are not shown");
    assert.match(await draftPage.text(), /Form not found/);
    await sys.cli("form:publish", "--id", formId);

    const definition = await fetch(`${sys.url}/f/${formId}/definition`).then((r) => r.json());
    assert.equal(definition.formId, formId);
    assert.deepEqual(
      definition.document.blocks.filter((b: { key?: string }) => b.key).map((b: { key: string }) => b.key),
      ["full_name", "email", "ticket", "cv", "signature", "notes"],
    );

    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${sys.url}/f/${formId}?utm_source=newsletter`);
    await page.getByLabel("Your full name").fill("Ada Lovelace");
    await page.getByLabel("Email address").fill("ada@example.com");
    await page.getByLabel("VIP").check();
    await screenshot(page, "hosted-e2e-page-1");
    const saved = nextPost(page, "/responses");
    await page.getByRole("button", { name: "Next" }).click();
    const partial = await saved;
    assert.equal(partial.status(), 200, await partial.text());
    const { responseId } = await partial.json();
    await page.getByLabel("Upload your CV").waitFor({ state: "visible" });
    await page.close();

    const partials = await owner.api("GET", `/forms/${formId}/submissions?filter=partial`);
    assert.equal(partials.status, 200);
    assert.deepEqual(partials.body.items.map((s: { id: string }) => s.id), [responseId]);
    assert.equal(partials.body.items[0].completed, false);
    assert.equal(partials.body.items[0].answers.full_name.value, "Ada Lovelace");
    assert.equal((await owner.api("GET", `/forms/${formId}/submissions?filter=completed`)).body.items.length, 0);

    // The same browser, later: page one again, filled in.
    const again = await context.newPage();
    await again.goto(`${sys.url}/f/${formId}`);
    assert.equal(await again.getByLabel("Your full name").inputValue(), "Ada Lovelace");
    assert.equal(await again.getByLabel("Email address").inputValue(), "ada@example.com");
    assert.equal(await again.getByLabel("VIP").isChecked(), true);
    assert.equal(await again.getByLabel("Upload your CV").isVisible(), false, "resumes on page one");
    await screenshot(again, "hosted-e2e-resumed");
    await again.getByRole("button", { name: "Next" }).click();
    await again.getByLabel("Upload your CV").waitFor({ state: "visible" });

    const uploaded = nextPost(again, "/uploads");
    await again.getByLabel("Upload your CV").setInputFiles({ name: "cv.txt", mimeType: "text/plain", buffer: cvBytes });
    const upload = await uploaded;
    assert.equal(upload.status(), 200, await upload.text());
    await drawSignature(again);
    await again.getByLabel("Anything else?").fill("Vegetarian lunch, please.");
    await screenshot(again, "hosted-e2e-page-2");
    const submitted = nextPost(again, "/responses");
    await again.getByRole("button", { name: "Submit" }).click();
    const done = await submitted;
    assert.equal(done.status(), 200, await done.text());
    assert.deepEqual(await done.json(), { responseId, completed: true });
    await again.getByRole("heading", { name: "Thank you!" }).waitFor();
    await screenshot(again, "hosted-e2e-thanks");
    await context.close();

    const completed = await owner.api("GET", `/forms/${formId}/submissions?filter=completed`);
    assert.deepEqual(completed.body.items.map((s: { id: string }) => s.id), [responseId], "one response, the resumed one");
    assert.equal((await owner.api("GET", `/forms/${formId}/submissions?filter=partial`)).body.items.length, 0);
    const sub = (await owner.api("GET", `/forms/${formId}/submissions/${responseId}`)).body;
    assert.equal(sub.completed, true);
    assert.equal(sub.answers.full_name.value, "Ada Lovelace");
    assert.equal(sub.answers.email.value, "ada@example.com");
    assert.equal(sub.answers.ticket.value, "o_vip");
    assert.equal(sub.answers.notes.value, "Vegetarian lunch, please.");
    assert.equal(sub.answers["hidden:utm_source"].value, "newsletter");

    assert.equal(sub.answers.cv.files.length, 1);
    assert.equal(sub.answers.cv.files[0].name, "cv.txt");
    const cvUrl = new URL(sub.answers.cv.files[0].url, sys.url).href;
    const cvFile = await fetch(cvUrl);
    assert.equal(cvFile.status, 200);
    // S3: the browser is sent to the object store, which serves the file as an attachment.
    if (files.s3Endpoint) assert.equal(new URL(cvFile.url).origin, files.s3Endpoint);
    assert.deepEqual(Buffer.from(await cvFile.arrayBuffer()), cvBytes);
    assert.equal(sub.answers.signature.files.length, 1);
    const signatureUrl = new URL(sub.answers.signature.files[0].url, sys.url).href;
    const signature = await fetch(signatureUrl);
    assert.equal(signature.status, 200);
    assert.deepEqual([...new Uint8Array(await signature.arrayBuffer()).subarray(0, 8)], pngMagic);

    const deleted = await owner.api("DELETE", `/forms/${formId}/submissions/${responseId}`);
    assert.equal(deleted.status, 204);
    for (const url of [cvUrl, signatureUrl]) {
      assert.ok([404, 410].includes((await fetch(url)).status), `${url} is gone`);
    }

    // Closed: the page says so and takes nothing.
    await sys.cli("form:close", "--id", formId);
    const closedPage = await fetch(`${sys.url}/f/${formId}`);
    assert.equal(closedPage.status, 200);
    const closedHtml = await closedPage.text();
    assert.match(closedHtml, /This form is closed\./);
    assert.doesNotMatch(closedHtml, /<input\b/);
  });
});
