import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { crc32, deflateSync } from "node:zlib";
import type { Browser, BrowserContext } from "playwright-core";
import { contrastRatio, fontStacks, formatRatio } from "@formsvc/form-document";
import { ensureAppBuilt } from "@formsvc/launcher/app-build.ts";
import { signedUpPerson } from "./support/app-client.ts";
import { launchBrowser, screenshot, watchPage, signedInContext } from "./support/browser.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";

// Design against the whole running system: an owner sets a theme and a thank-you screen in the app's
// Design tab (seeing both contrast ratios as the colours change, and the server refusing one below
// WCAG AA with the colour named), publishes, and a respondent meets them on the hosted form in
// Chromium, with and without JavaScript. Screenshots: design-card, design-hosted, design-thank-you.

let sys: TestSystem;
let browser: Browser;

before(async () => {
  ensureAppBuilt(undefined, { quiet: true });
  [sys, browser] = await Promise.all([startTestSystem("app_design"), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await sys?.stop();
});

const document = { title: "Workshop sign-up", blocks: [{ id: "name", key: "name", type: "SHORT_TEXT", question: "Your name", required: true }] };

const person = (label: string) => signedUpPerson(sys.url, label);
type Person = Awaited<ReturnType<typeof person>>;

async function newForm(owner: Person): Promise<string> {
  const created = await owner.call("POST", "/forms", { workspaceId: owner.workspace.id, name: "Workshop", document });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.id;
}

const signedIn = (owner: Person): Promise<BrowserContext> => signedInContext(browser, sys.url, owner.cookies);

/** A PNG of one colour (RGB, 8 bits), made here so the test needs no file. */
function solidPng(width: number, height: number, [r, g, b]: [number, number, number]): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => [r, g, b]).flat())]);
  const pixels = deflateSync(Buffer.concat(Array.from({ length: height }, () => row)));
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk("IHDR", header), chunk("IDAT", pixels), chunk("IEND", Buffer.alloc(0))]);
}

const accent = "#1a7f37";
const background = "#fff8c5";
const weakAccent = "#ffd33d";

