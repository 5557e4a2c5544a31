import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import axe from "axe-core";
import type { Browser } from "playwright-core";
import { pageTexts } from "../gateway/src/hosted/page-messages.ts";
import { englishTextsIn } from "../gateway/src/hosted/testing/english-texts.ts";
import { launchBrowser, screenshot, watchPage } from "./support/browser.ts";
import { startReceiver } from "./support/receiver.ts";
import { createUserWithKey, startTestSystem, type TestSystem } from "./support/system.ts";

// Hosted forms in the respondent's language, against the whole running system in Chromium: a form whose
// settings.language is de, fr or ja shows no English system text with or without JavaScript and validates
// in its language; an Arabic form runs right to left, fits a phone and passes axe.

let sys: TestSystem;
let owner: Awaited<ReturnType<typeof createUserWithKey>>;
let browser: Browser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
before(async () => {
  [sys, browser, receiver] = await Promise.all([startTestSystem("hosted_languages", { WEBHOOK_ALLOW_PRIVATE_URLS: "true" }), launchBrowser(), startReceiver()]);
  owner = await createUserWithKey(sys, "owner@example.com");
});
after(async () => {
  await browser?.close();
  await sys?.stop();
  await receiver?.close();
});

/** A published two-page form in `language`: its own texts (given in that language) on both pages. */
async function publishedForm(language: string, own: { title: string; name: string; choice: string; options: readonly string[]; file: string; rating: string }) {
  const document = {
    title: own.title,
    blocks: [
      { type: "SHORT_TEXT", key: "name", question: own.name, required: true },
      { type: "MULTIPLE_CHOICE", key: "choice", question: own.choice, options: [{ id: "a", text: own.options[0] }, { id: "b", text: own.options[1] }] },
      { type: "FILE", key: "upload", question: own.file },
      { type: "PAGE_BREAK" },
      { type: "RATING", key: "rating", question: own.rating },
    ],
  };
  const created = await owner.api("POST", "/forms", { workspaceId: owner.workspace.id, name: own.title, document });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const patched = await owner.api("PATCH", `/forms/${created.body.id}`, { settings: { language } });
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  assert.equal(patched.body.settings.language, language);
  await sys.cli("form:publish", "--id", created.body.id);
  return created.body.id as string;
}

const forms = {
  de: { title: "Vereinsfest", name: "Ihr Name", choice: "Mahlzeit", options: ["Fleisch", "Vegetarisch"], file: "Foto", rating: "Wie gefällt es Ihnen?" },
  fr: { title: "Fête du club", name: "Votre nom", choice: "Repas", options: ["Viande", "Végétarien"], file: "Photo", rating: "Votre avis" },
  ja: { title: "クラブの集い", name: "お名前", choice: "食事", options: ["肉", "ベジタリアン"], file: "写真", rating: "満足度" },
} as const;

