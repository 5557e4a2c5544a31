import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { refusals } from "@formsvc/form-document/response-rules";
import { signedUpPerson } from "./support/app-client.ts";
import { ensureAppBuilt } from "@formsvc/launcher/app-build.ts";
import { launchBrowser, signedInContext, watchPage } from "./support/browser.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";

// The response rules of issue 31 against the whole running system. Single-use links: minted over the API,
// a form requiring one refuses without it (a page, a 403 on the endpoint), the real page completes with one
// in Chromium, and a second completion with the same token is refused, with and without JavaScript. The
// proof-of-work captcha: the real ALTCHA widget, served by the gateway, solves the challenge in Chromium; a
// completion without a solution, or with one already spent, is refused.

let sys: TestSystem;
let browser: Browser;

before(async () => {
  ensureAppBuilt(undefined, { quiet: true });
  [sys, browser] = await Promise.all([startTestSystem("response-rules"), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await sys?.stop();
});

const surveyDocument = { title: "Staff survey", blocks: [{ id: "b_name", key: "name", type: "SHORT_TEXT", question: "Your name", required: true }] };

describe("single-use links", () => {
  let formId: string;
  let owner: Awaited<ReturnType<typeof signedUpPerson>>;
  let api: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

  before(async () => {
    owner = await signedUpPerson(sys.url, "links");
    const created = await owner.call("POST", "/forms", { workspaceId: owner.workspace.id, name: "Staff survey", document: surveyDocument });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    formId = created.body.id;
    const patched = await owner.call("PATCH", `/forms/${formId}`, { settings: { requireSingleUseLink: true } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal((await owner.call("POST", `/forms/${formId}/publish`, {})).status, 200);
    const key = await owner.call("POST", "/api-keys", { name: "links" });
    assert.equal(key.status, 201);
    api = async (method, path, body) => {
      const res = await fetch(`${sys.url}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${key.body.key}`, ...(body ? { "content-type": "application/json" } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: await res.json() };
    };
  });

  const respond = (token: string | undefined, name: string) =>
    fetch(`${sys.url}/f/${formId}/responses${token === undefined ? "" : `?t=${encodeURIComponent(token)}`}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ answers: { name }, completed: true }),
    }).then(async (res) => ({ status: res.status, body: await res.json() }));

  it("mints links over the API, refuses bad input, and lists them without their tokens", async () => {
    const minted = await api("POST", `/forms/${formId}/links`, { count: 3, expiresAt: new Date(Date.now() + 86_400_000).toISOString() });
    assert.equal(minted.status, 201, JSON.stringify(minted.body));
    assert.equal(minted.body.items.length, 3);
    for (const link of minted.body.items) {
      assert.match(link.token, /^[A-Za-z0-9]{43}$/);
      const url = new URL(link.url);
      assert.equal(`${url.pathname}${url.search}`, `/f/${formId}?t=${link.token}`);
      assert.equal(link.usedAt, null);
    }
    const tooMany = await api("POST", `/forms/${formId}/links`, { count: 5000 });
    assert.equal(tooMany.status, 400);
    assert.match(tooMany.body.error, /count/);
    const past = await api("POST", `/forms/${formId}/links`, { expiresAt: "2020-01-01T00:00:00Z" });
    assert.equal(past.status, 400);
    assert.match(past.body.error, /expiresAt/);
    const listed = await api("GET", `/forms/${formId}/links`);
    assert.equal(listed.status, 200);
    assert.equal(listed.body.items.length, 3);
    assert.ok(listed.body.items.every((link: object) => !("token" in link)));
    assert.equal((await api("GET", `/forms/nosuchform/links`)).status, 404);
  });

  it("refuses without a usable token: a clear page, a 403 on the endpoint", async () => {
    const page = await fetch(`${sys.url}/f/${formId}`);
    assert.equal(page.status, 403);
    assert.ok((await page.text()).includes(refusals.linkMissing.replace(/'/g, "&#39;")));
    const unknown = await fetch(`${sys.url}/f/${formId}?t=not-a-token`);
    assert.equal(unknown.status, 403);
    assert.ok((await unknown.text()).includes("This link is not valid for this form"));
    const missing = await respond(undefined, "Ann");
    assert.equal(missing.status, 403);
    assert.equal(missing.body.error, refusals.linkMissing);
  });

  it("completes once with a token in Chromium; a second completion with it is refused", async () => {
    const [link] = (await api("POST", `/forms/${formId}/links`, {})).body.items;
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems = watchPage(page, []);
    const opened = `${sys.url}/f/${formId}?t=${link.token}`;
    await page.goto(opened);
    await page.getByLabel("Your name").fill("Ann");
    await page.getByRole("button", { name: "Submit" }).click();
    await page.getByRole("heading", { name: "Thank you!" }).waitFor();
    await context.close();
    assert.deepEqual(problems, []);

    const again = await respond(link.token, "Ann again");
    assert.equal(again.status, 403);
    assert.equal(again.body.error, refusals.linkUsed);
    const reopened = await fetch(opened);
    assert.equal(reopened.status, 403);
    assert.ok((await reopened.text()).includes("This link has already been used"));
    const listed = (await api("GET", `/forms/${formId}/links`)).body.items.find((l: { id: string }) => l.id === link.id);
    assert.ok(listed.usedAt);
    const submissions = await api("GET", `/forms/${formId}/submissions`);
    assert.deepEqual(submissions.body.items.map((s: { id: string }) => s.id), [listed.responseId]);
  });

  it("uses a token once when two completions race, and on the no-JS path", async () => {
    const [raced, plain] = (await api("POST", `/forms/${formId}/links`, { count: 2 })).body.items;
    const results = await Promise.all([respond(raced.token, "One"), respond(raced.token, "Two")]);
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 403]);

    const post = (token: string) =>
      fetch(`${sys.url}/f/${formId}?t=${token}`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "name=Plain", redirect: "manual" });
    const first = await post(plain.token);
    assert.equal(first.status, 200);
    assert.ok((await first.text()).includes("Thank you!"));
    const second = await post(plain.token);
    assert.equal(second.status, 403);
    assert.ok((await second.text()).includes("This link has already been used"));
  });

  it("revokes an unused link, and not a used one", async () => {
    const [link] = (await api("POST", `/forms/${formId}/links`, {})).body.items;
    const revoked = await api("POST", `/forms/${formId}/links/${link.id}/revoke`);
    assert.equal(revoked.status, 200);
    assert.ok(revoked.body.revokedAt);
    const refused = await respond(link.token, "Late");
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error, refusals.linkRevoked);
    const used = (await api("GET", `/forms/${formId}/links`)).body.items.find((l: { usedAt: string | null }) => l.usedAt);
    assert.equal((await api("POST", `/forms/${formId}/links/${used.id}/revoke`)).status, 409);
  });

  it("the Share tab requires links, mints a batch to copy, and shows which were used", async () => {
    const context = await signedInContext(browser, sys.url, owner.cookies);
    const share = await context.newPage();
    const problems = watchPage(share, []);
    await share.goto(`${sys.url}/app/forms/${formId}/share`);
    const required = share.getByLabel("Take responses only through single-use links");
    await required.waitFor();
    assert.equal(await required.isChecked(), true, "set over the API above");
    await share.getByLabel("How many links").fill("2");
    await share.getByRole("button", { name: "Create links" }).click();
    const minted = share.getByLabel("New links, one a line");
    await minted.waitFor();
    const urls = (await minted.inputValue()).split("\n");
    assert.equal(urls.length, 2);
    for (const url of urls) assert.match(url, new RegExp(`/f/${formId}\\?t=[A-Za-z0-9]{43}$`));
    const token = new URL(urls[0]).searchParams.get("t")!;
    assert.equal((await respond(token, "From the app")).status, 200);
    await share.reload();
    await share.getByText(/Used /).first().waitFor();
    // The box follows the saved setting, so it changes once the save is answered.
    await required.click();
    await share.getByText("Anyone with the form's link may answer it again.").waitFor();
    assert.equal((await respond(undefined, "Anyone")).status, 200);
    await context.close();
    assert.deepEqual(problems, []);
  });
});

describe("proof-of-work captcha", () => {
  let formId: string;

  before(async () => {
    const owner = await signedUpPerson(sys.url, "captcha");
    const created = await owner.call("POST", "/forms", { workspaceId: owner.workspace.id, name: "Contact", document: surveyDocument });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    formId = created.body.id;
    const patched = await owner.call("PATCH", `/forms/${formId}`, { settings: { proofOfWork: { workFactor: 200 } } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.deepEqual(patched.body.settings.proofOfWork, { workFactor: 200 });
    assert.equal((await owner.call("POST", `/forms/${formId}/publish`, {})).status, 200);
  });

  const respond = (body: object) =>
    fetch(`${sys.url}/f/${formId}/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then(async (res) => ({
      status: res.status,
      body: await res.json(),
    }));

  it("is solved by the real widget in Chromium; a missing or replayed solution is refused", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems = watchPage(page, []);
    const outside: string[] = [];
    page.on("request", (req) => void (new URL(req.url()).origin === new URL(sys.url).origin || req.url().startsWith("blob:") || req.url().startsWith("data:") || outside.push(req.url())));
    await page.goto(`${sys.url}/f/${formId}`);
    await page.waitForFunction(() => (document.querySelector("altcha-widget") as unknown as { getState?(): string } | null)?.getState?.() === "verified");
    await page.getByLabel("Your name").fill("Bea");
    const sent = page.waitForRequest((req) => req.url().endsWith(`/f/${formId}/responses`) && req.method() === "POST");
    await page.getByRole("button", { name: "Submit" }).click();
    await page.getByRole("heading", { name: "Thank you!" }).waitFor();
    const solution = ((await sent).postDataJSON() as { captcha?: string }).captcha;
    await context.close();
    assert.deepEqual(problems, []);
    assert.deepEqual(outside, [], "the page calls no one else");
    assert.ok(solution, "the completion carried the widget's solution");

    const replayed = await respond({ answers: { name: "Bea again" }, completed: true, captcha: solution });
    assert.equal(replayed.status, 403);
    assert.equal(replayed.body.error, refusals.captchaReplayed);
    const missing = await respond({ answers: { name: "Bot" }, completed: true });
    assert.equal(missing.status, 403);
    assert.equal(missing.body.error, refusals.captchaMissing);
    const forged = await respond({ answers: { name: "Bot" }, completed: true, captcha: Buffer.from("{}").toString("base64") });
    assert.equal(forged.status, 403);
    assert.equal(forged.body.error, refusals.captchaInvalid);
    // A partial save needs none: the check binds the completion.
    assert.equal((await respond({ answers: { name: "Half" } })).status, 200);
  });

  it("refuses a plain post without a solution with the form again and the reason", async () => {
    const res = await fetch(`${sys.url}/f/${formId}`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "name=NoScript" });
    assert.equal(res.status, 403);
    assert.ok((await res.text()).includes("Please wait until the check that you are not a robot has finished"));
  });

  it("answers a form without the setting no challenge", async () => {
    const res = await fetch(`${sys.url}/f/nosuchform/captcha`);
    assert.equal(res.status, 404);
  });
});
