import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { startSmtpSink, type ReceivedMail, type SmtpSink } from "./support/smtp.ts";
import { createUserWithKey, startTestSystem, type TestSystem } from "./support/system.ts";

// Notifications of completed responses and respondent receipts, through a real SMTP server on loopback:
// one mail per completed response to the owner and the chosen members, a receipt to the respondent's
// EMAIL answer, and nothing for partial saves, for forms without the setting, or for addresses that
// are not the workspace's members.

let sys: TestSystem;
let smtp: SmtpSink;

before(async () => {
  smtp = await startSmtpSink();
  sys = await startTestSystem("notifications", { SMTP_URL: smtp.url, MAIL_FROM: "Forms <forms@example.com>", PUBLIC_URL: "http://forms.example.com" });
});
after(async () => {
  await sys?.stop();
  await smtp?.close();
});

const unique = (local: string) => `${local}.${Date.now()}.${Math.random().toString(36).slice(2, 8)}@example.com`;

const blocks = [
  { id: "name", key: "name", type: "SHORT_TEXT", question: "Your name" },
  { id: "plan", key: "plan", type: "MULTIPLE_CHOICE", question: "Plan", options: [{ id: "pro", text: "Pro <yearly>" }, { id: "free", text: "Free" }] },
  { id: "page2", type: "PAGE_BREAK" },
  { id: "email", key: "email", type: "EMAIL", question: "Your email" },
];

async function respond(formId: string, body: object): Promise<{ responseId: string; completed: boolean }> {
  const res = await fetch(`${sys.url}/f/${formId}/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  assert.equal(res.status, 200, await res.clone().text());
  return res.json() as Promise<{ responseId: string; completed: boolean }>;
}

/** The rows of submissions' mail outbox: every mail the notifier wrote (sent or not). */
async function outboxAddresses(): Promise<string[]> {
  const db = new pg.Client({ connectionString: sys.databaseUrl });
  await db.connect();
  try {
    return (await db.query<{ to_address: string }>(`select "to_address" from submissions.mail_outbox order by "id"`)).rows.map((r) => r.to_address);
  } finally {
    await db.end();
  }
}

describe("response notifications and receipts", () => {
  it("mail the owner and chosen members per completed response, and the respondent a receipt; nothing else", async () => {
    const ownerEmail = unique("owner");
    const memberEmail = unique("member");
    const bystanderEmail = unique("bystander");
    const owner = await createUserWithKey(sys, ownerEmail);
    await sys.cli("user:create", "--email", memberEmail);
    await sys.cli("user:create", "--email", bystanderEmail);
    await sys.cli("workspace:add-member", "--workspace", owner.workspace.id, "--email", memberEmail);
    await sys.cli("workspace:add-member", "--workspace", owner.workspace.id, "--email", bystanderEmail);
    const outsider = unique("outsider");

    const quiet = await owner.api("POST", "/forms", { workspaceId: owner.workspace.id, name: "Quiet form", document: { blocks } });
    const loud = await owner.api("POST", "/forms", { workspaceId: owner.workspace.id, name: "Sign-up & more", document: { blocks } });
    assert.equal(loud.status, 201, JSON.stringify(loud.body));
    const set = await owner.api("PATCH", `/forms/${loud.body.id}`, {
      settings: { notifications: { owner: true, members: [memberEmail.toUpperCase(), outsider], receiptQuestionId: "email" } },
    });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.deepEqual(set.body.settings.notifications, { owner: true, members: [memberEmail.toUpperCase(), outsider], receiptQuestionId: "email" });
    const invalid = await owner.api("PATCH", `/forms/${loud.body.id}`, { settings: { notifications: { members: ["nobody"] } } });
    assert.equal(invalid.status, 400);
    assert.match(invalid.body.error, /^body\.settings\.notifications\.members\[0\]: must be an email address/);
    await sys.cli("form:publish", "--id", quiet.body.id);
    await sys.cli("form:publish", "--id", loud.body.id);

    // Before the completion: a response to the form without notifications, and a partial save.
    const respondent = unique("respondent");
    await respond(quiet.body.id, { answers: { name: "Quinn", plan: "free", email: unique("quiet") }, completed: true });
    const partial = await respond(loud.body.id, { answers: { name: "Ada", plan: "pro" }, completed: false });
    assert.equal(partial.completed, false);
    const done = await respond(loud.body.id, { responseId: partial.responseId, answers: { email: respondent }, completed: true });
    assert.equal(done.completed, true);

    const toOwner = await smtp.waitFor((m) => m.to.includes(ownerEmail));
    const toMember = await smtp.waitFor((m) => m.to.includes(memberEmail));
    const receipt = await smtp.waitFor((m) => m.to.includes(respondent));
    for (const mail of [toOwner, toMember]) {
      assert.equal(mail.subject, "New response: Sign-up & more");
      assert.equal(mail.from, "forms@example.com");
      assert.match(mail.text, /Your name\n {2}Ada\n/);
      assert.match(mail.text, /Plan\n {2}Pro <yearly>\n/, "an option's text, not its id");
      assert.ok(mail.text.includes(`http://forms.example.com/app/forms/${loud.body.id}/responses/${done.responseId}`), "a link to the response in the app");
      assert.ok(mail.html.includes("Pro &#60;yearly&#62;"), "the HTML escapes answers");
      assert.ok(mail.html.includes(`/app/forms/${loud.body.id}/responses/${done.responseId}`));
    }
    assert.equal(receipt.subject, "Your answers: Sign-up & more");
    assert.match(receipt.text, /Your email\n {2}\S+@example\.com\n/);
    assert.match(receipt.text, /Plan\n {2}Pro <yearly>\n/);
    assert.ok(!receipt.text.includes("/app/"), "a receipt has no link into the app");

    // A second completion: its mails are written after the first's, so once they arrive every earlier
    // outbox row has been read; the outbox then holds exactly these five mails.
    const second = await respond(loud.body.id, { answers: { name: "Bea", plan: "free" }, completed: true });
    const secondToOwner = await smtp.waitFor((m) => m.to.includes(ownerEmail) && m.text.includes("Bea"));
    assert.ok(secondToOwner.text.includes(`/responses/${second.responseId}`));
    await smtp.waitFor((m) => m.to.includes(memberEmail) && m.text.includes("Bea"));
    const written = await outboxAddresses();
    assert.deepEqual([...written].sort(), [ownerEmail, ownerEmail, memberEmail, memberEmail, respondent].sort(), "no mail for the partial save, the quiet form, the outsider, the bystander or a response without an email");
    const arrived = (to: string) => smtp.mails.filter((m: ReceivedMail) => m.to.includes(to)).length;
    assert.deepEqual([arrived(ownerEmail), arrived(memberEmail), arrived(respondent), arrived(outsider), arrived(bystanderEmail)], [2, 2, 1, 0, 0]);
  });
});
