import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from "playwright-core";
import type { Cookies } from "./app-client.ts";
import { repoRoot } from "@formsvc/launcher/system.ts";

/** Debian's Chromium (apt install chromium); CHROMIUM_PATH overrides. Never a downloaded browser. */
export const chromiumPath = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

export const screenshotDir = join(repoRoot, "test-output", "screenshots");

/** A headless Chromium for tests: no sandbox (containers), no GPU, nothing fetched in the background. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** Saves a screenshot (of the full page unless `fullPage: false`) as test-output/screenshots/<name>.png; returns its path. */
export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<string> {
  mkdirSync(screenshotDir, { recursive: true });
  const path = join(screenshotDir, `${name.replace(/[^\w.-]+/g, "-")}.png`);
  await page.screenshot({ path, fullPage: options.fullPage ?? true });
  return path;
}

/** Draws a zigzag on the form page's signature pad; `steps` mouse moves per stroke. */
export async function drawSignature(page: Page, steps = 4): Promise<void> {
  const pad = page.locator("canvas.hf-pad");
  await pad.scrollIntoViewIfNeeded();
  const box = (await pad.boundingBox())!;
  await page.mouse.move(box.x + box.width * 0.1, box.y + box.height * 0.6);
  await page.mouse.down();
  for (let i = 1; i <= 8; i++) {
    await page.mouse.move(box.x + box.width * (0.1 + i * 0.1), box.y + box.height * (i % 2 ? 0.3 : 0.7), { steps });
  }
  await page.mouse.up();
}

/**
 * The script errors and failed requests a page logs, collected for a test to assert empty; a request
 * failing with one of `expectedStatuses` (e.g. the first session check's 401) is not a problem.
 */
export function watchPage(page: Page, expectedStatuses: number[]): string[] {
  const problems: string[] = [];
  page.on("pageerror", (err) => problems.push(`pageerror: ${err.message}`));
  page.on("console", (msg) => {
    const status = /status of (\d{3})/.exec(msg.text())?.[1];
    if (msg.type() === "error" && !(status && expectedStatuses.includes(Number(status)))) problems.push(`console: ${msg.text()}`);
  });
  return problems;
}

/** Opens the app's account menu (API keys, Security, Administration, the theme and both ways to sign out). */
export async function openAccountMenu(page: Page): Promise<void> {
  const button = page.locator("header .account-button");
  if ((await button.getAttribute("aria-expanded")) !== "true") await button.click();
}

/** The editor's block at `index`. */
export const editorBlock = (page: Page, index: number) => page.locator(`[data-block-index="${index}"]`);

/** Waits until the editor says every change is stored (its autosave ran, or nothing was changed). */
export const editorSaved = (page: Page) => page.locator('.save-status[data-state="saved"]').waitFor();

/** The app's API from inside the page, as the app calls it (session cookie, CSRF header on changes). */
export function pageApi(page: Page) {
  return (method: string, path: string, body?: unknown) =>
    page.evaluate(
      async ({ method, path, body }) => {
        const csrf = /(?:^|; )formsvc_csrf=([^;]*)/.exec(document.cookie)?.[1];
        const res = await fetch(`/app/api${path}`, {
          method,
          headers: { "content-type": "application/json", ...(csrf ? { "x-csrf-token": decodeURIComponent(csrf) } : {}) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await res.text();
        return { status: res.status, body: text ? JSON.parse(text) : undefined };
      },
      { method, path, body },
    );
}

/** A browser context signed in as the person whose app cookies are `cookies` (their session and CSRF token). */
export async function signedInContext(browser: Browser, baseUrl: string, cookies: Cookies, options: BrowserContextOptions = {}): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, ...options });
  const host = new URL(baseUrl).hostname;
  await context.addCookies(["formsvc_session", "formsvc_csrf"].map((name) => ({ name, value: cookies.get(name)!, domain: host, path: "/" })));
  return context;
}
