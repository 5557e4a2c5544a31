import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { ensureAppBuilt } from "@formsvc/launcher/app-build.ts";
import { editorBlock, editorSaved, launchBrowser, pageApi, screenshot, watchPage } from "./support/browser.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";

// The Build tab as a person uses it in Chromium, against the whole running system: blocks reordered by
// dragging with the mouse and with the keyboard (the order saved by the autosave, ids and keys kept), and
// the live preview beside the editor: the document as it is typed as the hosted page, at desktop and phone
// widths, whose answers are kept nowhere. Screenshots: editor-dnd, editor-preview-desktop, editor-preview-phone.

let sys: TestSystem;
let browser: Browser;

before(async () => {
  ensureAppBuilt(undefined, { quiet: true });
  [sys, browser] = await Promise.all([startTestSystem("app_editor"), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await sys?.stop();
});

interface StoredBlock {
  id: string;
  key: string;
  question: string;
}

describe("the editor: drag-and-drop and the live preview, in Chromium", () => {
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let api: ReturnType<typeof pageApi>;
  let formId = "";
  let first: StoredBlock[] = [];

  const stored = async (): Promise<StoredBlock[]> => (await api("GET", `/forms/${formId}`)).body.document.blocks;
  const handle = (index: number) => editorBlock(page, index).getByRole("button", { name: new RegExp(`^Reorder block ${index + 1},`) });
  const announced = (text: string) => page.getByTestId("reorder-announcement").filter({ hasText: text }).waitFor({ state: "attached" });
  const editorQuestions = () => page.locator("[data-block-index]").evaluateAll((items) => items.map((li) => (li.querySelector("[aria-label=Question]") as HTMLTextAreaElement).value));
  const preview = () => page.frameLocator('iframe[title="Live preview of the form"]');
  // The editor saves by itself a second after the last change; it says so once the form is stored.
  const saved = () => editorSaved(page);

  before(async () => {
    context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    page = await context.newPage();
    problems = watchPage(page, [400, 401]);
    api = pageApi(page);
  });
  after(async () => {
    await context?.close();
  });

  it("builds a form of three questions and saves it", async () => {
    await page.goto(`${sys.url}/app/signup`);
    await page.getByLabel("Name").fill("Margaret Hamilton");
    await page.getByLabel("Email").fill(`margaret.${Date.now()}@example.com`);
    await page.getByLabel("Password").fill("apollo-guidance-1969");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.getByRole("heading", { name: "Forms", level: 1 }).waitFor();
    await page.getByRole("button", { name: "New form" }).first().click();
    await page.getByRole("dialog", { name: "New form" }).getByRole("button", { name: /^Blank form/ }).click();
    await page.getByLabel("Form name").waitFor();
    formId = /\/app\/forms\/([^/]+)\/edit/.exec(page.url())![1];
    await page.getByLabel("Form name").fill("Launch party");
    for (const [i, [type, question]] of [
      ["Short text", "Your name"],
      ["Email", "Your email"],
      ["Number", "How many guests?"],
    ].entries()) {
      await page.getByLabel("Block type").selectOption({ label: type });
      await page.getByRole("button", { name: "Add block" }).click();
      await editorBlock(page, i).getByLabel("Question", { exact: true }).fill(question);
    }
    await saved();
    first = await stored();
    assert.deepEqual(
      first.map((b) => [b.key, b.question]),
      [
        ["q_name", "Your name"],
        ["q_email", "Your email"],
        ["q_how_many_guests", "How many guests?"],
      ],
    );
  });

  it("drags the third block to the top with the mouse", async () => {
    const grip = handle(2);
    await grip.scrollIntoViewIfNeeded();
    const from = (await grip.boundingBox())!;
    await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
    await page.mouse.down();
    await announced("Lifted block 3, How many guests?, position 3 of 3");
    // Up past the first block; near the window's top edge the page scrolls up while the button is held.
    const first = await editorBlock(page, 0).boundingBox();
    const target = Math.max(4, first!.y - 40);
    await page.mouse.move(from.x + from.width / 2, target, { steps: 12 });
    await announced("block 3, How many guests?: position 1 of 3");
    assert.equal(await editorBlock(page, 2).getAttribute("class").then((c) => /sortable-lifted/.test(c ?? "")), true, "the dragged block is shown lifted");
    // The window as the person sees it mid-drag (a full-page capture would scroll the page under the pointer).
    await screenshot(page, "editor-dnd", { fullPage: false });
    await page.mouse.up();
    await announced("block 3, How many guests? moved from position 3 to 1 of 3");
    assert.deepEqual(await editorQuestions(), ["How many guests?", "Your name", "Your email"]);
    assert.equal(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.sortableHandle), "0", "focus stays on the moved block's handle");
    // The autosave stores the new order.
    await saved();
    assert.deepEqual((await stored()).map((b) => b.question), ["How many guests?", "Your name", "Your email"]);
  });

  it("moves a block with the keyboard: Space lifts, arrows move, Space drops, Escape cancels", async () => {
    // Escape puts a lifted block back where it was.
    await handle(0).focus();
    await page.keyboard.press("Space");
    assert.equal(await handle(0).getAttribute("aria-pressed"), "true");
    await announced("Lifted block 1, How many guests?, position 1 of 3. Arrow keys move it, Space drops it, Escape cancels.");
    await page.keyboard.press("ArrowDown");
    await announced("block 1, How many guests?: position 2 of 3");
    await page.keyboard.press("Escape");
    await announced("Reordering cancelled. block 1, How many guests? is back at position 1 of 3");
    assert.deepEqual(await editorQuestions(), ["How many guests?", "Your name", "Your email"]);
    assert.equal(await handle(0).getAttribute("aria-pressed"), "false");

    // "Your name" (second) goes last.
    await handle(1).focus();
    await page.keyboard.press("Space");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowDown"); // already last: stays
    await announced("block 2, Your name: position 3 of 3");
    await page.keyboard.press("Space");
    await announced("block 2, Your name moved from position 2 to 3 of 3");
    assert.deepEqual(await editorQuestions(), ["How many guests?", "Your email", "Your name"]);
    assert.equal(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.sortableHandle), "2");
  });

  it("saves the new order; after a reload the editor and the API have it, with every block's id and key kept", async () => {
    await saved();
    await page.reload();
    await editorBlock(page, 2).waitFor();
    assert.deepEqual(await editorQuestions(), ["How many guests?", "Your email", "Your name"]);
    const byQuestion = new Map(first.map((b) => [b.question, b]));
    const after = await stored();
    assert.deepEqual(
      after.map((b) => [b.id, b.key]),
      ["How many guests?", "Your email", "Your name"].map((q) => [byQuestion.get(q)!.id, byQuestion.get(q)!.key]),
    );
  });

  it("shows the document in the live preview as it is typed, and says why it waits on a document it cannot show", async () => {
    const frame = page.locator('iframe[title="Live preview of the form"]');
    await preview().getByText("How many guests?").waitFor();
    assert.equal(await frame.getAttribute("width"), "1024");
    assert.equal(await preview().locator("body").evaluate(() => window.innerWidth), 1024, "the page is laid out at a desktop's width");

    await editorBlock(page, 0).getByLabel("Question", { exact: true }).fill("How many guests will you bring?");
    await preview().getByText("How many guests will you bring?").waitFor();
    await page.getByLabel("Title on the page").fill("Apollo launch party");
    await preview().getByRole("heading", { name: "Apollo launch party" }).waitFor();
    assert.equal(await page.locator(".live-preview").getAttribute("data-state"), "current");
    await screenshot(page, "editor-preview-desktop");

    // An empty question cannot be saved or shown: the preview says so and keeps the last page, the editor
    // says why it does not save, and the stored form keeps the question.
    await editorBlock(page, 1).getByLabel("Question", { exact: true }).fill("");
    await page.locator(".live-preview-status").filter({ hasText: "The preview waits for a form it can show: document.blocks[1].question" }).waitFor();
    assert.equal(await preview().getByText("Your email").count(), 1, "the last page shown stays");
    await page.locator('.save-status[data-state="problems"]').waitFor();
    await page.getByText("Block 2 (Email): the question must not be empty.").waitFor();
    assert.equal((await stored())[1].question, "Your email");
    await editorBlock(page, 1).getByLabel("Question", { exact: true }).fill("Your work email");
    await preview().getByText("Your work email").waitFor();
    await page.locator(".live-preview[data-state=current]").waitFor();

    // Once it can be, the autosave stores what was typed.
    await saved();
    assert.deepEqual(
      (await stored()).map((b) => b.question),
      ["How many guests will you bring?", "Your work email", "Your name"],
    );
  });

  it("shows the page at a phone's width", async () => {
    await page.getByRole("group", { name: "Preview width" }).getByRole("button", { name: "Phone" }).click();
    assert.equal(await page.getByRole("button", { name: "Phone" }).getAttribute("aria-pressed"), "true");
    const frame = page.locator('iframe[title="Live preview of the form"]');
    assert.equal(await frame.getAttribute("width"), "390");
    await page.frameLocator('iframe[title="Live preview of the form"]').locator("body").evaluate(() =>
      new Promise<void>((resolve) => (window.innerWidth === 390 ? resolve() : window.addEventListener("resize", () => resolve(), { once: true }))),
    );
    assert.equal(await preview().locator("body").evaluate(() => window.innerWidth), 390);
    // Narrow enough to show unscaled beside the editor.
    assert.equal(Math.round((await frame.boundingBox())!.width), 390);
    await screenshot(page, "editor-preview-phone");
  });

  it("a response submitted in the preview is thanked and stored nowhere, even for a published form", async () => {
    await saved();
    assert.equal((await api("POST", `/forms/${formId}/publish`)).status, 200);
    await preview().getByText("How many guests will you bring?").waitFor();
    await preview().getByLabel("How many guests will you bring?").fill("3");
    await preview().getByLabel("Your work email").fill("margaret@example.com");
    await preview().getByLabel("Your name").fill("Margaret");
    await preview().getByRole("button", { name: "Submit" }).click();
    await preview().locator("#hf-thanks").waitFor();

    const form = (await api("GET", `/forms/${formId}`)).body;
    assert.equal(form.status, "published");
    assert.equal(form.responseCount, 0);
    const list = await api("GET", `/forms/${formId}/submissions`);
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.items, []);
    assert.deepEqual(problems, []);
  });
});
