import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { contrastRatio, formatRatio, minContrast, schemePalettes } from "@formsvc/form-document";
import { ensureAppBuilt } from "@formsvc/launcher/app-build.ts";
import { productName } from "@formsvc/platform/product.ts";
import { privateUrlMessage } from "../services/webhooks/src/webhook-rules.ts";
import { signedUpPerson } from "./support/app-client.ts";
import { launchBrowser, screenshot, signedInContext, watchPage } from "./support/browser.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";

// The app's frame and themes in Chromium, against the whole running system (issue 32): the header on one
// row at 1024 and 1280 px with the workspace's name whole and "Sign out everywhere" in the account menu;
// notices that never stay over a table's rows; the refusal of a local webhook naming its settings; the
// app's dark mode (the system's, and a toggle) and the hosted form's dark and automatic themes, each
// colour pair measured for WCAG AA; and screenshots of the main pages at 1280 and 390 px, light and dark
// (test-output/screenshots/screens-*.png).

let sys: TestSystem;
let browser: Browser;
let person: Awaited<ReturnType<typeof signedUpPerson>>;
/** A second workspace with a long name, the one the app shows. */
let team: { id: string; name: string };
let formId = "";

const teamName = "Northwind Research & Analytics";
const blocks = [
  { type: "SHORT_TEXT", question: "Your name", required: true },
  { type: "EMAIL", question: "Your email" },
  { type: "MULTIPLE_CHOICE", question: "Which plan?", options: [{ text: "Free" }, { text: "Pro" }] },
  { type: "RATING", question: "How likely are you to recommend us?" },
  { type: "LONG_TEXT", question: "Anything else?" },
];

before(async () => {
  ensureAppBuilt(undefined, { quiet: true });
  // Without WEBHOOK_ALLOW_PRIVATE_URLS: a local receiver is refused, as on a fresh `npm start`.
  [sys, browser] = await Promise.all([startTestSystem("app_header_themes"), launchBrowser()]);
  // The installation's first account: its administrator, so the header holds every link there is.
  person = await signedUpPerson(sys.url, "Grace");
  const created = await person.call("POST", "/workspaces", { name: teamName });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  team = created.body;
  for (let i = 1; i <= 14; i++) {
    const form = await person.call("POST", "/forms", { workspaceId: team.id, name: `Survey ${i}`, document: { title: `Survey ${i}`, blocks } });
    assert.equal(form.status, 201, JSON.stringify(form.body));
    formId = form.body.id;
  }
  assert.equal((await person.call("POST", `/forms/${formId}/publish`, {})).status, 200);
  for (const name of ["Ada", "Grace", "Katherine"]) {
    const res = await fetch(`${sys.url}/f/${formId}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ answers: {}, completed: false }),
    });
    assert.equal(res.status, 200, `${name}: ${await res.text()}`);
  }
});
after(async () => {
  await browser?.close();
  await sys?.stop();
});

/** A signed-in page showing the team workspace, at `width` px, in the system's `scheme`. */
async function appPage(width: number, scheme: "light" | "dark" = "light"): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await signedInContext(browser, sys.url, person.cookies, { viewport: { width, height: 800 }, colorScheme: scheme });
  await context.addInitScript((id) => window.localStorage.getItem("formsvc:workspace") ?? window.localStorage.setItem("formsvc:workspace", id), team.id);
  const page = await context.newPage();
  return { context, page, problems: watchPage(page, [401]) };
}

type Box = { left: number; right: number; top: number; bottom: number; width: number; height: number };
const boxes = (page: Page, selector: string) =>
  page.locator(selector).evaluateAll((els) => els.map((e) => e.getBoundingClientRect().toJSON() as Box));
const overlaps = (a: Box, b: Box) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;

describe("the app's header", () => {
  for (const width of [1024, 1280]) {
    it(`fits on one row at ${width} px, with the workspace's name whole and the account's actions in a menu`, async () => {
      const { context, page, problems } = await appPage(width);
      try {
        await page.goto(`${sys.url}/app/forms`);
        await page.getByRole("heading", { name: "Forms", level: 1 }).waitFor();
        const header = page.locator("header.topbar");
        const switcher = header.getByLabel("Workspace");
        assert.equal(await switcher.locator("option:checked").textContent(), teamName);
        const nav = await header.getByRole("navigation", { name: "Main" }).getByRole("link").allTextContents();
        assert.deepEqual(nav, ["Forms", "Trash", "Workspaces", "Audit log"], "every link an owner has");

        // One row: every item of the header overlaps every other vertically, and nothing overflows it.
        const items = await boxes(page, "header.topbar .brand, header.topbar nav a, header.topbar select, header.topbar .account-button");
        assert.equal(items.length, 7);
        const row = { top: Math.max(...items.map((b) => b.top)), bottom: Math.min(...items.map((b) => b.bottom)) };
        assert.ok(row.top < row.bottom, `the header's items are on more than one row: ${JSON.stringify(items)}`);
        const [bar] = await boxes(page, "header.topbar");
        assert.ok(bar.height < 2 * Math.max(...items.map((b) => b.height)), `the header is ${bar.height} px tall`);
        assert.ok(items.every((b) => b.left >= 0 && b.right <= width), "every item is inside the window");
        assert.equal(await header.evaluate((el) => el.scrollWidth <= el.clientWidth), true);

        // The name is whole: the select is at least as wide as its text (measured in its own font) and its padding.
        const fit = await switcher.evaluate((select: HTMLSelectElement) => {
          const style = getComputedStyle(select);
          const context = document.createElement("canvas").getContext("2d")!;
          context.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
          const text = context.measureText(select.selectedOptions[0].text).width;
          return { text, room: select.clientWidth - parseFloat(style.paddingLeft) };
        });
        assert.ok(fit.room >= fit.text, `the workspace's name needs ${fit.text} px and has ${fit.room}`);

        // Sign out everywhere is no top-level button: it is in the account menu, with the person's own pages.
        const everywhere = page.getByRole("button", { name: "Sign out everywhere" });
        assert.equal(await everywhere.isVisible(), false);
        const account = header.getByRole("button", { name: "Account: Grace" });
        assert.equal(await account.getAttribute("aria-expanded"), "false");
        await account.click();
        await everywhere.waitFor();
        assert.equal(await account.getAttribute("aria-expanded"), "true");
        for (const link of ["API keys", "Security", "Administration"]) await header.getByRole("link", { name: link, exact: true }).waitFor();
        const [panel] = await boxes(page, ".account-panel");
        assert.ok(panel.left >= 0 && panel.right <= width, "the menu opens inside the window");
        await screenshot(page, `screens-header-${width}`, { fullPage: false });
        await page.keyboard.press("Escape");
        await everywhere.waitFor({ state: "hidden" });
        assert.equal(await account.evaluate((el) => el === document.activeElement), true, "focus goes back to the button");

        // A link of the menu leads there, and the menu closes.
        await account.click();
        await header.getByRole("link", { name: "Security", exact: true }).click();
        await page.getByRole("heading", { name: "Security", level: 1 }).waitFor();
        await everywhere.waitFor({ state: "hidden" });
        assert.deepEqual(problems, []);
      } finally {
        await context.close();
      }
    });
  }
});

