import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
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

/** Saves a full-page screenshot as test-output/screenshots/<name>.png; returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(screenshotDir, { recursive: true });
  const path = join(screenshotDir, `${name.replace(/[^\w.-]+/g, "-")}.png`);
  await page.screenshot({ path, fullPage: true });
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
