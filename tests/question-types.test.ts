import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { apiClient } from "./support/system.ts";
import { signedUpPerson } from "./support/app-client.ts";
import { ensureAppBuilt } from "@formsvc/launcher/app-build.ts";
import { launchBrowser, screenshot, signedInContext } from "./support/browser.ts";
import { startReceiver } from "./support/receiver.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";

// The question types of issue 31 against the whole running system, each the way a respondent and an
// owner meet it: created over /api/v1, listed by /questions, answered (valid and each kind of invalid) at
// /f/:id/responses, stored, pushed to a webhook, summed up, exported as CSV, and answered on the hosted
// page in Chromium by keyboard at phone width (test-output/screenshots/question-types-*.png), with and
// without JavaScript.

let sys: TestSystem;
let browser: Browser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

before(async () => {
  ensureAppBuilt(undefined, { quiet: true });
  [sys, browser, receiver] = await Promise.all([startTestSystem("question_types", { WEBHOOK_ALLOW_PRIVATE_URLS: "true" }), launchBrowser(), startReceiver()]);
});
after(async () => {
  await browser?.close();
  await receiver?.close();
  await sys?.stop();
});

const form = {
  title: "New types",
  blocks: [
    { id: "b_time", key: "time", type: "TIME", question: "Arrival time" },
    { id: "b_agree", key: "agree", type: "LINEAR_SCALE", question: "How much do you agree?", min: 0, max: 4, minLabel: "Not at all", maxLabel: "Fully" },
    { id: "b_nps", key: "nps", type: "NPS", question: "Would you recommend us?" },
    { id: "b_terms", key: "terms", type: "CONSENT", question: "Terms", text: "I agree to the [terms](https://forms.example.com/terms)", required: true },
    {
      id: "b_langs",
      key: "langs",
      type: "MULTI_SELECT",
      question: "Languages you speak",
      min: 1,
      max: 2,
      options: [{ id: "en", text: "English" }, { id: "fr", text: "French" }, { id: "de", text: "German" }, { id: "nl", text: "Dutch" }],
    },
    {
      id: "b_rank",
      key: "rank",
      type: "RANKING",
      question: "What matters most?",
      options: [{ id: "price", text: "Price" }, { id: "speed", text: "Speed" }, { id: "support", text: "Support" }],
    },
    {
      id: "b_grid",
      key: "grid",
      type: "MATRIX",
      question: "How was it?",
      required: true,
      rows: [{ id: "food", text: "Food" }, { id: "music", text: "Music" }],
      columns: [{ id: "bad", text: "Bad" }, { id: "ok", text: "OK" }, { id: "good", text: "Good" }],
    },
  ],
};

const person = (label: string) => signedUpPerson(sys.url, label);

