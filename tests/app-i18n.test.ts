import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { ensureAppBuilt } from "@formsvc/launcher/app-build.ts";
import de from "../app/src/i18n/messages/de.json" with { type: "json" };
import en from "../app/src/i18n/messages/en.json" with { type: "json" };
import { appClient } from "./support/app-client.ts";
import { launchBrowser, openAccountMenu, screenshot, watchPage } from "./support/browser.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";

// The app in German, in Chromium against the whole running system: a person switches to Deutsch on the
// Account page, the main pages (forms list, editor, results, a form's settings, sharing and integrations,
// workspaces, account settings) show none of the English
// catalogue's texts and write dates the German way, and the choice, kept with the account, is there again
// after signing out and in (test-output/screenshots/app-de-*.png).

let sys: TestSystem;
let browser: Browser;

before(async () => {
  ensureAppBuilt(undefined, { quiet: true });
  [sys, browser] = await Promise.all([startTestSystem("app_i18n"), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await sys?.stop();
});

/** English's messages without arguments that German words differently, each matched as a whole word or phrase. */
const englishTexts = Object.entries(en)
  .filter(([key, message]) => !message.includes("{") && de[key as keyof typeof de] !== message)
  .map(([, message]) => ({ message, pattern: new RegExp(`(?<!\\p{L})${message.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?!\\p{L})`, "u") }));

/** The English catalogue texts the page shows (its visible text, its labels and titles). */
async function englishOn(page: Page): Promise<string[]> {
  const text = await page.evaluate(() => {
    const labels = Array.from(document.querySelectorAll("[aria-label], [title], [placeholder], option, optgroup"), (el) =>
      [el.getAttribute("aria-label"), el.getAttribute("title"), el.getAttribute("placeholder"), el.getAttribute("label"), el.textContent].filter(Boolean).join("\n"),
    );
    return [document.body.innerText, ...labels].join("\n");
  });
  return englishTexts.filter(({ pattern }) => pattern.test(text)).map(({ message }) => message);
}

describe("the app in German", () => {
  const email = `ute.${Date.now()}@example.com`;
  const password = "korrektes Pferd Batterie";
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let formId = "";

  before(async () => {
    const { call } = appClient(sys.url);
    await call("GET", "/session");
    assert.equal((await call("POST", "/auth/signup", { email, name: "Ute", password })).status, 201);
    const workspace = (await call("GET", "/workspaces")).body.items[0];
    const document = { title: "Umfrage", blocks: [{ id: "farbe", key: "farbe", type: "SHORT_TEXT", question: "Lieblingsfarbe" }] };
    const created = await call("POST", "/forms", { workspaceId: workspace.id, name: "Umfrage", document });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    formId = created.body.id;
    // The form's own texts are the owner's, in the form's language: German too.
    const settings = { language: "de", submitLabel: "Absenden", closedMessage: "Dieses Formular ist geschlossen.", thankYou: { title: "Danke!", text: "", buttonLabel: null, buttonUrl: null, redirectSeconds: null } };
    assert.equal((await call("PATCH", `/forms/${formId}`, { settings })).status, 200);
    assert.equal((await call("POST", `/forms/${formId}/publish`, {})).status, 200);
    const res = await fetch(`${sys.url}/f/${formId}/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ answers: { farbe: "Grün" }, completed: true }) });
    assert.equal(res.status, 200, await res.text());

    // An English browser: the app speaks English until the person chooses otherwise.
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: "en-US" });
    page = await context.newPage();
    problems = watchPage(page, [401]);
  });
  after(async () => {
    await context?.close();
  });

  async function signIn() {
    await page.goto(`${sys.url}/app/signin`);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
  }

  it("switches to Deutsch on the Account page, kept with the account", async () => {
    await signIn();
    await page.getByRole("heading", { name: "Forms", level: 1 }).waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.lang), "en");
    await openAccountMenu(page);
    await page.getByRole("link", { name: "Account" }).click();
    await page.getByRole("heading", { name: "Account", level: 1 }).waitFor();
    await page.getByLabel("Language of the app").selectOption({ label: "Deutsch" });
    await page.getByRole("heading", { name: "Konto", level: 1 }).waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.lang), "de");
    assert.equal(await page.getByLabel("Sprache der App").inputValue(), "de");
    const session = await page.evaluate(() => fetch("/app/api/session").then((r) => r.json()));
    assert.equal(session.user.locale, "de");
  });

  it("shows no English catalogue text on the main pages, and German dates", async () => {
    const pages: [string, string, () => Promise<void>][] = [
      ["forms", "/app/forms", () => page.getByRole("heading", { name: "Formulare", level: 1 }).waitFor()],
      ["editor", `/app/forms/${formId}/edit`, () => page.getByRole("heading", { name: "Blöcke" }).waitFor()],
      ["results", `/app/forms/${formId}/responses`, () => page.getByText("1 Antwort angezeigt.").waitFor()],
      ["form-settings", `/app/forms/${formId}/settings`, () => page.getByRole("button", { name: "Einstellungen speichern" }).waitFor()],
      ["share", `/app/forms/${formId}/share`, () => page.getByRole("heading", { name: "QR-Code" }).waitFor()],
      ["integrations", `/app/forms/${formId}/integrations`, () => page.getByRole("heading", { name: "Noch keine Webhooks" }).waitFor()],
      ["workspaces", "/app/workspaces", () => page.getByRole("heading", { name: "Arbeitsbereiche", level: 1 }).waitFor()],
      ["account", "/app/settings/account", () => page.getByRole("heading", { name: "Konto", level: 1 }).waitFor()],
    ];
    for (const [name, path, ready] of pages) {
      await page.goto(`${sys.url}${path}`);
      await ready();
      assert.deepEqual(await englishOn(page), [], `English texts on ${name}`);
      await screenshot(page, `app-de-${name}`);
    }
    // "28. Nov. 2026, 14:05": day, month abbreviated the German way, year (the browser's time zone).
    const since = await page.getByTestId("account-since").innerText();
    assert.match(since, /^\d{1,2}\. (Jan|Feb|März|Apr|Mai|Juni|Juli|Aug|Sept|Okt|Nov|Dez)\.? \d{4}, \d{2}:\d{2}$/);
    await page.goto(`${sys.url}/app/forms/${formId}/responses`);
    const submitted = await page.locator("[data-response-id] td").first().innerText();
    assert.match(submitted, /^\d{1,2}\. \S+ \d{4}, \d{2}:\d{2}$/);
  });

  it("still speaks German after signing out and in again", async () => {
    await openAccountMenu(page);
    await page.getByRole("button", { name: "Abmelden", exact: true }).click();
    await page.waitForURL(/\/app\/signin$/);
    await signIn();
    await page.getByRole("heading", { name: "Formulare", level: 1 }).waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.lang), "de");
    assert.deepEqual(problems, []);
  });
});
