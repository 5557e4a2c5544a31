import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Code, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import type { FormDocument } from "@formsvc/form-document";
import { refusalDomain } from "@formsvc/form-document/response-rules";
import { asCaller } from "@formsvc/platform/caller.ts";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { rejectsWith } from "@formsvc/platform/testing/rpc-assertions.ts";
import { ErrorInfoSchema } from "@formsvc/proto/google/rpc/error_details_pb.js";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { FakeForms } from "../../../forms/src/testing/fake-forms.ts";
import { createCalculatedFieldsPool } from "../calculated-fields-pool.ts";
import { entities } from "../entities/index.ts";
import { createLocalFileStore } from "../files/local-file-store.ts";
import { createSubmissionsHandlers, routes } from "../handlers/submissions-handlers.ts";
import { migrations } from "../migrations/index.ts";
import { codeLifetimeMs, maxCodeAttempts, maxCodesPerAddress } from "./email-verifications.ts";

// Email verification in submissions (issue 31) on a real Postgres, with a clock of the test's own: the code
// mailed through the outbox, a wrong code, expiry, the limit of tries and of mails, the confirmed address
// stored with the response and one completed response per address.

const fakeForms = new FakeForms();
fakeForms.members["ws-ada"] = ["user-ada"];
const document: FormDocument = { title: "Sign-up", blocks: [{ id: "b_name", key: "name", type: "SHORT_TEXT", question: "Name", required: true }] };
let database: TestDatabase;
let orm: MikroORM;
let client: Client<typeof SubmissionsService>;
let clock = Date.parse("2026-11-28T10:00:00Z");
let mailsWritten = 0;
const calculatedFields = createCalculatedFieldsPool();

before(async () => {
  database = await createTestDatabase("email_verifications_test");
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "submissions", entities, migrations });
  const handlers = createSubmissionsHandlers({
    orm,
    forms: fakeForms.client,
    files: createLocalFileStore(`${database.name}-files`),
    calculatedFields,
    now: () => new Date(clock),
    mailWritten: () => mailsWritten++,
  });
  client = createClient(SubmissionsService, createRouterTransport((router) => routes(router, handlers)));
});
after(async () => {
  await calculatedFields.close();
  await orm?.close(true);
  await database?.drop();
});

let forms = 0;
const newForm = (settings: Record<string, unknown> = { requireEmailVerification: true }) =>
  fakeForms.add({ id: `form${++forms}`, workspaceId: "ws-ada", name: "Sign-up", versions: [document], settings: settings as never }).id;

/** The code of the last mail to `to`, read from the outbox the mail worker sends. */
async function mailedCode(to: string): Promise<{ code: string; subject: string }> {
  const rows = (await orm.em.fork().getConnection().execute(`select * from "submissions"."mail_outbox" where "to_address" = ? order by "id" desc limit 1`, [to], "all")) as { subject: string; text: string }[];
  assert.equal(rows.length, 1, `no mail to ${to}`);
  const code = /\b(\d{6})\b/.exec(rows[0].text)?.[1];
  assert.ok(code, rows[0].text);
  return { code, subject: rows[0].subject };
}

/** The refusal's code (google.rpc.ErrorInfo) of a PERMISSION_DENIED. */
async function refusedWith(promise: Promise<unknown>, code: string): Promise<void> {
  const err = await rejectsWith(promise, Code.PermissionDenied);
  const [info] = err.findDetails(ErrorInfoSchema);
  assert.deepEqual([info?.reason, info?.domain], [code, refusalDomain]);
}

const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

describe("email verification", () => {
  it("mails a code; a wrong one is refused, the right one confirms; saves need it and keep the address; one completion per address", async () => {
    const formId = newForm();
    const email = "ada@example.com";
    const started = await client.startEmailVerification({ formId, email });
    assert.match(started.verificationId, /^[A-Za-z0-9]{43}$/);
    assert.equal(mailsWritten, 1, "the mail worker is woken");
    const { code, subject } = await mailedCode(email);
    assert.equal(subject, `Your code for "Sign-up": ${code}`);

    await refusedWith(client.saveResponse({ formId, answers: { name: "Ada" }, completed: true }), "emailRequired");
    await refusedWith(client.saveResponse({ formId, answers: { name: "Ada" }, completed: true, emailVerification: started.verificationId }), "emailRequired");
    await refusedWith(client.confirmEmailVerification({ formId, verificationId: started.verificationId, code: wrongCode(code) }), "emailCodeWrong");
    await refusedWith(client.confirmEmailVerification({ formId: newForm(), verificationId: started.verificationId, code }), "emailRequired");
    const confirmed = await client.confirmEmailVerification({ formId, verificationId: started.verificationId, code: `${code.slice(0, 3)} ${code.slice(3)}` });
    assert.equal(confirmed.email, email);

    // A partial save, then its completion: both keep the address.
    const partial = await client.saveResponse({ formId, answers: { name: "Ad" }, emailVerification: started.verificationId });
    const done = await client.saveResponse({ formId, responseId: partial.responseId, answers: { name: "Ada" }, completed: true, emailVerification: started.verificationId });
    assert.equal(done.completed, true);
    const { submission } = await client.getSubmission({ formId, submissionId: done.responseId }, asCaller("user-ada"));
    assert.equal(submission?.verifiedEmail, email);

    await refusedWith(client.saveResponse({ formId, answers: { name: "Ada again" }, completed: true, emailVerification: started.verificationId }), "emailUsed");
    await refusedWith(client.startEmailVerification({ formId, email: "ADA@example.com" }), "emailUsed");
  });

  it("a code expires, takes a limited number of tries, and an address gets a limited number of mails", async () => {
    const formId = newForm();
    const expiring = await client.startEmailVerification({ formId, email: "eve@example.com" });
    const { code } = await mailedCode("eve@example.com");
    clock += codeLifetimeMs + 1000;
    await refusedWith(client.confirmEmailVerification({ formId, verificationId: expiring.verificationId, code }), "emailCodeExpired");

    const tried = await client.startEmailVerification({ formId, email: "eve@example.com" });
    const fresh = (await mailedCode("eve@example.com")).code;
    for (let i = 1; i < maxCodeAttempts; i++) await refusedWith(client.confirmEmailVerification({ formId, verificationId: tried.verificationId, code: wrongCode(fresh) }), "emailCodeWrong");
    await refusedWith(client.confirmEmailVerification({ formId, verificationId: tried.verificationId, code: wrongCode(fresh) }), "emailCodeAttempts");
    await refusedWith(client.confirmEmailVerification({ formId, verificationId: tried.verificationId, code: fresh }), "emailCodeAttempts");

    // The expired one's mail is past the window; the one tried above is in it.
    for (let i = 1; i < maxCodesPerAddress; i++) await client.startEmailVerification({ formId, email: "eve@example.com" });
    await rejectsWith(client.startEmailVerification({ formId, email: "eve@example.com" }), Code.ResourceExhausted, /too many codes/);
  });

  it("refuses an address that is none, and a form that asks for no verification", async () => {
    await rejectsWith(client.startEmailVerification({ formId: newForm(), email: "not an address" }), Code.InvalidArgument, "email: must be an email address");
    await rejectsWith(client.startEmailVerification({ formId: newForm({}), email: "ada@example.com" }), Code.FailedPrecondition, /does not ask/);
    await rejectsWith(client.startEmailVerification({ formId: "nosuchform", email: "ada@example.com" }), Code.NotFound);
  });
});