for (const [language, own] of Object.entries(forms) as [keyof typeof forms, (typeof forms)[keyof typeof forms]][]) {
  describe(`a form in ${language}`, () => {
    const texts = pageTexts(language);
    let formId: string;
    before(async () => {
      formId = await publishedForm(language, own);
    });

    it("shows no English system text with JavaScript, and says a required answer is missing in its language", async () => {
      const page = await browser.newPage();
      const problems = watchPage(page, []);
      await page.goto(`${sys.url}/f/${formId}`);
      assert.equal(await page.getAttribute("html", "lang"), language);
      await page.getByRole("button", { name: texts.text("next") }).click();
      const error = page.locator('[data-key="name"] .hf-error');
      await error.filter({ hasText: texts.text("questionRequired") }).waitFor();
      assert.deepEqual(englishTextsIn(await page.content()), []);
      assert.deepEqual(englishTextsIn(await page.locator("body").innerText()), []);
      await screenshot(page, `hosted-language-${language}`);

      await page.getByLabel(own.name).fill("Ada");
      await page.getByRole("button", { name: texts.text("next") }).click();
      await page.locator("#hf-progress-label").filter({ hasText: texts.text("pageOf", { page: 2, pages: 2 }) }).waitFor();
      await page.getByRole("button", { name: texts.text("submit") }).click();
      await page.locator("#hf-thanks-title").filter({ hasText: texts.text("thankYouTitle") }).waitFor();
      assert.deepEqual(englishTextsIn(await page.locator("body").innerText()), []);
      assert.deepEqual(problems, []);
      await page.close();
    });

    it("shows no English system text without JavaScript, and refuses a missing answer in its language", async () => {
      const context = await browser.newContext({ javaScriptEnabled: false });
      const page = await context.newPage();
      await page.goto(`${sys.url}/f/${formId}`);
      assert.equal(await page.getAttribute("html", "lang"), language);
      assert.deepEqual(englishTextsIn(await page.content()), []);
      await context.close();
      // Posted as the page's form posts, past the browser's own check of required fields (which speaks its UI's language).
      const posted = await fetch(`${sys.url}/f/${formId}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ name: "" }).toString(),
      });
      assert.equal(posted.status, 400);
      const html = await posted.text();
      assert.match(html, new RegExp(`<html lang="${language}"`));
      assert.ok(html.includes(`role="alert">${texts.text("questionRequired")}</p>`), "the missing answer's message in the form's language");
      assert.ok(html.includes(texts.text("checkAnswers")));
      assert.deepEqual(englishTextsIn(html), []);
    });
  });
}

describe("a form in Arabic", () => {
  it("runs right to left, mirrored, without sideways scroll on a phone, and axe finds nothing serious", async () => {
    const formId = await publishedForm("ar", { title: "استبيان العيادة", name: "الاسم", choice: "الموعد", options: ["صباحًا", "مساءً"], file: "صورة", rating: "التقييم" });
    // Without the page's CSP for axe's own script.
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, bypassCSP: true });
    const page = await context.newPage();
    await page.goto(`${sys.url}/f/${formId}`);
    assert.equal(await page.getAttribute("html", "dir"), "rtl");
    assert.equal(await page.evaluate(() => getComputedStyle(document.body).direction), "rtl");
    // A missing answer's message shown too: every part of the page laid out.
    await page.getByRole("button", { name: pageTexts("ar").text("next") }).click();
    await page.locator('[data-key="name"] .hf-error').filter({ hasText: pageTexts("ar").text("questionRequired") }).waitFor();
    const width = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
    assert.ok(width.scroll <= width.client, `sideways scroll: ${width.scroll} > ${width.client}`);

    // Mirrored: an option's radio right of its label; on page two Back first, so on the right of Submit.
    const radio = (await page.getByLabel("صباحًا").boundingBox())!;
    const label = (await page.locator("label", { hasText: "صباحًا" }).boundingBox())!;
    assert.ok(radio.x > label.x, "the radio is right of its label");
    await screenshot(page, "hosted-language-ar-390");
    await page.getByLabel("الاسم").fill("ليلى");
    await page.getByRole("button", { name: pageTexts("ar").text("next") }).click();
    await page.locator("#hf-back").waitFor();
    const back = (await page.locator("#hf-back").boundingBox())!;
    const submit = (await page.locator("#hf-submit").boundingBox())!;
    assert.ok(back.x > submit.x, "Back is right of Submit");
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth), true, "no sideways scroll on page two");

    await page.addScriptTag({ content: axe.source });
    const violations = await page.evaluate(async () => {
      const result = await (window as unknown as { axe: typeof axe }).axe.run(document);
      return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.help}`);
    });
    assert.deepEqual(violations, []);
    await context.close();
  });
});