describe("design: a theme and a thank-you screen", () => {
  let owner: Person;
  let formId: string;
  const thanks = { title: "See you at the workshop", text: "We will email you the details.", buttonLabel: "Back to the site" };
  let buttonUrl: string;

  before(async () => {
    owner = await person("design");
    formId = await newForm(owner);
    buttonUrl = `${sys.url}/app/`;
  });

  it("the Design tab shows both ratios live, is refused below 4.5:1 naming the colour, and saves a theme and a thank-you screen", async () => {
    const context = await signedIn(owner);
    const page = await context.newPage();
    const problems = watchPage(page, [400]);
    await page.goto(`${sys.url}/app/forms/${formId}/settings`);
    await page.getByRole("navigation", { name: "Form sections" }).getByRole("link", { name: "Design" }).click();
    await page.waitForURL(`**/app/forms/${formId}/design`);

    const accentRatio = page.locator('[data-contrast="accentColor"]');
    const backgroundRatio = page.locator('[data-contrast="backgroundColor"]');
    assert.match(await accentRatio.innerText(), new RegExp(`${formatRatio(contrastRatio("#ffffff", "#0969da")).replace(".", "\\.")}`));

    // A weak accent: the ratio reads as it is typed, and saving is refused by the server naming the colour.
    await page.getByLabel("Accent colour", { exact: true }).fill(weakAccent);
    await page.locator('[data-contrast="accentColor"][data-passes="false"]').waitFor();
    assert.match(await accentRatio.innerText(), new RegExp(`${formatRatio(contrastRatio("#ffffff", weakAccent)).replace(".", "\\.")}.*at least 4\\.5:1 needed`));
    await page.getByRole("button", { name: "Save design" }).click();
    await page.getByText(/body\.settings\.theme\.accentColor: white text on the accent colour has a contrast of 1\.\d\d:1; at least 4\.5:1 is needed/).waitFor();
    // The refused colour is marked at its field, by the answer's field violation.
    const accentInput = page.getByLabel("Accent colour", { exact: true });
    assert.equal(await accentInput.getAttribute("aria-invalid"), "true");
    assert.match(await page.locator(`[id="${await accentInput.getAttribute("id")}-problem"]`).innerText(), /^white text on the accent colour has a contrast of/);
    assert.equal((await owner.call("GET", `/forms/${formId}`)).body.settings.theme.accentColor, "#0969da", "nothing was stored");

    await page.getByLabel("Accent colour", { exact: true }).fill(accent);
    await page.getByLabel("Background colour", { exact: true }).fill(background);
    await page.locator('[data-contrast="accentColor"][data-passes="true"]').waitFor();
    assert.match(await accentRatio.innerText(), new RegExp(formatRatio(contrastRatio("#ffffff", accent)).replace(".", "\\.")));
    assert.match(await backgroundRatio.innerText(), new RegExp(formatRatio(contrastRatio("#1f2328", background)).replace(".", "\\.")));
    await page.getByLabel("Font").selectOption({ label: "Serif" });
    await page.getByLabel("Pill").check();
    await page.getByLabel("Logo").setInputFiles({ name: "logo.png", mimeType: "image/png", buffer: solidPng(120, 40, [26, 127, 55]) });
    await page.getByRole("img", { name: "Current logo" }).waitFor();

    await page.getByLabel("Title", { exact: true }).fill(thanks.title);
    await page.getByLabel("Text", { exact: true }).fill(thanks.text);
    await page.getByLabel("Button label").fill(thanks.buttonLabel);
    await page.getByLabel("Button link").fill(buttonUrl);
    const preview = page.getByTestId("design-preview");
    await preview.getByText(thanks.title).waitFor();
    assert.equal(await preview.evaluate((el) => getComputedStyle(el).fontFamily), fontStacks.serif.stack);
    await page.getByRole("button", { name: "Save design" }).click();
    await page.getByText("Design saved.").waitFor();
    await screenshot(page, "design-card");

    const { settings } = (await owner.call("GET", `/forms/${formId}`)).body;
    assert.deepEqual({ ...settings.theme, logo: undefined }, { accentColor: accent, backgroundColor: background, font: "serif", buttonStyle: "pill", logo: undefined, colorScheme: "light" });
    assert.match(settings.theme.logo, /^data:image\/png;base64,iVBORw0KGgo/);
    assert.deepEqual(settings.thankYou, { ...thanks, buttonUrl, redirectSeconds: null });
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("the hosted page wears the theme and shows the thank-you screen after submitting, with and without JavaScript", async () => {
    assert.equal((await owner.call("POST", `/forms/${formId}/publish`, {})).status, 200);
    const context = await browser.newContext({ viewport: { width: 900, height: 800 } });
    const page = await context.newPage();
    const problems = watchPage(page, []);
    await page.goto(`${sys.url}/f/${formId}`);
    const submit = page.locator("#hf-submit");
    const style = (selector: string, property: string) => page.locator(selector).evaluate((el, p) => getComputedStyle(el).getPropertyValue(p), property);
    assert.equal(await style("#hf-submit", "background-color"), "rgb(26, 127, 55)");
    assert.equal(await style("#hf-submit", "color"), "rgb(255, 255, 255)");
    assert.equal(await style("#hf-submit", "border-top-left-radius"), "999px");
    assert.equal(await style("body", "font-family"), fontStacks.serif.stack);
    assert.equal(await style("body", "background-color"), "rgb(255, 248, 197)");
    assert.equal(await page.locator(".hf-logo img").evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth), 120);
    await screenshot(page, "design-hosted");

    await page.getByLabel("Your name").fill("Ada");
    await submit.click();
    const screen = page.locator("#hf-thanks");
    await screen.getByRole("heading", { name: thanks.title }).waitFor();
    assert.equal(await screen.locator("#hf-thanks-text").innerText(), thanks.text);
    const button = screen.getByRole("link", { name: thanks.buttonLabel });
    assert.equal(await button.getAttribute("href"), buttonUrl);
    assert.equal(await button.evaluate((el) => getComputedStyle(el).backgroundColor), "rgb(26, 127, 55)");
    await screenshot(page, "design-thank-you");
    assert.deepEqual(problems, []);
    await context.close();

    const plain = await browser.newContext({ javaScriptEnabled: false });
    const plainPage = await plain.newPage();
    await plainPage.goto(`${sys.url}/f/${formId}`);
    await plainPage.getByLabel("Your name").fill("Grace");
    await plainPage.locator("#hf-submit").click();
    await plainPage.getByRole("heading", { name: thanks.title }).waitFor();
    assert.equal(await plainPage.locator("#hf-thanks-text").innerText(), thanks.text);
    assert.equal(await plainPage.getByRole("link", { name: thanks.buttonLabel }).getAttribute("href"), buttonUrl);
    assert.equal(await plainPage.locator("body").evaluate((el) => getComputedStyle(el).backgroundColor), "rgb(255, 248, 197)");
    await plain.close();

    const stored = await owner.call("GET", `/forms/${formId}/submissions?filter=completed`);
    assert.deepEqual(stored.body.items.map((s: { answers: { name: { value: string } } }) => s.answers.name.value).sort(), ["Ada", "Grace"]);
  });

  it("the thank-you screen goes on to its link by itself after its seconds, with and without JavaScript", async () => {
    const patched = await owner.call("PATCH", `/forms/${formId}`, { settings: { thankYou: { ...thanks, buttonUrl, redirectSeconds: 1 } } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    for (const javaScriptEnabled of [true, false]) {
      const context = await browser.newContext({ javaScriptEnabled });
      const page = await context.newPage();
      await page.goto(`${sys.url}/f/${formId}`);
      await page.getByLabel("Your name").fill(javaScriptEnabled ? "Linus" : "Barbara");
      await page.locator("#hf-submit").click();
      await page.getByText(/You will be taken to .* in 1 second\./).waitFor();
      await page.waitForURL(buttonUrl);
      await context.close();
    }
  });

  it("a theme below 4.5:1 is refused with the colour named, on both doors; a button without its link too", async () => {
    const refused = async (settings: object) => {
      const answer = await owner.call("PATCH", `/forms/${formId}`, { settings });
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      return answer.body.error as string;
    };
    // The colours as field violations too, by their paths in the body.
    const both = await owner.call("PATCH", `/forms/${formId}`, { settings: { theme: { accentColor: weakAccent, backgroundColor: "#444c56" } } });
    assert.equal(both.status, 400);
    assert.deepEqual(
      both.body.fields.map((f: { key: string; message: string }) => [f.key, f.message.replace(/\d+\.\d\d:1/, "N:1")]),
      [
        ["settings.theme.accentColor", "white text on the accent colour has a contrast of N:1; at least 4.5:1 is needed (WCAG AA)"],
        ["settings.theme.backgroundColor", "the text on the background colour has a contrast of N:1; at least 4.5:1 is needed (WCAG AA)"],
      ],
    );
    assert.match(await refused({ theme: { accentColor: weakAccent } }), /^body\.settings\.theme\.accentColor: white text on the accent colour has a contrast of 1\.\d\d:1; at least 4\.5:1 is needed \(WCAG AA\)$/);
    assert.match(await refused({ theme: { backgroundColor: "#444c56" } }), /^body\.settings\.theme\.backgroundColor: the text on the background colour has a contrast of/);
    assert.match(await refused({ theme: { accentColor: "green" } }), /theme\.accentColor: must be a colour as #rrggbb/);
    assert.match(await refused({ thankYou: { buttonLabel: "Go" } }), /thankYou\.buttonUrl: is required with a buttonLabel/);
    assert.match(await refused({ thankYou: { buttonLabel: "Go", buttonUrl: "javascript:alert(1)" } }), /thankYou\.buttonUrl: must be an http or https URL/);
    const key = (await owner.call("POST", "/api-keys", { name: "design" })).body.key as string;
    const viaApi = await fetch(`${sys.url}/api/v1/forms/${formId}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ settings: { theme: { accentColor: weakAccent } } }),
    });
    assert.equal(viaApi.status, 400);
    const apiError = await viaApi.json();
    assert.match(apiError.error, /settings\.theme\.accentColor: white text on the accent colour has a contrast of/);
    assert.deepEqual(apiError.fields.map((f: { key: string }) => f.key), ["settings.theme.accentColor"]);
    assert.equal((await owner.call("GET", `/forms/${formId}`)).body.settings.theme.accentColor, accent, "the saved theme stands");
  });
});
