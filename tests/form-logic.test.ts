import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { ensureAppBuilt } from "@formsvc/launcher/app-build.ts";
import { editorSaved, launchBrowser, pageApi, screenshot, watchPage } from "./support/browser.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { startReceiver } from "./support/receiver.ts";
import { createUserWithKey, startTestSystem, type TestSystem } from "./support/system.ts";

// Conditional logic against the whole running system: a form built over /api/v1 whose choice reveals a
// follow-up question (Pro asks for the company) and jumps past a page (Free skips the team size), answered
// on both branches by each path a respondent has: the JSON post the page's script makes, Chromium with
// JavaScript, and Chromium without it (page by page). The stored responses and the webhook payloads mark
// the questions the rules skipped null, and carry the calculated field a rule sets. Then the editor's Logic
// panel makes a rule in Chromium. Last, a form whose answers turn later pages on and off: Next and Submit
// follow each answer in Chromium, and an upload question the rules never reveal is stored as skipped.
// Screenshots: test-output/screenshots/logic-branch-a.png, logic-branch-b.png, logic-editor.png.

let sys: TestSystem;
let browser: Browser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let ada: Awaited<ReturnType<typeof createUserWithKey>>;
let formId = "";

const document = {
  title: "Plans",
  blocks: [
    { id: "b_plan", key: "plan", type: "MULTIPLE_CHOICE", question: "Which plan?", required: true, options: [{ id: "o_free", text: "Free" }, { id: "o_pro", text: "Pro" }] },
    { id: "b_company", key: "company", type: "SHORT_TEXT", question: "Company name", required: true },
    { id: "pb1", type: "PAGE_BREAK" },
    { id: "b_team", key: "team", type: "NUMBER", question: "Team size", required: true },
    { id: "pb2", type: "PAGE_BREAK" },
    { id: "b_note", key: "note", type: "LONG_TEXT", question: "Anything else?" },
  ],
  calculatedFields: [{ name: "tier", type: "TEXT", expression: "'standard'" }],
  logic: [
    { when: { conditions: [{ question: "b_plan", operator: "EQUALS", value: "o_pro" }] }, then: [{ action: "SHOW", block: "b_company" }] },
    { when: { conditions: [{ question: "b_plan", operator: "EQUALS", value: "o_free" }] }, then: [{ action: "JUMP", page: 3 }] },
    // Teams over 10 set the calculated tier, in place of its expression's "standard".
    { when: { conditions: [{ question: "b_team", operator: "GREATER_THAN", value: 10 }] }, then: [{ action: "SET", field: "tier", value: "team" }] },
  ],
};

/**
 * What each branch stores: Pro answers everything, and its team of 12 sets the tier; Free skips the
 * company (hidden) and the team (jumped over), and keeps the expression's tier (a team sent anyway counts for nothing).
 */
const expected = {
  pro: { plan: "o_pro", company: "Acme", team: 12 },
  free: { plan: "o_free", company: null, team: null },
};
const expectedTier = { pro: "team", free: "standard" };

before(async () => {
  ensureAppBuilt(undefined, { quiet: true });
  [sys, browser, receiver] = await Promise.all([
    startTestSystem("form_logic", { WEBHOOK_ALLOW_PRIVATE_URLS: "true" }),
    launchBrowser(),
    startReceiver(() => ({ status: 200 })),
  ]);
  ada = await createUserWithKey(sys, "ada@example.com");
});
after(async () => {
  await browser?.close();
  await receiver?.close();
  await sys?.stop();
});

