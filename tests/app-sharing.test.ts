import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { ensureAppBuilt } from "@formsvc/launcher/app-build.ts";
import { encodeQr, quietZone } from "../app/src/lib/qr.ts";
import { appClient } from "./support/app-client.ts";
import { launchBrowser, screenshot, watchPage, signedInContext } from "./support/browser.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";

// Sharing, as an owner and a visitor of another site would: the Share tab's link (copied), prefilled
// hidden fields, the embed codes pasted into a page served from another local port (a plain HTTP server
// on 127.0.0.1), the form filled and submitted through the frame and the popup, the frame following the
// form's height, the QR code's downloads, and framing refused to sites outside a form's embedOrigins.
// Screenshots: test-output/screenshots/share-tab.png, share-embedded.png, share-popup.png.

let sys: TestSystem;
let browser: Browser;
/** The other site: serves `pages[path]` as HTML. */
let site: Server;
let siteUrl = "";
const pages = new Map<string, string>();

before(async () => {
  ensureAppBuilt(undefined, { quiet: true });
  site = createServer((req, res) => {
    const html = pages.get(req.url ?? "");
    res.writeHead(html ? 200 : 404, { "content-type": "text/html; charset=utf-8" }).end(html ?? "not found");
  });
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  [sys, browser] = await Promise.all([startTestSystem("app_sharing"), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await sys?.stop();
  site?.close();
});

const formDocument = {
  title: "Workshop sign-up",
  blocks: [
    { id: "name", key: "name", type: "SHORT_TEXT", question: "Your name", required: true },
    { id: "topic", key: "topic", type: "LONG_TEXT", question: "What would you like to learn?" },
  ],
  hiddenFields: [{ name: "source" }, { name: "campaign" }],
};

/** A page of the other site with an embed code in it. */
const sitePage = (snippet: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Our site</title></head><body style="font-family:sans-serif;margin:2rem"><h1>Our workshops</h1>\n${snippet}\n<p id="below">Questions? Write to us.</p></body></html>`;

/** The CSP directives of a response, by name. */
function directives(headers: Headers): Map<string, string[]> {
  return new Map(
    (headers.get("content-security-policy") ?? "")
      .split(";")
      .filter((d) => d.trim())
      .map((d) => {
        const [name, ...sources] = d.trim().split(/\s+/);
        return [name, sources];
      }),
  );
}

describe("sharing: link, embeds, QR code, framing", () => {
  let owner: ReturnType<typeof appClient>;
  let formId: string;
  let context: BrowserContext;
  let share: Page;
  let problems: string[];
  const publicUrl = () => `http://localhost:${sys.env.PORT}`;

  before(async () => {
    owner = appClient(sys.url);
    await owner.call("GET", "/session");
    const signedUp = await owner.call("POST", "/auth/signup", { email: `sharing.${Date.now()}@example.com`, name: "Sharer", password: "correct horse battery" });
    assert.equal(signedUp.status, 201, JSON.stringify(signedUp.body));
    const workspace = (await owner.call("GET", "/workspaces")).body.items[0];
    const created = await owner.call("POST", "/forms", { workspaceId: workspace.id, name: "Workshop sign-up", document: formDocument });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    formId = created.body.id;
    assert.equal((await owner.call("POST", `/forms/${formId}/publish`, {})).status, 200);

    context = await signedInContext(browser, sys.url, owner.cookies, { acceptDownloads: true });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: sys.url });
    share = await context.newPage();
    problems = watchPage(share, []);
    await share.goto(`${sys.url}/app/forms/${formId}/share`);
    await share.getByRole("heading", { name: "Link", exact: true }).waitFor();
  });
  after(async () => {
    await context?.close();
  });

  it("copies the public link, at PUBLIC_URL, and prefills hidden fields into the link and the embed codes", async () => {
    const formUrl = `${publicUrl()}/f/${formId}`;
    assert.equal(await share.getByLabel("Link to the form").inputValue(), formUrl);
    assert.equal(await share.locator(".public-link a").getAttribute("href"), formUrl, "the page's header names the same address");
    await share.getByRole("button", { name: "Copy link" }).click();
    await share.getByRole("button", { name: "Copied" }).waitFor();
    await share.getByRole("status").getByText("Copied the link.").waitFor();
    assert.equal(await share.evaluate(() => navigator.clipboard.readText()), formUrl);

    await share.getByLabel("source", { exact: true }).fill("news letter");
    await share.getByLabel("campaign", { exact: true }).fill("spring&summer");
    const link = `${formUrl}?source=news+letter&campaign=spring%26summer`;
    assert.equal(await share.getByLabel("Link to the form").inputValue(), link);
    const inline = await share.getByLabel("In the page: the frame grows and shrinks with the form").inputValue();
    assert.equal(
      inline,
      `<iframe data-formsvc-embed src="${link.replace(/&/g, "&amp;")}" title="Workshop sign-up" style="width:100%;height:600px;border:0" loading="lazy"></iframe>\n<script src="${publicUrl()}/embed.js" async></script>`,
    );
    await share.getByRole("button", { name: "Copy embed code" }).click();
    assert.equal(await share.evaluate(() => navigator.clipboard.readText()), inline);
    await share.getByRole("img", { name: `QR code of ${link}` }).waitFor();
    await screenshot(share, "share-tab");
    assert.deepEqual(problems, []);
  });

  it("downloads the QR code of the link as SVG and PNG, both showing the encoder's modules", async () => {
    const link = await share.getByLabel("Link to the form").inputValue();
    const code = encodeQr(link);
    const span = code.size + 2 * quietZone;

    const [svgDownload] = await Promise.all([share.waitForEvent("download"), share.getByRole("button", { name: "Download SVG" }).click()]);
    assert.equal(svgDownload.suggestedFilename(), "workshop-sign-up-qr.svg");
    const svg = await readFile((await svgDownload.path())!, "utf8");
    assert.match(svg, new RegExp(`^<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${span} ${span}"`));
    const [pngDownload] = await Promise.all([share.waitForEvent("download"), share.getByRole("button", { name: "Download PNG" }).click()]);
    assert.equal(pngDownload.suggestedFilename(), "workshop-sign-up-qr.png");
    const png = await readFile((await pngDownload.path())!);
    assert.equal(png.subarray(0, 8).toString("hex"), "89504e470d0a1a0a", "a PNG signature");
    assert.equal(png.subarray(12, 16).toString("latin1"), "IHDR");
    assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [span * 10, span * 10], "ten pixels a module, with the quiet zone");

    // Both images, drawn by the browser, read back at each module's centre.
    const modulesOf = (dataUrl: string) =>
      share.evaluate(
        async ({ dataUrl, span }) => {
          const image = new Image();
          image.src = dataUrl;
          await image.decode();
          const canvas = document.createElement("canvas");
          canvas.width = canvas.height = span * 10;
          const context = canvas.getContext("2d")!;
          context.drawImage(image, 0, 0, canvas.width, canvas.height);
          const pixels = context.getImageData(0, 0, canvas.width, canvas.height).data;
          return Array.from({ length: span }, (_, y) => Array.from({ length: span }, (_, x) => pixels[((y * 10 + 5) * canvas.width + x * 10 + 5) * 4] < 128));
        },
        { dataUrl, span },
      );
    const expected = Array.from({ length: span }, (_, y) => Array.from({ length: span }, (_, x) => code.modules[y - quietZone]?.[x - quietZone] ?? false));
    assert.deepEqual(await modulesOf(`data:image/svg+xml;base64,${Buffer.from(svg).toString("base64")}`), expected, "the SVG");
    assert.deepEqual(await modulesOf(`data:image/png;base64,${png.toString("base64")}`), expected, "the PNG");
  });

  it("takes a response through the embed code on another site; the frame follows the form's height", async () => {
    const inline = await share.getByLabel("In the page: the frame grows and shrinks with the form").inputValue();
    pages.set("/inline", sitePage(inline));
    const script = await fetch(`${sys.url}/embed.js`);
    assert.equal(script.status, 200);
    assert.equal(script.headers.get("content-type"), "text/javascript; charset=utf-8");
    assert.equal(script.headers.get("cache-control"), "public, max-age=3600");
    assert.match(await script.text(), /formsvc:height/);
    const visitor = await browser.newContext({ viewport: { width: 900, height: 700 } });
    const page = await visitor.newPage();
    const pageProblems = watchPage(page, []);
    await page.goto(`${siteUrl}/inline`);
    const frameElement = page.locator("iframe[data-formsvc-embed]");
    const form = page.frameLocator("iframe[data-formsvc-embed]");
    await form.getByRole("heading", { name: "Workshop sign-up" }).waitFor();
    // embed.js set the height the page posted: the whole form, no scroll bar of the frame's own.
    await page.waitForFunction(() => document.querySelector<HTMLIFrameElement>("iframe[data-formsvc-embed]")?.dataset.formsvcHeight !== undefined);
    const heightOf = () => frameElement.evaluate((el: HTMLIFrameElement) => ({ outer: el.getBoundingClientRect().height, posted: Number(el.dataset.formsvcHeight) }));
    const first = await heightOf();
    assert.equal(first.outer, first.posted);
    assert.notEqual(first.outer, 600, "not the snippet's initial height");

    // An error message makes the form taller, and the frame with it.
    await form.getByRole("button", { name: "Submit" }).click();
    await form.getByText("This question is required.").first().waitFor();
    await page.waitForFunction((before) => Number(document.querySelector<HTMLIFrameElement>("iframe[data-formsvc-embed]")!.dataset.formsvcHeight) > before, first.posted);
    const withError = await heightOf();
    assert.ok(withError.outer > first.outer, `${withError.outer} > ${first.outer}`);

    await form.getByLabel("Your name").fill("Ada Lovelace");
    await form.getByLabel("What would you like to learn?").fill("Embedding forms");
    // Answered, the error message is gone, and the frame shrinks back.
    await page.waitForFunction((before) => Number(document.querySelector<HTMLIFrameElement>("iframe[data-formsvc-embed]")!.dataset.formsvcHeight) < before, withError.posted);
    const answered = await heightOf();
    assert.equal(answered.outer, answered.posted);
    await screenshot(page, "share-embedded");
    await form.getByRole("button", { name: "Submit" }).click();
    await form.locator("#hf-thanks").waitFor();
    // The thank-you screen is shorter than the form: the frame shrinks to it.
    await page.waitForFunction((before) => Number(document.querySelector<HTMLIFrameElement>("iframe[data-formsvc-embed]")!.dataset.formsvcHeight) < before, answered.posted);
    const thanked = await heightOf();
    assert.equal(thanked.outer, thanked.posted);
    assert.deepEqual(pageProblems, []);
    await visitor.close();

    const stored = await owner.call("GET", `/forms/${formId}/submissions`);
    assert.equal(stored.status, 200, JSON.stringify(stored.body));
    assert.equal(stored.body.items.length, 1);
    const [response] = stored.body.items;
    const hidden = Object.values(response.answers as Record<string, { type: string; value: unknown }>)
      .filter((answer) => answer.type === "HIDDEN_FIELDS")
      .map((answer) => answer.value)
      .sort();
    assert.deepEqual(hidden, ["news letter", "spring&summer"], `the prefilled values came along: ${JSON.stringify(response.answers)}`);
    assert.ok(JSON.stringify(response).includes("Ada Lovelace"), JSON.stringify(response));
  });

  it("opens the form over the page from the popup button, and takes a response there", async () => {
    const popup = await share.getByLabel("As a button that opens the form over the page").inputValue();
    assert.match(popup, /^<button type="button" data-formsvc-popup="[^"]+">Workshop sign-up<\/button>\n<script src="[^"]+\/embed\.js" async><\/script>$/);
    pages.set("/popup", sitePage(popup));
    const visitor = await browser.newContext({ viewport: { width: 900, height: 700 } });
    const page = await visitor.newPage();
    await page.goto(`${siteUrl}/popup`);
    await page.getByRole("button", { name: "Workshop sign-up" }).click();
    const dialog = page.getByRole("dialog", { name: "Workshop sign-up" });
    await dialog.waitFor();
    const form = page.frameLocator("dialog iframe");
    // The frame's script has run (it marks the page in the same task that wires the form).
    await form.locator("html.hf-js").waitFor();
    await form.getByLabel("Your name").fill("Grace Hopper");
    await screenshot(page, "share-popup");
    await form.getByRole("button", { name: "Submit" }).click();
    await form.locator("#hf-thanks").waitFor();
    await dialog.getByRole("button", { name: "Close" }).click();
    await dialog.waitFor({ state: "detached" });
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Workshop sign-up", "focus goes back to the button");
    await visitor.close();
    const stored = await owner.call("GET", `/forms/${formId}/submissions`);
    assert.equal(stored.body.items.length, 2);
  });

  it("takes the whole page to the form's redirect after a response through the frame", async () => {
    pages.set("/welcome", sitePage("<p>You are signed up.</p>"));
    const redirected = await owner.call("PATCH", `/forms/${formId}`, { settings: { redirectUrl: `${siteUrl}/welcome` } });
    assert.equal(redirected.status, 200, JSON.stringify(redirected.body));
    const visitor = await browser.newContext();
    const page = await visitor.newPage();
    await page.goto(`${siteUrl}/inline`);
    // The frame's script has heard from embed.js (the answer to its first height): a click before that
    // would post the form without JavaScript, whose redirect moves the frame, not the page.
    const form = page.frameLocator("iframe[data-formsvc-embed]");
    await form.locator("html[data-formsvc-embedded]").waitFor({ state: "attached" });
    await form.getByLabel("Your name").fill("Katherine Johnson");
    await form.getByRole("button", { name: "Submit" }).click();
    await page.waitForURL(`${siteUrl}/welcome`);
    await page.getByText("You are signed up.").waitFor();
    await visitor.close();

    // A plain frame, without embed.js around it: the frame goes there itself, the page stays.
    pages.set("/plain", sitePage(`<iframe src="${publicUrl()}/f/${formId}" title="Workshop sign-up" style="width:100%;height:600px;border:0"></iframe>`));
    const plainVisitor = await browser.newContext();
    const plainPage = await plainVisitor.newPage();
    await plainPage.goto(`${siteUrl}/plain`);
    const plainFrame = plainPage.frameLocator("iframe");
    await plainFrame.locator("html.hf-js").waitFor({ state: "attached" });
    await plainFrame.getByLabel("Your name").fill("Dorothy Vaughan");
    await plainFrame.getByRole("button", { name: "Submit" }).click();
    await plainFrame.getByText("You are signed up.").waitFor();
    assert.equal(plainPage.url(), `${siteUrl}/plain`);
    await plainVisitor.close();

    assert.equal((await owner.call("PATCH", `/forms/${formId}`, { settings: { redirectUrl: null } })).status, 200);
    assert.equal((await owner.call("GET", `/forms/${formId}/submissions`)).body.items.length, 4);
  });

  it("lets only the sites of a form's embedOrigins frame it, and never frames the app", async () => {
    const formUrl = `${publicUrl()}/f/${formId}`;
    const open = await fetch(`${sys.url}/f/${formId}`);
    assert.equal(directives(open.headers).has("frame-ancestors"), false, "any site by default");
    assert.equal(open.headers.get("x-frame-options"), null);
    for (const path of [`/app/forms/${formId}/share`, "/app/forms"]) {
      const app = await fetch(`${sys.url}${path}`);
      assert.deepEqual(directives(app.headers).get("frame-ancestors"), ["'none'"], path);
      assert.equal(app.headers.get("x-frame-options"), "DENY", path);
    }

    // Restricted in the Share tab to a site that is not the one embedding it.
    await share.getByRole("radio", { name: "Only these sites" }).check();
    await share.getByLabel("Allowed sites, one a line").fill("https://shop.example.com/\n");
    await share.getByRole("button", { name: "Save embedding" }).click();
    await share.getByText("Embedding settings saved.").waitFor();
    assert.deepEqual((await owner.call("GET", `/forms/${formId}`)).body.settings.embedOrigins, ["https://shop.example.com"]);
    const restricted = await fetch(`${sys.url}/f/${formId}`);
    assert.deepEqual(directives(restricted.headers).get("frame-ancestors"), ["https://shop.example.com"]);

    const visitor = await browser.newContext();
    const page = await visitor.newPage();
    const blocked = page.waitForEvent("requestfailed", (request) => request.url().startsWith(formUrl));
    const reported = page.waitForEvent("console", (msg) => msg.type() === "error" && msg.text().includes("frame-ancestors"));
    await page.goto(`${siteUrl}/inline`);
    assert.equal((await blocked).failure()?.errorText, "net::ERR_BLOCKED_BY_RESPONSE", "the browser refused to frame it");
    assert.match((await reported).text(), /violates the following Content Security Policy directive: "frame-ancestors https:\/\/shop\.example\.com"/);
    const frame = page.frames().find((f) => f !== page.mainFrame());
    assert.ok(frame);
    assert.equal(await frame.locator("#hf-form").count(), 0, "the form is not shown in the frame");

    // The embedding site added to the list: framed again.
    assert.equal((await owner.call("PATCH", `/forms/${formId}`, { settings: { embedOrigins: ["https://shop.example.com", siteUrl] } })).status, 200);
    await page.goto(`${siteUrl}/inline`);
    await page.frameLocator("iframe[data-formsvc-embed]").getByRole("heading", { name: "Workshop sign-up" }).waitFor();
    await visitor.close();

    const invalid = await owner.call("PATCH", `/forms/${formId}`, { settings: { embedOrigins: ["https://shop.example.com/path"] } });
    assert.equal(invalid.status, 400);
    assert.match(invalid.body.error, /^body\.settings\.embedOrigins\[0\]: must be an origin/);
    assert.equal(new URL(formUrl).host, `localhost:${sys.env.PORT}`);
  });
});