describe("notices", () => {
  it("never stay over a table's rows: the page ends below them, so every row can be seen clear", async () => {
    const { context, page, problems } = await appPage(1280);
    try {
      // The page's own clock, so that notices (gone after 4 s) stay while they are measured.
      await page.clock.install();
      await page.goto(`${sys.url}/app/forms`);
      const rows = page.locator("table tbody tr");
      await rows.nth(13).waitFor();
      // Three notices, each a workspace switch, the last back to the team's 14 forms.
      const switcher = page.locator("header.topbar").getByLabel("Workspace");
      const personal = await switcher.locator("option").filter({ hasNotText: teamName }).first().getAttribute("value");
      await page.clock.pauseAt(Date.now() + 60_000);
      for (const id of [personal!, team.id, personal!, team.id]) await switcher.selectOption(id);
      await page.locator(".notice").nth(2).waitFor();
      await rows.nth(13).waitFor();

      await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
      const notices = await boxes(page, ".notice");
      assert.equal(notices.length, 3);
      const rowBoxes = await boxes(page, "table tbody tr");
      for (const row of rowBoxes) for (const n of notices) assert.ok(!overlaps(n, row), `a notice at ${JSON.stringify(n)} covers a row at ${JSON.stringify(row)}`);
      assert.ok(rowBoxes.at(-1)!.bottom <= Math.min(...notices.map((n) => n.top)), "the last row ends above the notices");
      await screenshot(page, "screens-notices-1280", { fullPage: false });

      // A page shorter than the window: the notices sit at its bottom, under the content.
      await page.setViewportSize({ width: 1280, height: 2400 });
      const tall = await boxes(page, ".notice");
      for (const row of await boxes(page, "table tbody tr")) for (const n of tall) assert.ok(!overlaps(n, row));
      assert.ok(Math.max(...tall.map((n) => n.bottom)) > 2400 - 100, "at the bottom of the window");
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
});

describe("a webhook to this machine", () => {
  it("is refused in the app with the settings that allow local receivers", async () => {
    const { context, page, problems } = await appPage(1280);
    try {
      await page.goto(`${sys.url}/app/forms/${formId}/integrations`);
      await page.getByRole("button", { name: "Add webhook" }).click();
      await page.getByLabel("Endpoint URL").fill("http://127.0.0.1:3000/hook");
      await page.getByRole("button", { name: "Add webhook" }).click();
      const refusal = page.getByText("must not point to a private, loopback or link-local address");
      await refusal.waitFor();
      const text = await refusal.innerText();
      assert.ok(text.includes(privateUrlMessage), text);
      assert.match(text, /WEBHOOK_ALLOW_PRIVATE_URLS=true/);
      assert.match(text, /npm run dev/);
      assert.match(text, /WEBHOOK_ALLOWED_CIDRS/);
      await screenshot(page, "screens-webhook-refusal-1280");
      assert.deepEqual(problems.filter((p) => !/status of 400/.test(p)), []);
    } finally {
      await context.close();
    }
  });
});

/** The computed colour (rgb) each CSS colour expression resolves to on the page, as #rrggbb. */
async function resolvedColours(page: Page, expressions: string[]): Promise<string[]> {
  return page.evaluate((list) => {
    const probe = document.createElement("span");
    document.body.append(probe);
    const hex = list.map((expression) => {
      probe.style.color = expression;
      const [r, g, b] = getComputedStyle(probe).color.match(/\d+/g)!.map(Number);
      return `#${[r, g, b].map((c) => c.toString(16).padStart(2, "0")).join("")}`;
    });
    probe.remove();
    return hex;
  }, expressions);
}

/** The app's text colours on the backgrounds they are drawn on. */
const appPairs: [string, string][] = [
  ["--fg", "--bg"],
  ["--fg", "--card"],
  ["--fg", "--subtle"],
  ["--fg", "--field-bg"],
  ["--muted", "--bg"],
  ["--muted", "--card"],
  ["--accent", "--bg"],
  ["--accent", "--card"],
  ["--accent-dark", "--accent-soft"],
  ["--on-accent", "--accent-bg"],
  ["--on-accent", "--danger-bg"],
  ["--danger", "--card"],
  ["--danger-strong", "--danger-soft"],
  ["--ok-strong", "--ok-soft"],
  ["--warn-strong", "--warn-soft"],
  ["--neutral-strong", "--neutral-soft"],
  ["--notice-fg", "--notice-bg"],
];

async function appContrast(page: Page): Promise<string[]> {
  const names = [...new Set(appPairs.flat())];
  const colours = new Map(names.map((name, i) => [name, i]));
  const resolved = await resolvedColours(page, names.map((name) => `var(${name})`));
  return appPairs.flatMap(([fg, bg]) => {
    const ratio = contrastRatio(resolved[colours.get(fg)!], resolved[colours.get(bg)!]);
    return ratio >= minContrast ? [] : [`${fg} on ${bg}: ${formatRatio(ratio)}`];
  });
}

describe("dark mode", () => {
  it("the app follows the system's scheme, every text colour AA on its background, and a toggle in the account menu overrides it", async () => {
    const { context, page, problems } = await appPage(1280, "dark");
    try {
      await page.goto(`${sys.url}/app/forms`);
      await page.getByRole("heading", { name: "Forms", level: 1 }).waitFor();
      const background = () => page.evaluate(() => getComputedStyle(document.body.parentElement!).backgroundColor);
      assert.equal(await background(), "rgb(13, 17, 23)", "dark, as the system");
      assert.deepEqual(await appContrast(page), [], "dark");

      const account = page.getByRole("button", { name: "Account: Grace" });
      await account.click();
      const theme = page.getByRole("group", { name: "Theme" });
      assert.equal(await theme.getByRole("button", { name: "System" }).getAttribute("aria-pressed"), "true");
      await theme.getByRole("button", { name: "Light" }).click();
      assert.equal(await background(), "rgb(246, 247, 249)");
      assert.deepEqual(await appContrast(page), [], "light");
      await page.reload();
      await page.getByRole("heading", { name: "Forms", level: 1 }).waitFor();
      assert.equal(await background(), "rgb(246, 247, 249)", "the choice is kept");
      await account.click();
      await theme.getByRole("button", { name: "System" }).click();
      assert.equal(await background(), "rgb(13, 17, 23)");
      await theme.getByRole("button", { name: "Dark" }).click();
      await page.emulateMedia({ colorScheme: "light" });
      assert.equal(await background(), "rgb(13, 17, 23)", "Dark whatever the system says");
      await theme.getByRole("button", { name: "System" }).click();
      assert.equal(await background(), "rgb(246, 247, 249)");
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  it("the hosted form's dark and automatic themes: the page's colours measured for AA, and a light background refused for a dark page", async () => {
    const refused = await person.call("PATCH", `/forms/${formId}`, { settings: { theme: { colorScheme: "dark" } } });
    assert.equal(refused.status, 400);
    assert.match(refused.body.error, /^body\.settings\.theme\.backgroundColor: the text on the background colour has a contrast of 1\.\d\d:1; at least 4\.5:1 is needed/);

    for (const [colorScheme, system, backgroundColor] of [
      ["dark", "light", "#161b22"],
      ["auto", "dark", "#f6f7f9"],
      ["auto", "light", "#f6f7f9"],
    ] as const) {
      const set = await person.call("PATCH", `/forms/${formId}`, { settings: { theme: { accentColor: "#1f6feb", backgroundColor, colorScheme } } });
      assert.equal(set.status, 200, JSON.stringify(set.body));
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: system });
      try {
        const page = await context.newPage();
        await page.goto(`${sys.url}/f/${formId}`);
        await page.getByRole("button", { name: "Submit" }).waitFor();
        const dark = colorScheme === "dark" || system === "dark";
        const measured = await page.evaluate(() => {
          const colour = (el: Element, property: "color" | "backgroundColor") => getComputedStyle(el)[property];
          const card = document.querySelector(".hf-card")!;
          const label = document.querySelector(".hf-label")!;
          const submit = document.querySelector(".hf-submit")!;
          const input = document.querySelector("input[type=text]")!;
          return {
            page: [colour(document.body, "color"), colour(document.body, "backgroundColor")],
            label: [colour(label, "color"), colour(card, "backgroundColor")],
            field: [colour(input, "color"), colour(input, "backgroundColor")],
            submit: [colour(submit, "color"), colour(submit, "backgroundColor")],
          };
        });
        const hex = (rgb: string) => `#${rgb.match(/\d+/g)!.slice(0, 3).map((c) => Number(c).toString(16).padStart(2, "0")).join("")}`;
        const palette = schemePalettes[dark ? "dark" : "light"];
        assert.equal(hex(measured.label[1]), palette.card, `${colorScheme} on a ${system} system: the ${dark ? "dark" : "light"} card`);
        for (const [what, [fg, bg]] of Object.entries(measured)) {
          const ratio = contrastRatio(hex(fg), hex(bg));
          assert.ok(ratio >= minContrast, `${colorScheme} on a ${system} system: ${what} ${fg} on ${bg} is ${formatRatio(ratio)}`);
        }
        await screenshot(page, `screens-hosted-form-${colorScheme}-on-${system}-1280`);
      } finally {
        await context.close();
      }
    }
  });
});

describe("screenshots", () => {
  const pages: [string, string][] = [
    ["forms", "/app/forms"],
    ["form-edit", `/app/forms/{form}/edit`],
    ["form-responses", `/app/forms/{form}/responses`],
    ["form-integrations", `/app/forms/{form}/integrations`],
    ["form-share", `/app/forms/{form}/share`],
    ["form-design", `/app/forms/{form}/design`],
    ["form-settings", `/app/forms/{form}/settings`],
    ["workspaces", "/app/workspaces"],
    ["api-keys", "/app/settings/api-keys"],
    ["security", "/app/settings/security"],
    ["audit-log", "/app/audit-log"],
    ["administration", "/app/admin"],
  ];
  for (const width of [1280, 390]) {
    for (const scheme of ["light", "dark"] as const) {
      it(`of the main pages at ${width} px, ${scheme}`, async () => {
        const { context, page, problems } = await appPage(width, scheme);
        try {
          for (const [name, path] of pages) {
            await page.goto(`${sys.url}${path.replace("{form}", formId)}`);
            await page.locator("main h1").first().waitFor();
            await page.locator(".state-loading").first().waitFor({ state: "detached" });
            const background = await page.evaluate(() => getComputedStyle(document.body.parentElement!).backgroundColor);
            assert.equal(background, scheme === "dark" ? "rgb(13, 17, 23)" : "rgb(246, 247, 249)", name);
            // The header stays inside the window, wrapped on a phone.
            const header = await boxes(page, "header.topbar .brand, header.topbar nav a, header.topbar select, header.topbar .account-button");
            assert.ok(header.every((b) => b.left >= 0 && b.right <= width), `${name}: the header overflows ${JSON.stringify(header)}`);
            await screenshot(page, `screens-${name}-${width}-${scheme}`);
          }
          const signedOut = await browser.newContext({ viewport: { width, height: 800 }, colorScheme: scheme });
          const signIn = await signedOut.newPage();
          await signIn.goto(`${sys.url}/app/signin`);
          await signIn.getByRole("heading", { name: "Sign in" }).waitFor();
          assert.equal(await signIn.locator(".auth-brand").textContent(), productName, "the name as the README spells it");
          await screenshot(signIn, `screens-signin-${width}-${scheme}`);
          await signedOut.close();
          assert.deepEqual(problems, []);
        } finally {
          await context.close();
        }
      });
    }
  }
});