describe("an English form with a German translation", () => {
  const document = {
    title: "Club party",
    blocks: [
      { id: "name", key: "name", type: "SHORT_TEXT", question: "Your name", required: true },
      { id: "meal", key: "meal", type: "MULTIPLE_CHOICE", question: "Meal", options: [{ id: "veg", text: "Vegetarian" }, { id: "meat", text: "Meat" }] },
    ],
  };
  const german = { title: "Vereinsfest", "name.question": "Ihr Name", "meal.question": "Essen", "meal.options.veg": "Vegetarisch", "meal.options.meat": "Fleisch" };
  let formId: string;

  it("is not published while the German translation misses a text, and the refusal names it", async () => {
    const created = await owner.api("POST", "/forms", { workspaceId: owner.workspace.id, name: "Club party", document });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    formId = created.body.id;
    const { "meal.options.meat": _left, ...incomplete } = german;
    const patched = await owner.api("PATCH", `/forms/${formId}`, { settings: { languages: [{ language: "de", texts: incomplete }] } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    await assert.rejects(sys.cli("form:publish", "--id", formId), /cannot publish: the de translation misses a text: meal\.options\.meat \(\\?"Meat\\?"\)/);
    assert.equal((await fetch(`${sys.url}/f/${formId}`)).status, 404, "still a draft");

    assert.equal((await owner.api("PATCH", `/forms/${formId}`, { settings: { languages: [{ language: "de", texts: german }] } })).status, 200);
    await sys.cli("form:publish", "--id", formId);
    assert.equal((await owner.api("POST", "/webhooks", { formId, url: receiver.url })).status, 201);
  });

  it("is German for Accept-Language: de and for ?lang=de, English otherwise", async () => {
    const page = async (query: string, acceptLanguage: string) => {
      const res = await fetch(`${sys.url}/f/${formId}${query}`, { headers: { "accept-language": acceptLanguage } });
      assert.equal(res.status, 200);
      return res.text();
    };
    const byHeader = await page("", "de-DE,de;q=0.9,en;q=0.5");
    assert.match(byHeader, /<html lang="de" dir="ltr">/);
    assert.match(byHeader, /<h1 id="hf-title">Vereinsfest<\/h1>/);
    assert.match(byHeader, />Ihr Name <span class="hf-required">\(Pflichtfeld\)<\/span><\/label>/);
    assert.match(byHeader, /<label for="[^"]+">Fleisch<\/label>/);
    assert.match(byHeader, />Absenden<\/button>/);
    assert.match(await page("?lang=de", "en"), /<html lang="de"[\s\S]*Vereinsfest/);
    const english = await page("", "fr-FR,fr;q=0.9");
    assert.match(english, /<html lang="en"[\s\S]*<h1 id="hf-title">Club party<\/h1>/);
    assert.match(english, /<nav class="hf-languages" aria-label="Language"><ul><li><a href="\/f\/[^"]+\?lang=en" hreflang="en" lang="en" aria-current="true">English<\/a><\/li><li><a href="\/f\/[^"]+\?lang=de" hreflang="de" lang="de">Deutsch<\/a><\/li><\/ul><\/nav>/);
  });

  it("switches language on the page; the answers land under the same keys, stored and delivered with language de and English labels", async () => {
    const context = await browser.newContext({ locale: "en-GB" });
    const page = await context.newPage();
    await page.goto(`${sys.url}/f/${formId}`);
    assert.equal(await page.getAttribute("html", "lang"), "en");
    await page.getByRole("link", { name: "Deutsch" }).click();
    await page.getByLabel("Ihr Name").fill("Grete");
    await page.getByLabel("Fleisch").check();
    const saved = page.waitForResponse((res) => res.request().method() === "POST" && res.url().endsWith("/responses"));
    await page.getByRole("button", { name: "Absenden" }).click();
    assert.equal((await saved).status(), 200);
    await page.locator("#hf-thanks-title").filter({ hasText: "Vielen Dank!" }).waitFor();
    await context.close();
    const stored = await owner.api("GET", `/forms/${formId}/submissions?filter=completed`);
    assert.equal(stored.status, 200);
    assert.equal(stored.body.items.length, 1);
    assert.equal(stored.body.items[0].answers.name.value, "Grete");
    assert.equal(stored.body.items[0].answers.name.label, "Your name", "labels stay in the form's language");
    assert.equal(stored.body.items[0].answers.meal.value, "meat");
    assert.equal(stored.body.items[0].language, "de");

    await receiver.waitFor(1);
    const { data } = receiver.received[0].body;
    assert.equal(data.language, "de");
    assert.deepEqual(
      data.fields.map((f: { label: string; value: unknown }) => [f.label, f.value]),
      [["Your name", "Grete"], ["Meal", "meat"]],
    );
    assert.deepEqual(data.fields[1].options, [{ id: "veg", text: "Vegetarian" }, { id: "meat", text: "Meat" }]);
  });

  it("records the language of a page posted without JavaScript, and the form's own when the page names none", async () => {
    const post = (fields: Record<string, string>) =>
      fetch(`${sys.url}/f/${formId}`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });
    const german = await post({ _language: "de", name: "Hans" });
    assert.equal(german.status, 200);
    assert.match(await german.text(), /<html lang="de"[\s\S]*Vielen Dank!/);
    const unnamed = await fetch(`${sys.url}/f/${formId}/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ answers: { name: "Jo" }, completed: true }) });
    assert.equal(unnamed.status, 200);
    const refused = await fetch(`${sys.url}/f/${formId}/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ answers: { name: "X" }, language: "not a tag" }) });
    assert.equal(refused.status, 400);
    assert.match((await refused.json()).error, /language/);
    const stored = await owner.api("GET", `/forms/${formId}/submissions?filter=completed`);
    const byName = Object.fromEntries(stored.body.items.map((s: { answers: { name: { value: string } }; language: string }) => [s.answers.name.value, s.language]));
    assert.deepEqual(byName, { Grete: "de", Hans: "de", Jo: "en" });
  });
});

describe("the embed's popup", () => {
  it("names its close button in the language of the embedding page", async () => {
    const formId = await publishedForm("de", forms.de);
    const page = await browser.newPage();
    await page.setContent(
      `<!doctype html><html lang="de-AT"><body><button type="button" data-formsvc-popup="${sys.url}/f/${formId}">Anmelden</button><script src="${sys.url}/embed.js"></script></body></html>`,
    );
    await page.waitForFunction(() => "formsvcEmbed" in window);
    await page.getByRole("button", { name: "Anmelden" }).click();
    const dialog = page.getByRole("dialog", { name: "Anmelden" });
    await dialog.getByRole("button", { name: "Schließen" }).click();
    await dialog.waitFor({ state: "detached" });
    await page.close();
  });
});
