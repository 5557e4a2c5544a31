import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { ensureAppBuilt } from "@formsvc/launcher/app-build.ts";
import { signedUpPerson } from "./support/app-client.ts";
import { launchBrowser, screenshot, signedInContext } from "./support/browser.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";

// Results against the whole running system: responses arrive at /f/:id, the summary at
// /app/api/forms/:id/summary sums them up (search, date range, 404 for strangers), the CSV and XLSX
// exports stream them, and the app's Summary view draws the charts in Chromium (test-output/screenshots/app-summary.png).

let sys: TestSystem;
let browser: Browser;

before(async () => {
  ensureAppBuilt(undefined, { quiet: true });
  [sys, browser] = await Promise.all([startTestSystem("app_results"), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await sys?.stop();
});

const document = {
  title: "Feedback",
  blocks: [
    { id: "name", key: "name", type: "SHORT_TEXT", question: "Your name" },
    { id: "age", key: "age", type: "NUMBER", question: "Age" },
    { id: "visit", key: "visit", type: "DATE", question: "Day of your visit" },
    { id: "plan", key: "plan", type: "MULTIPLE_CHOICE", question: "Plan", options: [{ id: "free", text: "Free" }, { id: "pro", text: "Pro" }] },
    { id: "tags", key: "tags", type: "CHECKBOXES", question: "What did you like?", options: [{ id: "talks", text: "Talks" }, { id: "food", text: "Food" }] },
    { id: "stars", key: "stars", type: "RATING", question: "Overall", max: 5 },
  ],
};

const answers = [
  { name: "Ada", age: 36, visit: "2026-05-01", plan: "pro", tags: ["talks", "food"], stars: 5 },
  { name: "Grace", age: 45, visit: "2026-05-01", plan: "pro", tags: ["talks"], stars: 4 },
  { name: "Linus", age: 28, visit: "2026-05-02", plan: "free", stars: 2 },
];

const person = (label: string) => signedUpPerson(sys.url, label);

async function respond(formId: string, body: object) {
  const res = await fetch(`${sys.url}/f/${formId}/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  assert.equal(res.status, 200, await res.text());
}

describe("results: the summary and the export", () => {
  let owner: Awaited<ReturnType<typeof person>>;
  let formId: string;

  before(async () => {
    owner = await person("results");
    const created = await owner.call("POST", "/forms", { workspaceId: owner.workspace.id, name: "Feedback", document });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    formId = created.body.id;
    assert.equal((await owner.call("POST", `/forms/${formId}/publish`, {})).status, 200);
    for (const a of answers) await respond(formId, { answers: a, completed: true });
    await respond(formId, { answers: { name: "Still typing" }, completed: false });
  });

  it("sums up the completed responses per question, searched and by date range", async () => {
    const { status, body } = await owner.call("GET", `/forms/${formId}/summary`);
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.responses, 3);
    const q = (key: string) => body.questions.find((x: { key: string }) => x.key === key);
    assert.deepEqual(q("plan").counts.map((c: { label: string; count: number }) => [c.label, c.count]), [["Free", 1], ["Pro", 2]]);
    assert.deepEqual(q("tags").counts.map((c: { count: number }) => c.count), [2, 1]);
    assert.deepEqual(q("stars").counts.map((c: { count: number }) => c.count), [0, 1, 0, 1, 1]);
    assert.deepEqual([q("age").min, q("age").median, q("age").max], [28, 36, 45]);
    assert.deepEqual(q("visit").counts.map((c: { value: string; count: number }) => [c.value, c.count]), [["2026-05-01", 2], ["2026-05-02", 1]]);
    assert.deepEqual(q("name").latest, ["Linus", "Grace", "Ada"]);

    assert.equal((await owner.call("GET", `/forms/${formId}/summary?search=FREE`)).body.responses, 1, "a choice found by its option's text");
    assert.equal((await owner.call("GET", `/forms/${formId}/summary?search=grace`)).body.responses, 1);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    assert.equal((await owner.call("GET", `/forms/${formId}/summary?since=${tomorrow}`)).body.responses, 0);
    assert.equal((await owner.call("GET", `/forms/${formId}/summary?until=${tomorrow}`)).body.responses, 3);
    assert.equal((await owner.call("GET", `/forms/${formId}/summary?since=yesterday`)).status, 400);
    // Dates that parse but no timestamp holds (issue 36's probe): a 400 naming the parameter, never a 500.
    const early = await owner.call("GET", `/forms/${formId}/summary?since=0000-01-01T00:00:00Z`);
    assert.deepEqual([early.status, /since/.test(early.body.error)], [400, true]);
    const late = await owner.call("GET", `/forms/${formId}/summary?until=${encodeURIComponent("9999-12-31T23:59:59-14:00")}`);
    assert.deepEqual([late.status, /until/.test(late.body.error)], [400, true]);
    assert.equal((await owner.call("GET", `/forms/${formId}/summary?search=${"x".repeat(201)}`)).status, 400, "submissions bounds the search");

    const stranger = await person("stranger");
    assert.equal((await stranger.call("GET", `/forms/${formId}/summary`)).status, 404);
  });

  it("exports the responses as CSV, in the date range", async () => {
    const csv = async (query: string) => {
      const res = await fetch(`${sys.url}/app/api/forms/${formId}/submissions.csv?${query}`, { headers: { cookie: owner.cookies.header() } });
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-type") ?? "", /^text\/csv/);
      const bytes = Buffer.from(await res.arrayBuffer());
      assert.equal(bytes.subarray(0, 3).toString("hex"), "efbbbf", "a UTF-8 byte order mark first");
      return bytes.subarray(3).toString("utf8").split("\r\n").filter(Boolean);
    };
    const all = await csv("filter=all");
    assert.equal(all[0], "Response ID,Status,Submitted at,Started at,Form version,Your name,Age,Day of your visit,Plan,What did you like?,Overall,Respondent country");
    assert.equal(all.length, 1 + 4);
    assert.ok(all.some((line) => /,completed,.*,Linus,28,2026-05-02,Free,,2,/.test(line)), all.join("\n"));
    assert.equal((await csv("filter=completed")).length, 1 + 3);
    assert.equal((await csv(`filter=completed&since=${new Date(Date.now() + 86_400_000).toISOString()}`)).length, 1);

    for (const format of ["csv", "xlsx"]) {
      const out = await fetch(`${sys.url}/app/api/forms/${formId}/submissions.${format}?until=${encodeURIComponent("9999-12-31T23:59:59-14:00")}`, { headers: { cookie: owner.cookies.header() } });
      assert.equal(out.status, 400, `${format}: a date no timestamp holds is refused before the download starts`);
      assert.match((await out.json()).error, /until/);
    }

    const xlsx = await fetch(`${sys.url}/app/api/forms/${formId}/submissions.xlsx?filter=completed`, { headers: { cookie: owner.cookies.header() } });
    assert.equal(xlsx.status, 200);
    assert.equal(xlsx.headers.get("content-type"), "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet");
    assert.match(xlsx.headers.get("content-disposition") ?? "", /filename="Feedback-responses\.xlsx"/);
    const zip = Buffer.from(await xlsx.arrayBuffer());
    assert.equal(zip.subarray(0, 4).toString("hex"), "504b0304", "a ZIP");
    assert.equal(zip.readUInt16LE(zip.length - 22 + 10), 5, "of the workbook's five parts");
  });

  it("draws the charts in the Summary view", async () => {
    const context = await signedInContext(browser, sys.url, owner.cookies);
    const page = await context.newPage();
    await page.goto(`${sys.url}/app/forms/${formId}/responses`);
    await page.getByRole("tab", { name: "Summary" }).click();
    await page.getByRole("heading", { name: "3 completed responses" }).waitFor();
    const plan = page.getByRole("list", { name: "Answers to Plan" });
    assert.deepEqual((await plan.locator("li").allInnerTexts()).map((t) => t.replace(/\s+/g, " ")), ["Free 1 (33%)", "Pro 2 (67%)"]);
    await page.getByRole("img", { name: /^Ratings of Overall: 1 0, 2 1, 3 0, 4 1, 5 1$/ }).waitFor();
    await page.getByRole("img", { name: /^Dates answered to Day of your visit: 2026-05-01 2, 2026-05-02 1$/ }).waitFor();
    await page.getByRole("img", { name: /^Responses by day/ }).waitFor();
    assert.deepEqual(await page.locator('[data-question="age"] dd').allInnerTexts(), ["28", "36", "36.33", "45"]);
    assert.deepEqual(await page.getByRole("list", { name: "Latest answers to Your name" }).locator("li").allInnerTexts(), ["Linus", "Grace", "Ada"]);
    await screenshot(page, "app-summary");

    // A new response shows up without a reload; a search narrows the charts.
    await respond(formId, { answers: { name: "Barbara", plan: "free" }, completed: true });
    await page.getByRole("heading", { name: "4 completed responses" }).waitFor({ timeout: 15_000 });
    await page.getByLabel("Search answers").fill("barbara");
    await page.getByRole("heading", { name: "1 completed response" }).waitFor();
    await screenshot(page, "app-summary-search");
    await context.close();
  });
});
