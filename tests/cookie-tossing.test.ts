import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { ensureAppBuilt } from "@formsvc/launcher/app-build.ts";
import { launchBrowser } from "./support/browser.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";

// Cookie tossing, in Chromium: cookies are not isolated by port, so a page served from another port of
// the same host (here a tiny server on 127.0.0.1 in the test) can set `formsvc_session` with a longer
// path, which the browser then sends before the victim's own. The gateway must refuse such a request
// (401) and clear the cookies, never serve it as the attacker's account; a normal session keeps working.

let sys: TestSystem;
let browser: Browser;
let attackerSite: Server;
let attackerOrigin = "";
let attacker = { email: "", token: "", csrf: "" };

/** Signs the attacker up over the API, as their own browser would, and keeps their cookies. */
async function signUpAttacker() {
  const first = await fetch(`${sys.url}/app/api/session`);
  const csrf = /formsvc_csrf=([^;]+)/.exec(first.headers.getSetCookie().join("\n"))![1];
  const email = `mallory.${Date.now()}@example.com`;
  const res = await fetch(`${sys.url}/app/api/auth/signup`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie: `formsvc_csrf=${csrf}`, "x-csrf-token": csrf },
    body: JSON.stringify({ email, name: "Mallory", password: "tossed salad at midnight" }),
  });
  assert.equal(res.status, 201);
  const set = res.headers.getSetCookie().join("\n");
  return { email, token: /formsvc_session=([^;]+)/.exec(set)![1], csrf: /formsvc_csrf=([^;]+)/.exec(set)![1] };
}

before(async () => {
  ensureAppBuilt(undefined, { quiet: true });
  [sys, browser] = await Promise.all([startTestSystem("cookie_tossing"), launchBrowser()]);
  attacker = await signUpAttacker();
  // The attacker's page: it plants one of the app's cookies, with the asked path, for the whole host.
  attackerSite = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    // Only the page plants a cookie (not the browser's favicon request).
    if (url.pathname !== "/") return void res.writeHead(404).end();
    const name = url.searchParams.get("name") ?? "formsvc_session";
    const value = name === "formsvc_csrf" ? attacker.csrf : attacker.token;
    res.setHeader("Set-Cookie", `${name}=${value}; Path=${url.searchParams.get("path") ?? "/app"}; SameSite=Lax`);
    res.setHeader("Content-Type", "text/html");
    res.end("<!doctype html><title>Free prizes</title><h1>Free prizes</h1>");
  });
  await new Promise<void>((resolve) => attackerSite.listen(0, "127.0.0.1", resolve));
  attackerOrigin = `http://127.0.0.1:${(attackerSite.address() as AddressInfo).port}`;
});
after(async () => {
  await browser?.close();
  attackerSite?.close();
  await sys?.stop();
});

/** Every /app/api answer the page gets, with its body. */
function apiAnswers(page: Page) {
  const answers: { url: string; status: number; body: string }[] = [];
  page.on("response", async (res) => {
    if (!res.url().includes("/app/api/")) return;
    answers.push({ url: res.url(), status: res.status(), body: await res.text().catch(() => "") });
  });
  return answers;
}

describe("cookie tossing from another port of the same host", () => {
  const variants = [
    { name: "formsvc_session", path: "/app" },
    { name: "formsvc_session", path: "/app/api" },
    { name: "formsvc_csrf", path: "/app" },
  ];
  let n = 0;
  for (const variant of variants) {
    it(`refuses the victim's next request and clears the cookies when another port plants ${variant.name} on Path=${variant.path}`, async () => {
      const context = await browser.newContext();
      const page = await context.newPage();
      const answers = apiAnswers(page);
      const victim = { email: `victim.${Date.now()}.${++n}@example.com`, password: "quiet harbour lanterns 7" };

      // The victim signs up at the app's origin; the session works across a reload.
      await page.goto(`${sys.url}/app/signup`);
      await page.getByLabel("Name").fill("Victoria");
      await page.getByLabel("Email").fill(victim.email);
      await page.getByLabel("Password").fill(victim.password);
      await page.getByRole("button", { name: "Create account" }).click();
      await page.getByRole("heading", { name: "Forms", level: 1 }).waitFor();
      await page.reload();
      await page.getByRole("heading", { name: "Forms", level: 1 }).waitFor();
      assert.equal(await page.locator(".who").textContent(), "Victoria");

      // The victim opens the attacker's page, on another port of the same host.
      await page.goto(`${attackerOrigin}/?name=${variant.name}&path=${encodeURIComponent(variant.path)}`);
      await page.getByRole("heading", { name: "Free prizes" }).waitFor();
      const planted = (await context.cookies(sys.url + variant.path + "/x")).filter((c) => c.name === variant.name);
      assert.equal(planted.length, 2, "the browser now holds two cookies of that name for the app");

      // Back at the app: the session check is refused, the cookies are cleared, the sign-in page says why.
      const refused = page.waitForResponse((res) => res.url().endsWith("/app/api/session"));
      await page.goto(`${sys.url}/app/forms`);
      assert.equal((await refused).status(), 401);
      await page.getByRole("heading", { name: "Sign in" }).waitFor();
      await page.getByText(/You were signed out: .*two session or CSRF cookies/).waitFor();
      const left = (await context.cookies(sys.url + variant.path + "/x")).filter((c) => c.name === "formsvc_session");
      assert.deepEqual(left, [], "no session cookie is left, on any path");
      assert.ok(
        answers.every((a) => !a.body.includes(attacker.email) && !a.body.includes("Mallory")),
        "never served as the attacker's account",
      );

      // Signing in again works, and keeps working.
      await page.getByLabel("Email").fill(victim.email);
      await page.getByLabel("Password").fill(victim.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("heading", { name: "Forms", level: 1 }).waitFor();
      await page.reload();
      await page.getByRole("heading", { name: "Forms", level: 1 }).waitFor();
      assert.equal(await page.locator(".who").textContent(), "Victoria");
      assert.equal(await page.evaluate(async () => (await fetch("/app/api/workspaces")).status), 200);
      await context.close();
    });
  }
});
