import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import type { Browser, Page } from "playwright-core";
import { ensureAppBuilt } from "@formsvc/launcher/app-build.ts";
import { signedUpPerson } from "./support/app-client.ts";
import { launchBrowser, screenshot, signedInContext, watchPage } from "./support/browser.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";

// Insights against the whole running system: scripted visitors in Chromium open a branching form and
// leave, start and abandon it at its second question, or complete it; a robot's user agent and a
// prefetch count nothing. GET /api/v1/forms/:id/insights and the app's Insights view give the exact
// counts, and no table holds a visitor's address or user agent (test-output/screenshots/app-insights.png).

let sys: TestSystem;
let browser: Browser;

before(async () => {
  ensureAppBuilt(undefined, { quiet: true });
  [sys, browser] = await Promise.all([startTestSystem("insights"), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await sys?.stop();
});

/** Pro goes on to the team's size; Free jumps over it to the last page. */
const document = {
  title: "Plans",
  blocks: [
    { id: "b_plan", key: "plan", type: "MULTIPLE_CHOICE", question: "Which plan?", required: true, options: [{ id: "o_free", text: "Free" }, { id: "o_pro", text: "Pro" }] },
    { id: "pb1", type: "PAGE_BREAK" },
    { id: "b_team", key: "team", type: "NUMBER", question: "Team size", required: true },
    { id: "pb2", type: "PAGE_BREAK" },
    { id: "b_note", key: "note", type: "LONG_TEXT", question: "Anything else?" },
  ],
  logic: [{ when: { conditions: [{ question: "b_plan", operator: "EQUALS", value: "o_free" }] }, then: [{ action: "JUMP", page: 3 }] }],
};

/** Each visitor a browser of its own (its own user agent): the marker lets the database be searched for it. */
const agentMarker = "InsightsVisitor";
const personAgent = (n: number) => `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.${n}.0 Safari/537.36 ${agentMarker}/${n}`;
const robotAgent = `Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html) ${agentMarker}/bot`;

describe("insights: what visitors did, counted without tracking them", () => {
  let owner: Awaited<ReturnType<typeof signedUpPerson>>;
  let formId: string;
  let apiKey: string;
  const today = new Date().toISOString().slice(0, 10);

  before(async () => {
    owner = await signedUpPerson(sys.url, "insights");
    const created = await owner.call("POST", "/forms", { workspaceId: owner.workspace.id, name: "Plans", document });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    formId = created.body.id;
    assert.equal((await owner.call("POST", `/forms/${formId}/publish`, {})).status, 200);
    const key = await owner.call("POST", "/api-keys", { name: "insights" });
    assert.equal(key.status, 201);
    apiKey = key.body.key;
  });

  /** A visitor's page on the form, in a browser context of their own. */
  async function visit(agent: string, act: (page: Page) => Promise<void>) {
    const context = await browser.newContext({ userAgent: agent });
    const page = await context.newPage();
    const problems = watchPage(page, []);
    await page.goto(`${sys.url}/f/${formId}`);
    await page.getByText("Which plan?").waitFor();
    await act(page);
    await context.close();
    assert.deepEqual(problems, []);
  }
  const beaconSent = (page: Page, event: string) =>
    page.waitForRequest((req) => req.url().endsWith(`/f/${formId}/insights`) && req.postData()?.includes(`"event":"${event}"`) === true);
  /**
   * Closes the tab: a started visit's pagehide beacon goes out (the counts say when it arrived). Not a
   * navigation away: Chromium sends a beacon of a page being left with the browser's own user agent
   * (HeadlessChrome, a robot's), not the one this context gives its pages.
   */
  const leave = (page: Page) => page.close({ runBeforeUnload: true });

  const insights = async (query = "") => {
    const res = await fetch(`${sys.url}/api/v1/forms/${formId}/insights${query}`, { headers: { authorization: `Bearer ${apiKey}` } });
    return { status: res.status, body: await res.json() };
  };

  it("a robot and a prefetch count nothing", async () => {
    // First, so that anything they counted would be in the counts the next test waits for.
    await visit(robotAgent, async (page) => {
      const started = beaconSent(page, "start");
      await page.getByLabel("Pro", { exact: true }).check();
      await started;
    });
    const prefetch = await fetch(`${sys.url}/f/${formId}`, { headers: { "user-agent": personAgent(9), "sec-purpose": "prefetch" } });
    assert.equal(prefetch.status, 200);
  });

  it("counts a visitor who left, one who gave up at the second question and one who completed, exactly", async () => {
    // Opens and leaves without answering.
    await visit(personAgent(1), async (page) => leave(page));
    // Chooses Pro, is shown the team's size, and leaves.
    await visit(personAgent(2), async (page) => {
      await page.getByLabel("Pro", { exact: true }).check();
      await page.getByRole("button", { name: "Next" }).click();
      await page.getByLabel("Team size").waitFor();
      await leave(page);
      // Closing the browser now could cancel the beacon on its way.
      await eventuallyPasses(() => insights(), (r) => r.body.questions?.[1]?.dropOffs === 1);
    });
    // Chooses Free, jumps over the team's size, completes.
    await visit(personAgent(3), async (page) => {
      await page.getByLabel("Free", { exact: true }).check();
      await page.getByRole("button", { name: "Next" }).click();
      await page.getByLabel("Anything else?").fill("Nothing");
      const completed = beaconSent(page, "complete");
      await page.getByRole("button", { name: "Submit" }).click();
      await page.getByRole("heading", { name: "Thank you!" }).waitFor();
      await completed;
    });

    const expected = {
      views: 3,
      visitors: 3,
      starts: 2,
      completions: 1,
      completionRate: 0.5,
      questions: [
        { key: "plan", label: "Which plan?", shown: 2, answered: 2, dropOffs: 0 },
        { key: "team", label: "Team size", shown: 1, answered: 0, dropOffs: 1 },
        { key: "note", label: "Anything else?", shown: 1, answered: 1, dropOffs: 0 },
      ],
      days: [{ date: today, views: 3, starts: 2, completions: 1 }],
    };
    const { medianSecondsToComplete, ...counts } = (
      await eventuallyPasses(
        () => insights(),
        (r) => r.body.completions === 1 && r.body.questions?.[1]?.dropOffs === 1 && r.body.questions?.[2]?.answered === 1,
      )
    ).body;
    assert.deepEqual(counts, expected);
    assert.equal(typeof medianSecondsToComplete, "number");

    // A range of days without visits; a range outside what a timestamp holds is a 400 naming it.
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    assert.deepEqual((await insights(`?since=${tomorrow}`)).body.views, 0);
    const early = await insights("?since=0000-01-01T00:00:00Z");
    assert.equal(early.status, 400);
    assert.match(early.body.error, /since/);
    const stranger = await signedUpPerson(sys.url, "stranger");
    assert.equal((await stranger.call("GET", `/forms/${formId}/insights`)).status, 404, "a form that is not yours is not found");
  });

  it("shows the same counts on the Insights view", async () => {
    const context = await signedInContext(browser, sys.url, owner.cookies);
    const page = await context.newPage();
    await page.goto(`${sys.url}/app/forms/${formId}/responses`);
    await page.getByRole("tab", { name: "Insights" }).click();
    const funnel = page.getByRole("list", { name: "Funnel" });
    await funnel.waitFor();
    assert.deepEqual((await funnel.locator("li").allInnerTexts()).map((t) => t.replace(/\s+/g, " ").trim()), ["Views 3 (100%)", "Starts 2 (67%)", "Completions 1 (33%)"]);
    const dropOffs = page.getByRole("list", { name: "Drop-off per question" });
    assert.deepEqual((await dropOffs.locator("li").allInnerTexts()).map((t) => t.replace(/\s+/g, " ").trim()), [
      "Which plan? 0 left of 2 shown (0%)",
      "Team size 1 left of 1 shown (100%)",
      "Anything else? 0 left of 1 shown (0%)",
    ]);
    await page.getByRole("img", { name: `Views by day: ${today} 3` }).waitFor();
    await page.getByRole("img", { name: `Completions by day: ${today} 1` }).waitFor();
    await screenshot(page, "app-insights");
    await context.close();
  });

  it("answers a malformed beacon 400 and one to a form nobody can answer 404", async () => {
    const beacon = (id: string, body: string) =>
      fetch(`${sys.url}/f/${id}/insights`, { method: "POST", headers: { "content-type": "text/plain;charset=UTF-8", "user-agent": personAgent(8) }, body });
    const notJson = await beacon(formId, "start");
    assert.deepEqual([notJson.status, await notJson.json()], [400, { error: "body: must be JSON" }]);
    const unknownEvent = await beacon(formId, '{"event":"stare"}');
    assert.equal(unknownEvent.status, 400);
    assert.match((await unknownEvent.json()).error, /event/);
    assert.equal((await beacon("nosuchform", '{"event":"start"}')).status, 404);
  });

  it("keeps no visitor's address or user agent in the database", async () => {
    const db = new pg.Client({ connectionString: sys.databaseUrl });
    await db.connect();
    try {
      const { rows: tables } = await db.query(
        `select table_schema, table_name from information_schema.tables
          where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`,
      );
      assert.ok(tables.some((t) => t.table_name === "insight_visitors"));
      const holding: string[] = [];
      for (const { table_schema: schema, table_name: name } of tables) {
        // The address is the owner's too (their sign-in, the audit log): a respondent's would be in the respondents' tables.
        const respondents = schema !== "identity";
        const { rows } = await db.query(
          `select count(*)::int as n from "${schema}"."${name}" t where t::text like $1 or ($2 and (t::text like '%127.0.0.1%' or t::text like '%::1%'))`,
          [`%${agentMarker}%`, respondents],
        );
        if (rows[0].n > 0) holding.push(`${schema}.${name}`);
      }
      assert.deepEqual(holding, []);
    } finally {
      await db.end();
    }
  });
});