const respond = (body: object, id = formId) =>
  fetch(`${sys.url}/f/${id}/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

/**
 * Each branch's answers through the page: choose the plan, Pro fills the company it reveals, on to the end.
 * With JavaScript the progress bar counts the pages of the respondent's path: 3 for Pro, 2 once Free (whose
 * jump passes the team page over) is chosen; without it there is no progress bar.
 */
async function answer(page: Page, plan: "pro" | "free", note: string, shot: string, script: boolean) {
  await page.goto(`${sys.url}/f/${formId}`);
  const company = page.getByLabel("Company name");
  const progress = page.getByRole("progressbar");
  assert.equal(await company.isVisible(), false, "the follow-up question waits for its answer");
  if (script) await page.getByText("Page 1 of 3", { exact: true }).waitFor();
  await page.getByLabel(plan === "pro" ? "Pro" : "Free", { exact: true }).check();
  const pageCount = plan === "pro" ? 3 : 2;
  if (script) {
    await page.getByText(`Page 1 of ${pageCount}`, { exact: true }).waitFor();
    assert.equal(await progress.getAttribute("aria-valuemax"), String(pageCount));
  } else assert.equal(await progress.isVisible(), false, "no progress bar without JavaScript");
  await page.getByRole("button", { name: "Next" }).click();
  if (plan === "pro") {
    await company.waitFor();
    // Without JavaScript, Next showed the revealed question first; with it, it appeared at once.
    await company.fill("Acme");
    await screenshot(page, shot);
    await page.getByRole("button", { name: "Next" }).click();
    await page.getByLabel("Team size").fill("12");
    await page.getByRole("button", { name: "Next" }).click();
  }
  await page.getByLabel("Anything else?").waitFor();
  assert.equal(await page.getByLabel("Team size").isVisible(), false, "the team page is passed over for Free");
  if (script) {
    await page.getByText(`Page ${pageCount} of ${pageCount}`, { exact: true }).waitFor();
    assert.deepEqual([await progress.getAttribute("aria-valuenow"), await progress.getAttribute("aria-valuemax")], [String(pageCount), String(pageCount)]);
  }
  await page.getByLabel("Anything else?").fill(note);
  if (plan === "free") await screenshot(page, shot);
  await page.getByRole("button", { name: "Submit" }).click();
  await page.getByRole("heading", { name: "Thank you!" }).waitFor();
}

describe("conditional logic, end to end", () => {
  it("refuses rules that do not fit the document at save, naming the rule", async () => {
    const bad = { ...document, logic: [document.logic[0], { when: { conditions: [{ question: "b_plan", operator: "IS_ANSWERED" }] }, then: [{ action: "JUMP", page: 7 }] }] };
    const res = await ada.api("POST", "/forms", { workspaceId: ada.workspace.id, name: "Plans", document: bad });
    assert.equal(res.status, 400);
    assert.equal(res.body.error, "document.logic[1].then[0]: jump target page 7 does not exist (the form has 3 pages)");
    assert.deepEqual(res.body.fields, [{ key: "document.logic[1].then[0]", message: "jump target page 7 does not exist (the form has 3 pages)" }]);
    const backwards = await ada.api("POST", "/forms", {
      workspaceId: ada.workspace.id,
      document: { ...document, logic: [{ when: { conditions: [{ question: "b_team", operator: "GREATER_THAN", value: 3 }] }, then: [{ action: "HIDE", block: "b_company" }] }] },
    });
    assert.equal(backwards.status, 400);
    assert.match(backwards.body.error, /^document\.logic\[0\]\.then\[0\]\.block: block "b_company" \(SHORT_TEXT\) does not come after the questions the rule asks about/);
    const unknownField = await ada.api("POST", "/forms", {
      workspaceId: ada.workspace.id,
      document: { ...document, logic: [{ when: { conditions: [{ question: "b_team", operator: "IS_ANSWERED" }] }, then: [{ action: "SET", field: "score", value: 1 }] }] },
    });
    assert.equal(unknownField.status, 400);
    assert.equal(unknownField.body.error, 'document.logic[0].then[0].field: no calculated field is named "score"');
  });

  it("builds the form with its rules and a webhook, and publishes it", async () => {
    const created = await ada.api("POST", "/forms", { workspaceId: ada.workspace.id, name: "Plans", document });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    formId = created.body.id;
    assert.deepEqual(created.body.document.logic, document.logic);
    assert.equal((await ada.api("POST", "/webhooks", { formId, url: receiver.url })).status, 201);
    await sys.cli("form:publish", "--id", formId);
  });

  it("the hosted JSON post: a hidden question takes no answer and needs none; a revealed one is required", async () => {
    const missing = await respond({ answers: { plan: "o_pro", team: 12 }, completed: true });
    assert.equal(missing.status, 400);
    assert.deepEqual((await missing.json()).fields, [{ key: "company", message: "is required" }]);
    assert.equal((await respond({ answers: { ...expected.pro, note: "json-pro" }, completed: true })).status, 200);
    // The company and team sent anyway are skipped: not stored, not checked (a team of "many" is no problem).
    assert.equal((await respond({ answers: { plan: "o_free", company: "Sent anyway", team: "many", note: "json-free" }, completed: true })).status, 200);
    assert.equal((await respond({ answers: { plan: "o_free", team: 50, note: "json-free-team" }, completed: true })).status, 200);
  });

  it("Chromium with JavaScript: both branches, the follow-up revealed as Pro is chosen and the team page jumped over for Free", async () => {
    const context = await browser.newContext({ viewport: { width: 900, height: 900 } });
    const page = await context.newPage();
    const problems = watchPage(page, []);
    await answer(page, "pro", "js-pro", "logic-branch-a", true);
    await answer(page, "free", "js-free", "logic-branch-b", true);
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("Chromium without JavaScript: page by page, the follow-up shown after Next, the jump followed", async () => {
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 900, height: 900 } });
    const page = await context.newPage();
    await answer(page, "pro", "nojs-pro", "logic-branch-a-nojs", false);
    await answer(page, "free", "nojs-free", "logic-branch-b-nojs", false);
    await context.close();
  });

  it("stores the skipped questions as null, and the webhook payloads say so", async () => {
    const notes = ["json-pro", "json-free", "json-free-team", "js-pro", "js-free", "nojs-pro", "nojs-free"];
    const list = await ada.api("GET", `/forms/${formId}/submissions?filter=completed&limit=100`);
    assert.equal(list.status, 200);
    const byNote = new Map(list.body.items.map((s: any) => [s.answers.note?.value, s]));
    assert.deepEqual([...byNote.keys()].sort(), notes.toSorted());
    for (const note of notes) {
      const stored = byNote.get(note) as any;
      const want = note.endsWith("pro") ? expected.pro : expected.free;
      for (const [key, value] of Object.entries(want)) assert.deepEqual(stored.answers[key]?.value, value, `${note}: ${key}`);
      assert.equal(stored.answers["calculated:tier"]?.value, note.endsWith("pro") ? expectedTier.pro : expectedTier.free, `${note}: tier`);
    }

    await receiver.waitFor(notes.length);
    const payloads = await eventuallyPasses(
      async () => receiver.received.map((r) => r.body).filter((b) => b?.eventType === "FORM_RESPONSE"),
      (found) => found.length === notes.length,
    );
    for (const payload of payloads) {
      const fields = Object.fromEntries(payload.data.fields.map((f: any) => [f.questionId, f.value]));
      const want = fields.b_plan === "o_pro" ? expected.pro : expected.free;
      assert.deepEqual([fields.b_plan, fields.b_company, fields.b_team], [want.plan, want.company, want.team], JSON.stringify(payload.data.fields));
      assert.deepEqual(payload.data.calculatedFields, { tier: fields.b_plan === "o_pro" ? expectedTier.pro : expectedTier.free }, "the tier a rule set, or the expression's");
    }
  });

  it("the editor's Logic panel makes a rule in Chromium: when the plan is Pro, show the company", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems = watchPage(page, [401]);
    const api = pageApi(page);
    await page.goto(`${sys.url}/app/signup`);
    await page.getByLabel("Name").fill("Grace Hopper");
    await page.getByLabel("Email").fill("grace@example.com");
    await page.getByLabel("Password").fill("compiler-pioneer-1952");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.getByRole("heading", { name: "Forms", level: 1 }).waitFor();
    // The form's questions as the API makes them; the rule is made in the editor.
    const { logic: _none, ...withoutLogic } = document;
    const workspaceId = (await api("GET", "/workspaces")).body.items[0].id;
    const created = await api("POST", "/forms", { workspaceId, name: "Plans", document: withoutLogic });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id;
    await page.goto(`${sys.url}/app/forms/${id}/edit`);

    // Logic is folded under the form until opened.
    await page.locator("summary").filter({ hasText: "Logic" }).click();
    const panel = page.getByRole("group", { name: "Logic" });
    await panel.getByText("No rules.").waitFor();
    await panel.getByRole("button", { name: "Add rule" }).click();
    await panel.getByLabel("Rule 1 condition 1 question").selectOption({ label: "Which plan?" });
    await panel.getByLabel("Rule 1 condition 1 operator").selectOption({ label: "is" });
    await panel.getByLabel("Rule 1 condition 1 value").selectOption({ label: "Pro" });
    await panel.getByLabel("Rule 1 action 1", { exact: true }).selectOption({ label: "Show" });
    await panel.getByLabel("Rule 1 action 1 target").selectOption({ label: "Company name" });
    // A rule acting backwards is named at once, as the server would name it.
    await panel.getByLabel("Rule 1 action 1 target").selectOption({ label: "Which plan?" });
    await panel.getByRole("alert").filter({ hasText: "does not come after the questions the rule asks about" }).waitFor();
    await panel.getByLabel("Rule 1 action 1 target").selectOption({ label: "Company name" });
    assert.equal(await panel.getByRole("alert").count(), 0);
    // And set the calculated field (the form's Calculated fields card has "tier").
    await panel.getByRole("button", { name: "Add action" }).click();
    await panel.getByLabel("Rule 1 action 2", { exact: true }).selectOption({ label: "Set calculated field" });
    await panel.getByLabel("Rule 1 action 2 target").selectOption({ label: "tier" });
    await panel.getByLabel("Rule 1 action 2 value").fill("pro");
    await screenshot(page, "logic-editor");
    await editorSaved(page);
    const saved = await api("GET", `/forms/${id}`);
    const made = { when: { match: "all", ...document.logic[0].when }, then: [...document.logic[0].then, { action: "SET", field: "tier", value: "pro" }] };
    assert.deepEqual(saved.body.document.logic, [made]);

    // A Free response leaves the company hidden by the rule: the Responses table and the response read
    // "skipped" there (muted), the CSV export leaves its cell empty.
    await sys.cli("form:publish", "--id", id);
    const free = await respond({ answers: { plan: "o_free", team: 3 }, completed: true }, id);
    assert.equal(free.status, 200);
    await page.goto(`${sys.url}/app/forms/${id}/responses`);
    const table = page.getByRole("table", { name: "Responses to Plans" });
    const row = table.locator("tbody tr").first();
    await row.waitFor();
    const headers = await table.locator("thead th").allInnerTexts();
    const companyCell = row.locator("td").nth(headers.indexOf("Company name"));
    assert.equal(await companyCell.innerText(), "skipped");
    assert.equal(await companyCell.locator(".muted").count(), 1, "skipped reads muted");
    assert.equal(await row.locator("td").nth(headers.indexOf("Team size")).innerText(), "3");
    await row.getByRole("link").click();
    const answered = page.locator(".answer", { hasText: "Company name" }).locator("dd");
    await answered.waitFor();
    assert.equal(await answered.innerText(), "skipped");
    const csv = await page.request.get(`${sys.url}/app/api/forms/${id}/submissions.csv?filter=all`);
    assert.equal(csv.status(), 200);
    const [header, line] = (await csv.text()).replace(/^\uFEFF/, "").split("\r\n");
    assert.equal(line.split(",")[header.split(",").indexOf("Company name")], "", line);
    assert.deepEqual(problems, []);
    await context.close();
  });
});

describe("rules that turn later pages on and off, and upload questions they skip", () => {
  // The call time's page shows only once a call is wanted; the feedback page shows unless the survey is
  // declined; the recording (an upload) is asked for only when the survey is taken.
  const followUp = {
    title: "Follow-up",
    blocks: [
      { id: "b_name", key: "name", type: "SHORT_TEXT", question: "Your name", required: true },
      { id: "pf1", type: "PAGE_BREAK" },
      { id: "b_call", key: "call", type: "MULTIPLE_CHOICE", question: "Would you like a call?", options: [{ id: "call_yes", text: "Call me" }, { id: "call_no", text: "No call" }] },
      { id: "b_survey", key: "survey", type: "MULTIPLE_CHOICE", question: "Take our survey?", options: [{ id: "survey_yes", text: "Survey yes" }, { id: "survey_no", text: "Survey no" }] },
      { id: "b_recording", key: "recording", type: "FILE", question: "Attach a recording" },
      { id: "pf2", type: "PAGE_BREAK" },
      { id: "b_time", key: "time", type: "SHORT_TEXT", question: "Best time to call", required: true },
      { id: "pf3", type: "PAGE_BREAK" },
      { id: "b_feedback", key: "feedback", type: "LONG_TEXT", question: "Your feedback" },
    ],
    logic: [
      { when: { conditions: [{ question: "b_call", operator: "EQUALS", value: "call_yes" }] }, then: [{ action: "SHOW", block: "b_time" }] },
      { when: { conditions: [{ question: "b_survey", operator: "EQUALS", value: "survey_yes" }] }, then: [{ action: "SHOW", block: "b_recording" }] },
      { when: { conditions: [{ question: "b_survey", operator: "EQUALS", value: "survey_no" }] }, then: [{ action: "HIDE", block: "b_feedback" }] },
    ],
  };
  let followUpId = "";
  const storedOf = async (name: string) => {
    const list = await ada.api("GET", `/forms/${followUpId}/submissions?filter=completed&limit=100`);
    assert.equal(list.status, 200);
    const found = list.body.items.find((s: any) => s.answers.name?.value === name);
    assert.ok(found, `no response from ${name}`);
    return found.answers;
  };

  it("the JSON post: an upload question the rules never reveal is stored as skipped", async () => {
    const created = await ada.api("POST", "/forms", { workspaceId: ada.workspace.id, name: "Follow-up", document: followUp });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    followUpId = created.body.id;
    await sys.cli("form:publish", "--id", followUpId);
    const res = await respond({ answers: { name: "json", call: "call_no", survey: "survey_no" }, completed: true }, followUpId);
    assert.equal(res.status, 200);
    const answers = await storedOf("json");
    assert.deepEqual([answers.recording?.value, answers.recording?.files], [null, []]);
    assert.deepEqual([answers.time?.value, answers.feedback?.value], [null, null]);
  });

  it("Chromium: Next and Submit follow each answer that turns a later page on or off", async () => {
    const context = await browser.newContext({ viewport: { width: 900, height: 900 } });
    const page = await context.newPage();
    const problems = watchPage(page, []);
    const next = page.getByRole("button", { name: "Next" });
    const submit = page.getByRole("button", { name: "Submit" });
    const shown = async () => ({ next: await next.isVisible(), submit: await submit.isVisible() });
    await page.goto(`${sys.url}/f/${followUpId}`);
    await page.getByLabel("Your name").fill("chromium");
    await next.click();
    await page.getByText("Would you like a call?").waitFor();
    // The feedback page is still ahead.
    assert.deepEqual(await shown(), { next: true, submit: false });
    // Declining the survey turns it off: this page is the last, and Next (which had nowhere to go) gives way to Submit.
    await page.getByLabel("Survey no", { exact: true }).check();
    await submit.waitFor();
    assert.deepEqual(await shown(), { next: false, submit: true });
    // Wanting a call turns the call time's page on: Next again, so the page is not passed over.
    await page.getByLabel("Call me", { exact: true }).check();
    await next.waitFor();
    assert.deepEqual(await shown(), { next: true, submit: false });
    await next.click();
    await page.getByLabel("Best time to call").fill("mornings");
    assert.deepEqual(await shown(), { next: false, submit: true });
    await submit.click();
    await page.getByRole("heading", { name: "Thank you!" }).waitFor();
    assert.deepEqual(problems, []);
    await context.close();

    const answers = await storedOf("chromium");
    assert.deepEqual(
      Object.fromEntries(["call", "survey", "recording", "time", "feedback"].map((key) => [key, answers[key]?.value])),
      { call: "call_yes", survey: "survey_no", recording: null, time: "mornings", feedback: null },
    );
  });
});
