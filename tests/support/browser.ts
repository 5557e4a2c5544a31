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