async function respond(formId: string, body: object) {
  const res = await fetch(`${sys.url}/f/${formId}/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

describe("TIME, LINEAR_SCALE, NPS, CONSENT, MULTI_SELECT, RANKING and MATRIX across the stack", () => {
  let owner: Awaited<ReturnType<typeof person>>;
  let api: ReturnType<typeof apiClient>;
  let formId: string;
  let hookId: string;

  before(async () => {
    owner = await person("types");
    const key = (await owner.call("POST", "/api-keys", { name: "types" })).body.key as string;
    api = apiClient(sys.url, key);
    const created = await api("POST", "/forms", { workspaceId: owner.workspace.id, name: "New types", document: form });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    formId = created.body.id;
    assert.deepEqual(
      created.body.document.blocks.map((b: { type: string }) => b.type),
      ["TIME", "LINEAR_SCALE", "NPS", "CONSENT", "MULTI_SELECT", "RANKING", "MATRIX"],
    );
    assert.equal((await owner.call("POST", `/forms/${formId}/publish`, {})).status, 200);
    const hook = await api("POST", "/webhooks", { formId, url: receiver.url });
    assert.equal(hook.status, 201);
    hookId = hook.body.id;
  });

  it("refuses a document with a block out of its type's shape, naming it", async () => {
    const bad = async (block: object) => {
      const res = await api("POST", "/forms", { workspaceId: owner.workspace.id, name: "Bad", document: { blocks: [block] } });
      assert.equal(res.status, 400, JSON.stringify(block));
      return res.body.error as string;
    };
    assert.match(await bad({ type: "LINEAR_SCALE", question: "Q", min: 2 }), /document\.blocks\[0\]\.min/);
    assert.match(await bad({ type: "LINEAR_SCALE", question: "Q", max: 11 }), /document\.blocks\[0\]\.max/);
    assert.match(await bad({ type: "NPS", question: "Q", max: 5 }), /document\.blocks\[0\]/);
    assert.match(await bad({ type: "CONSENT", question: "Q" }), /document\.blocks\[0\]\.text/);
    assert.match(await bad({ type: "TIME", question: "Q", options: [] }), /document\.blocks\[0\]/);
    assert.match(await bad({ type: "MULTI_SELECT", question: "Q", options: [{ text: "A" }], min: 2 }), /document\.blocks\[0\]\.min: must not be more than the 1 options/);
    assert.match(await bad({ type: "MULTI_SELECT", question: "Q", options: [{ text: "A" }], min: 1, max: 0 }), /document\.blocks\[0\]\.max/);
    assert.match(await bad({ type: "MATRIX", question: "Q", rows: [], columns: [{ text: "A" }] }), /document\.blocks\[0\]\.rows: needs at least one row/);
    assert.match(await bad({ type: "MATRIX", question: "Q", rows: [{ id: "x", text: "A" }], columns: [{ id: "x", text: "B" }] }), /document\.blocks\[0\]\.columns\[0\]\.id: duplicate id "x"/);
  });

  it("lists each as a column of /questions", async () => {
    const { status, body } = await api("GET", `/forms/${formId}/questions`);
    assert.equal(status, 200);
    assert.deepEqual(
      body.items.slice(0, 7).map((q: { key: string; type: string; label: string }) => [q.key, q.type, q.label]),
      [
        ["time", "TIME", "Arrival time"],
        ["agree", "LINEAR_SCALE", "How much do you agree?"],
        ["nps", "NPS", "Would you recommend us?"],
        ["terms", "CONSENT", "Terms"],
        ["langs", "MULTI_SELECT", "Languages you speak"],
        ["rank", "RANKING", "What matters most?"],
        ["grid", "MATRIX", "How was it?"],
      ],
    );
  });

  it("refuses each kind of invalid answer with a 400 naming the question", async () => {
    const cases: [object, string][] = [
      [{ time: "7:30" }, "answers.time (Arrival time): must be a time (HH:MM, 24 hours)"],
      [{ time: "24:00" }, "answers.time (Arrival time): must be a time (HH:MM, 24 hours)"],
      [{ time: 730 }, "answers.time (Arrival time): must be a time (HH:MM, 24 hours), not a number"],
      [{ agree: 5 }, "answers.agree (How much do you agree?): must be a whole number from 0 to 4"],
      [{ agree: 1.5 }, "answers.agree (How much do you agree?): must be a whole number from 0 to 4"],
      [{ agree: "3" }, "answers.agree (How much do you agree?): must be a whole number from 0 to 4"],
      [{ nps: 11 }, "answers.nps (Would you recommend us?): must be a whole number from 0 to 10"],
      [{ nps: -1 }, "answers.nps (Would you recommend us?): must be a whole number from 0 to 10"],
      [{ terms: "yes" }, "answers.terms (Terms): must be true (agreed), not a string"],
      [{ langs: "en" }, "answers.langs (Languages you speak): must be an array of option ids, not a string"],
      [{ langs: ["en", "xx"] }, 'answers.langs (Languages you speak): "xx" is not an option of this question'],
      [{ langs: ["en", "fr", "de"] }, "answers.langs (Languages you speak): takes at most 2 option ids"],
      [{ langs: ["en", "en"] }, 'answers.langs (Languages you speak): names option id "en" twice'],
      [{ rank: ["speed", "price"] }, "answers.rank (What matters most?): must rank every option (3), not 2"],
      [{ rank: ["speed", "price", "price"] }, 'answers.rank (What matters most?): names option id "price" twice'],
      [{ rank: ["speed", "price", "cost"] }, 'answers.rank (What matters most?): "cost" is not an option of this question'],
      [{ rank: "speed" }, "answers.rank (What matters most?): must be an array of option ids, not a string"],
      [{ grid: ["good"] }, "answers.grid (How was it?): must be an object of row ids to column ids, not an array"],
      [{ grid: { drinks: "good" } }, 'answers.grid (How was it?): "drinks" is not a row of this question'],
      [{ grid: { food: "great" } }, 'answers.grid (How was it?): row "food": "great" is not a column of this question'],
    ];
    for (const [answers, error] of cases) {
      const res = await respond(formId, { answers });
      assert.equal(res.status, 400, JSON.stringify(answers));
      assert.match(res.body.error, new RegExp(error.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")), JSON.stringify(answers));
    }
    // A required consent: an unticked box is no answer, so the response cannot be completed without it.
    for (const answers of [{ nps: 9 }, { nps: 9, terms: false }]) {
      const res = await respond(formId, { answers, completed: true });
      assert.equal(res.status, 400);
      assert.match(res.body.error, /answers\.terms \(Terms\): is required/);
    }
    // A required matrix means every row.
    const half = await respond(formId, { answers: { terms: true, grid: { food: "good" } }, completed: true });
    assert.equal(half.status, 400);
    assert.match(half.body.error, /answers\.grid \(How was it\?\): needs an answer in every row \(1 of 2 unanswered\)/);
  });

  it("stores a valid answer of each and pushes it to the webhook", async () => {
    const done = await respond(formId, { answers: { time: "14:30", agree: 0, nps: 10, terms: true, langs: ["fr", "en"], rank: ["speed", "price", "support"], grid: { food: "good", music: "ok" } }, completed: true });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    const stored = await api("GET", `/forms/${formId}/submissions/${done.body.responseId}`);
    assert.equal(stored.status, 200);
    const values = Object.fromEntries(Object.entries(stored.body.answers).map(([key, a]) => [key, (a as { value: unknown }).value]));
    assert.deepEqual(values, { time: "14:30", agree: 0, nps: 10, terms: true, langs: ["fr", "en"], rank: ["speed", "price", "support"], grid: { food: "good", music: "ok" } });
    assert.equal(stored.body.answers.agree.type, "LINEAR_SCALE");

    await receiver.waitFor(1);
    const fields = receiver.received[0].body.data.fields;
    assert.deepEqual(fields, [
      { questionId: "b_time", type: "TIME", label: "Arrival time", value: "14:30" },
      { questionId: "b_agree", type: "LINEAR_SCALE", label: "How much do you agree?", value: 0 },
      { questionId: "b_nps", type: "NPS", label: "Would you recommend us?", value: 10 },
      { questionId: "b_terms", type: "CONSENT", label: "Terms", value: true },
      // Texts beside the ids: every option of the question.
      { questionId: "b_langs", type: "MULTI_SELECT", label: "Languages you speak", value: ["fr", "en"], options: form.blocks[4].options },
      { questionId: "b_rank", type: "RANKING", label: "What matters most?", value: ["speed", "price", "support"], options: form.blocks[5].options },
      { questionId: "b_grid", type: "MATRIX", label: "How was it?", value: { food: "good", music: "ok" }, rows: form.blocks[6].rows, columns: form.blocks[6].columns },
    ]);
  });

  it("sends a test event with a valid sample answer of each, texts beside ids", async () => {
    const test = await api("POST", `/webhooks/${hookId}/test`);
    assert.equal(test.status, 200, JSON.stringify(test.body));
    // The test is answered once delivered: the receiver has it.
    const got = receiver.received.find((r) => r.body.eventId === test.body.eventId);
    assert.equal(got?.body.test, true);
    const fields = Object.fromEntries(got!.body.data.fields.map((f: { questionId: string }) => [f.questionId, f]));
    assert.deepEqual(
      Object.fromEntries(Object.entries(fields).map(([id, f]) => [id, (f as { value: unknown }).value])),
      {
        b_time: "14:30",
        b_agree: 4,
        b_nps: 10,
        b_terms: true,
        b_langs: ["en", "fr"],
        b_rank: ["price", "speed", "support"],
        b_grid: { food: "bad", music: "bad" },
      },
    );
    assert.deepEqual(fields.b_grid.rows, form.blocks[6].rows);
    assert.deepEqual(fields.b_grid.columns, form.blocks[6].columns);
    assert.deepEqual(fields.b_rank.options, form.blocks[5].options);
  });

  it("sums them up: every step of a scale, the Net Promoter Score with its counts, agreements", async () => {
    for (const nps of [9, 7, 3, 0]) {
      const answers = { nps, agree: 4, terms: true, rank: ["price", "speed", "support"], grid: { food: "good", music: "bad" } };
      assert.equal((await respond(formId, { answers, completed: true })).status, 200);
    }
    const { status, body } = await owner.call("GET", `/forms/${formId}/summary`);
    assert.equal(status, 200, JSON.stringify(body));
    const q = (key: string) => body.questions.find((x: { key: string }) => x.key === key);
    const counts = (key: string) => q(key).counts.map((c: { value: string; count: number }) => [c.value, c.count]);
    // Answers 10, 9, 7, 3, 0: two promoters, two detractors of five.
    assert.deepEqual(counts("nps"), [["0", 1], ["1", 0], ["2", 0], ["3", 1], ["4", 0], ["5", 0], ["6", 0], ["7", 1], ["8", 0], ["9", 1], ["10", 1]]);
    assert.equal(q("nps").score, 0);
    assert.equal(q("nps").shape, "steps");
    assert.deepEqual(counts("agree"), [["0", 1], ["1", 0], ["2", 0], ["3", 0], ["4", 4]]);
    assert.equal(q("agree").score, null, "only NPS has a score");
    assert.deepEqual(counts("terms"), [["true", 5]]);
    assert.deepEqual(q("time").latest, ["14:30"]);
    // Price was first four times of five, Speed once.
    assert.deepEqual(q("rank").ranks, [
      { value: "price", label: "Price", meanRank: 1.2 },
      { value: "speed", label: "Speed", meanRank: 1.8 },
      { value: "support", label: "Support", meanRank: 3 },
    ]);
    // Per row, every column counted: Food good five times; Music ok once, bad four times.
    assert.deepEqual(
      q("grid").rows.map((r: { label: string; counts: { label: string; count: number }[] }) => [r.label, r.counts.map((c) => [c.label, c.count])]),
      [
        ["Food", [["Bad", 0], ["OK", 0], ["Good", 5]]],
        ["Music", [["Bad", 4], ["OK", 1], ["Good", 0]]],
      ],
    );
    assert.deepEqual(q("langs").counts.map((c: { label: string; count: number }) => [c.label, c.count]), [["English", 1], ["French", 1], ["German", 0], ["Dutch", 0]]);
    assert.equal((await respond(formId, { answers: { nps: 10, terms: true, grid: { food: "ok", music: "ok" } }, completed: true })).status, 200);
    const again = (await owner.call("GET", `/forms/${formId}/summary`)).body.questions.find((x: { key: string }) => x.key === "nps");
    assert.equal(again.score, (100 * (3 - 2)) / 6);
  });

  it("shows the figures in the app's Summary view", async () => {
    const context = await signedInContext(browser, sys.url, owner.cookies);
    const page = await context.newPage();
    await page.goto(`${sys.url}/app/forms/${formId}/responses`);
    await page.getByRole("tab", { name: "Summary" }).click();
    await page.getByRole("heading", { name: "6 completed responses" }).waitFor();
    // Six NPS answers (10, 9, 7, 3, 0, 10): three promoters, one passive, two detractors.
    assert.deepEqual(await page.locator('[data-question="nps"] dl.summary-stats dd').allInnerTexts(), ["16.67", "3", "1", "2"]);
    assert.deepEqual(
      (await page.getByRole("list", { name: "Options of What matters most? by mean place" }).locator("li").allInnerTexts()).map((t) => t.replace(/\s+/g, " ")),
      ["Price (mean place 1.2)", "Speed (mean place 1.8)", "Support (mean place 3)"],
    );
    assert.deepEqual(
      (await page.getByRole("list", { name: "Answers to How was it?: Music" }).locator("li").allInnerTexts()).map((t) => t.replace(/\s+/g, " ")),
      ["Bad 4 (67%)", "OK 2 (33%)", "Good 0 (0%)"],
    );
    await screenshot(page, "question-types-summary", { fullPage: true });
    await context.close();
  });

  it("exports a column of each to CSV", async () => {
    const res = await fetch(`${sys.url}/app/api/forms/${formId}/submissions.csv?filter=completed`, { headers: { cookie: owner.cookies.header() } });
    assert.equal(res.status, 200);
    const lines = (await res.text()).replace(/^\uFEFF/, "").split("\r\n").filter(Boolean);
    assert.equal(lines[0], "Response ID,Status,Submitted at,Started at,Form version,Arrival time,How much do you agree?,Would you recommend us?,Terms,Languages you speak,What matters most?,How was it?: Food,How was it?: Music,Respondent country");
    assert.ok(lines.some((line) => /,14:30,0,10,true,"French, English","Speed, Price, Support",Good,OK,/.test(line)), lines.join("\n"));
  });

  /** A phone's page (390 px wide, 24-hour times), with or without the page's script. */
  async function phonePage(javaScriptEnabled: boolean): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, locale: "en-GB", javaScriptEnabled });
    const page = await context.newPage();
    await page.goto(`${sys.url}/f/${formId}`);
    return page;
  }

  /**
   * Answers every question by keyboard alone: the time typed, scales moved with the arrow keys, the consent
   * ticked with Space, the multi-select opened with Enter (and searched, with the script).
   */
  async function answerByKeyboard(page: Page, withScript: boolean) {
    await page.getByLabel("Arrival time").focus();
    // Headless Chromium shows times with AM/PM whatever the locale; the value is 24-hour all the same.
    await page.keyboard.type("0915AM");
    assert.equal(await page.getByLabel("Arrival time").inputValue(), "09:15");
    // Screen readers hear each step with its meaning at the ends.
    const lowest = page.getByRole("radio", { name: "0 of 4, Not at all" });
    await lowest.focus();
    await page.keyboard.press("Space");
    await page.keyboard.press("ArrowRight");
    await page.keyboard.press("ArrowRight");
    assert.equal(await page.getByRole("radio", { name: "2 of 4" }).isChecked(), true);
    await page.getByRole("radio", { name: "0 of 10, Not at all likely" }).focus();
    await page.keyboard.press("Space");
    for (let i = 0; i < 8; i++) await page.keyboard.press("ArrowRight");
    assert.equal(await page.getByRole("radio", { name: "8 of 10" }).isChecked(), true);
    await page.getByRole("radio", { name: "10 of 10, Extremely likely" }).waitFor({ state: "attached" });
    const consent = page.getByRole("checkbox", { name: "I agree to the terms" });
    await consent.focus();
    await page.keyboard.press("Space");
    assert.equal(await consent.isChecked(), true);
    assert.equal(await page.getByRole("link", { name: "terms" }).getAttribute("href"), "https://forms.example.com/terms");
    // The multi-select opens from its summary; with the script its search narrows the list.
    await page.locator(".hf-multi summary").focus();
    await page.keyboard.press("Enter");
    const search = page.getByRole("searchbox", { name: "Search the options" });
    assert.equal(await search.isVisible(), withScript);
    if (withScript) {
      await search.focus();
      await page.keyboard.type("ger");
      assert.equal(await page.getByRole("checkbox", { name: "French" }).isVisible(), false);
      await page.keyboard.press("Tab");
    } else {
      await page.getByRole("checkbox", { name: "German" }).focus();
    }
    await page.keyboard.press("Space");
    assert.equal(await page.getByRole("checkbox", { name: "German" }).isChecked(), true);
    // A matrix: each row's radios, moved through with the arrow keys; each cell names its row and column.
    await page.getByRole("radio", { name: "Food: Bad" }).focus();
    await page.keyboard.press("Space");
    await page.keyboard.press("ArrowRight");
    await page.keyboard.press("ArrowRight");
    assert.equal(await page.getByRole("radio", { name: "Food: Good" }).isChecked(), true);
    await page.getByRole("radio", { name: "Music: OK" }).focus();
    await page.keyboard.press("Space");
    assert.equal(await page.getByRole("radio", { name: "Music: OK" }).isChecked(), true);
    // A ranking: a select per place, chosen by typing an option's first letters.
    for (const [place, option] of [["Place 1", "Support"], ["Place 2", "Price"], ["Place 3", "Speed"]]) {
      const select = page.getByRole("combobox", { name: place, exact: true });
      await select.focus();
      await page.keyboard.type(option);
      assert.equal(await select.inputValue(), option.toLowerCase());
    }
  }

  /** Whether the page is as wide as the phone's screen (nothing scrolls sideways). */
  const fitsTheScreen = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);

  async function latestAnswers() {
    const list = await api("GET", `/forms/${formId}/submissions?filter=completed&limit=1`);
    const [latest] = list.body.items;
    return Object.fromEntries(Object.entries(latest.answers).map(([key, a]) => [key, (a as { value: unknown }).value]));
  }

  it("is answered on the hosted page by keyboard at phone width, with JavaScript", async () => {
    const page = await phonePage(true);
    assert.equal(await fitsTheScreen(page), true);
    await answerByKeyboard(page, true);
    assert.equal(await page.locator(".hf-multi-count").textContent(), "1 chosen");
    await screenshot(page, "question-types-phone", { fullPage: true });
    await page.getByRole("button", { name: "Submit" }).focus();
    await page.keyboard.press("Enter");
    await page.locator(".hf-thanks").waitFor();
    assert.deepEqual(await latestAnswers(), { time: "09:15", agree: 2, nps: 8, terms: true, langs: ["de"], rank: ["support", "price", "speed"], grid: { food: "good", music: "ok" } });
    await page.context().close();
  });

  it("is answered by keyboard without JavaScript, a required consent held back until ticked", async () => {
    const page = await phonePage(false);
    assert.equal(await fitsTheScreen(page), true);
    // The browser itself holds back a plain post without the required consent.
    await page.getByRole("button", { name: "Submit" }).click();
    assert.equal(await page.getByRole("checkbox", { name: "I agree to the terms" }).evaluate((box: HTMLInputElement) => box.validity.valueMissing), true);
    await answerByKeyboard(page, false);
    await page.getByRole("button", { name: "Submit" }).focus();
    await page.keyboard.press("Enter");
    await page.locator(".hf-thanks").waitFor();
    assert.deepEqual(await latestAnswers(), { time: "09:15", agree: 2, nps: 8, terms: true, langs: ["de"], rank: ["support", "price", "speed"], grid: { food: "good", music: "ok" } });
    await page.context().close();
  });
});
