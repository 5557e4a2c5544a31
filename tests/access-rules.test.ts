import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext } from "playwright-core";
import { refusals } from "@formsvc/form-document/response-rules";
import { ensureAppBuilt } from "@formsvc/launcher/app-build.ts";
import { captchaProviderInfo } from "../gateway/src/hosted/captcha-providers.ts";
import { signedUpPerson } from "./support/app-client.ts";
import { launchBrowser, signedInContext, watchPage } from "./support/browser.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { startSmtpSink, type SmtpSink } from "./support/smtp.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";

// The response rules of issue 31 that ask the respondent first, against the whole running system: a form's
// password (JSON, plain posts and Chromium; a pass cookie, tries limited), email verification (the code read
// from the mail a real SMTP server on loopback received), and Cloudflare Turnstile, hCaptcha and reCAPTCHA
// with the owner's keys, verified by the gateway at a stand-in of each provider's verify endpoint on
// 127.0.0.1 (CAPTCHA_<PROVIDER>_VERIFY_URL). In Chromium the provider's widget script is served by a
// stand-in through playwright's route(); the browser reaches nothing but the system.

type Provider = keyof typeof captchaProviderInfo;
const providers = Object.keys(captchaProviderInfo) as Provider[];
const goodToken = "stand-in-pass";
const secretOf = (provider: Provider) => `${provider}-secret-key-9876`;

/** A provider's verify endpoint as its documentation describes it: a form-encoded POST of secret, response and remoteip. */
interface VerifyStandIn {
  url: string;
  requests: Record<string, string>[];
  close(): Promise<void>;
}
async function startVerifyStandIn(provider: Provider): Promise<VerifyStandIn> {
  const requests: Record<string, string>[] = [];
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk: Buffer) => (raw += chunk.toString("utf8")));
    req.on("end", () => {
      const fields = Object.fromEntries(new URLSearchParams(raw));
      requests.push(fields);
      const answer = (status: number, body: object) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
      const shaped =
        req.method === "POST" &&
        req.headers["content-type"] === "application/x-www-form-urlencoded" &&
        Object.keys(fields).every((name) => ["secret", "response", "remoteip"].includes(name)) &&
        fields.remoteip !== undefined;
      if (!shaped) return answer(400, { success: false, "error-codes": ["bad-request"] });
      if (fields.secret !== secretOf(provider)) return answer(200, { success: false, "error-codes": ["invalid-input-secret"] });
      if (!fields.response) return answer(200, { success: false, "error-codes": ["missing-input-response"] });
      answer(200, fields.response === goodToken ? { success: true, hostname: "127.0.0.1" } : { success: false, "error-codes": ["invalid-input-response"] });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/siteverify`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

let sys: TestSystem;
let browser: Browser;
let smtp: SmtpSink;
const standIns = {} as Record<Provider, VerifyStandIn>;

before(async () => {
  ensureAppBuilt(undefined, { quiet: true });
  smtp = await startSmtpSink();
  for (const provider of providers) standIns[provider] = await startVerifyStandIn(provider);
  const verifyUrls = Object.fromEntries(providers.map((provider) => [`CAPTCHA_${provider.toUpperCase()}_VERIFY_URL`, standIns[provider].url]));
  [sys, browser] = await Promise.all([startTestSystem("access-rules", { SMTP_URL: smtp.url, MAIL_FROM: "Forms <forms@example.com>", ...verifyUrls }), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await sys?.stop();
  await smtp?.close();
  for (const standIn of Object.values(standIns)) await standIn.close();
});

const surveyDocument = { title: "Members' survey", blocks: [{ id: "b_name", key: "name", type: "SHORT_TEXT", question: "Your name", required: true }] };
let owner: Awaited<ReturnType<typeof signedUpPerson>>;

async function publishedForm(settings: object): Promise<string> {
  owner ??= await signedUpPerson(sys.url, "access");
  const created = await owner.call("POST", "/forms", { workspaceId: owner.workspace.id, name: "Members' survey", document: surveyDocument });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const patched = await owner.call("PATCH", `/forms/${created.body.id}`, { settings });
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  assert.equal((await owner.call("POST", `/forms/${created.body.id}/publish`, {})).status, 200);
  return created.body.id;
}

/** A request to the hosted form as a browser without script sends it: `cookie` carried, redirects not followed. */
async function hosted(path: string, init: { method?: string; json?: object; form?: Record<string, string>; cookie?: string } = {}) {
  const headers: Record<string, string> = {};
  if (init.cookie) headers.cookie = init.cookie;
  let body: string | undefined;
  if (init.json) [headers["content-type"], body] = ["application/json", JSON.stringify(init.json)];
  if (init.form) [headers["content-type"], body] = ["application/x-www-form-urlencoded", new URLSearchParams(init.form).toString()];
  const res = await fetch(`${sys.url}/f/${path}`, { method: init.method ?? (body ? "POST" : "GET"), headers, body, redirect: "manual" });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  // The cookie a browser would send back: name=value of each Set-Cookie.
  const setCookie = res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  return { status: res.status, text, json, setCookie, headers: res.headers };
}

const htmlText = (text: string) => text.replace(/'/g, "&#39;");

describe("a form's password", () => {
  let formId: string;
  before(async () => {
    formId = await publishedForm({ password: "members only 2026" });
  });

  it("is never answered by the API, only that there is one", async () => {
    const read = await owner.call("GET", `/forms/${formId}`);
    assert.equal(read.body.settings.password, true);
    assert.ok(!JSON.stringify(read.body).includes("members only") && !JSON.stringify(read.body).includes("scrypt"));
  });

  it("is asked before the questions; saves and the definition are refused without its pass (403, passwordRequired)", async () => {
    const page = await hosted(formId);
    assert.equal(page.status, 200);
    assert.ok(page.text.includes('type="password"') && page.text.includes(htmlText(refusals.passwordRequired)));
    assert.ok(!page.text.includes("Your name"), "no question before the password");
    const save = await hosted(`${formId}/responses`, { json: { answers: { name: "Ann" }, completed: true } });
    assert.deepEqual([save.status, save.json], [403, { error: refusals.passwordRequired, code: "passwordRequired" }]);
    assert.equal((await hosted(`${formId}/definition`)).json.code, "passwordRequired");
    const plain = await hosted(formId, { form: { name: "Ann" } });
    assert.equal(plain.status, 403);
  });

  it("JSON: a wrong password is refused (passwordWrong); the right one's pass opens saves and the definition", async () => {
    const wrong = await hosted(`${formId}/password`, { json: { password: "members only 2025" } });
    assert.deepEqual([wrong.status, wrong.json.code], [403, "passwordWrong"]);
    assert.equal(wrong.setCookie, "");
    const right = await hosted(`${formId}/password`, { json: { password: "members only 2026" } });
    assert.deepEqual([right.status, right.json], [200, { passed: true }]);
    const setCookie = right.headers.getSetCookie()[0];
    assert.match(setCookie, new RegExp(`^hf_pass=\\d+\\.[\\w-]+; Max-Age=7200; Path=/f/${formId}; .*HttpOnly; SameSite=Lax`));
    const save = await hosted(`${formId}/responses`, { json: { answers: { name: "Ann" }, completed: true }, cookie: right.setCookie });
    assert.equal(save.status, 200, save.text);
    assert.equal((await hosted(`${formId}/definition`, { cookie: right.setCookie })).status, 200);
    assert.equal((await hosted(`${formId}/responses`, { json: { answers: { name: "Forged" } }, cookie: right.setCookie.replace(/.$/, "x") })).status, 403);
  });

  it("without JavaScript: the password page posts back to the form's link; a changed password voids the passes", async () => {
    // The form's link (its query: hidden fields, a single-use link's token) is kept through the step.
    const wrong = await hosted(`${formId}/password?ref=news`, { form: { password: "nope" } });
    assert.equal(wrong.status, 403);
    assert.ok(wrong.text.includes(refusals.passwordWrong) && wrong.text.includes(`action="/f/${formId}/password?ref=news"`));
    const right = await hosted(`${formId}/password?ref=news`, { form: { password: "members only 2026" } });
    assert.equal(right.status, 303);
    assert.equal(right.headers.get("location"), `/f/${formId}?ref=news`);
    const page = await hosted(`${formId}?ref=news`, { cookie: right.setCookie });
    assert.ok(page.text.includes("Your name") && page.text.includes(`action="/f/${formId}"`));
    const posted = await hosted(formId, { form: { name: "Ben" }, cookie: right.setCookie });
    assert.equal(posted.status, 200, posted.text);

    assert.equal((await owner.call("PATCH", `/forms/${formId}`, { settings: { password: "a new password" } })).status, 200);
    assert.ok((await hosted(formId, { cookie: right.setCookie })).text.includes('type="password"'), "the page asks again at once");
    // Saves see the change once the gateway's few seconds' copy of the form's settings is renewed.
    await eventuallyPasses(
      async () => {
        const stale = await hosted(`${formId}/responses`, { json: { answers: { name: "Ben" } }, cookie: right.setCookie });
        if (stale.json.code !== "passwordRequired") assert.equal(stale.status, 200, stale.text);
        return stale.json.code;
      },
      (code) => code === "passwordRequired",
      30_000,
      100,
    );
  });

  it("limits tries per address and form: the eleventh in a minute is answered 429, even when right", async () => {
    const guarded = await publishedForm({ password: "guarded" });
    for (let i = 0; i < 10; i++) assert.equal((await hosted(`${guarded}/password`, { json: { password: `guess ${i}` } })).status, 403);
    const limited = await hosted(`${guarded}/password`, { json: { password: "guarded" } });
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get("retry-after")) > 0);
  });
});

/** The code of the newest mail to `to`. */
async function mailedCode(to: string, after = 0): Promise<string> {
  const mail = await smtp.waitFor((m) => m.to.includes(to) && m.arrivedAt > after);
  const code = /\b(\d{6})\b/.exec(mail.text)?.[1];
  assert.ok(code, mail.text);
  return code;
}
const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

describe("email verification", () => {
  let formId: string;
  before(async () => {
    formId = await publishedForm({ requireEmailVerification: true });
  });

  it("without JavaScript: the address, the code from the mail (a wrong one refused), then the form; the address is on the response, once", async () => {
    const page = await hosted(formId);
    assert.ok(page.text.includes('type="email"') && page.text.includes(htmlText(refusals.emailRequired)) && !page.text.includes("Your name"));
    assert.equal((await hosted(`${formId}/responses`, { json: { answers: { name: "Cy" }, completed: true } })).json.code, "emailRequired");

    const startedAt = performance.timeOrigin + performance.now();
    const asked = await hosted(`${formId}/email`, { form: { email: "cy@example.com" } });
    assert.equal(asked.status, 200, asked.text);
    assert.ok(asked.text.includes("We have sent a 6-digit code to cy@example.com."));
    const verificationId = /name="verificationId" value="([A-Za-z0-9]+)"/.exec(asked.text)?.[1];
    assert.ok(verificationId);
    const code = await mailedCode("cy@example.com", startedAt);

    const wrong = await hosted(`${formId}/email/confirm`, { form: { verificationId, code: wrongCode(code), email: "cy@example.com" } });
    assert.equal(wrong.status, 403);
    assert.ok(wrong.text.includes(refusals.emailCodeWrong) && wrong.text.includes(verificationId), "the code is asked again");
    const confirmed = await hosted(`${formId}/email/confirm`, { form: { verificationId, code, email: "cy@example.com" } });
    assert.equal(confirmed.status, 303);
    assert.equal(confirmed.headers.get("location"), `/f/${formId}`);
    assert.match(confirmed.setCookie, /^hf_email=/);

    assert.ok((await hosted(formId, { cookie: confirmed.setCookie })).text.includes("Your name"));
    const posted = await hosted(formId, { form: { name: "Cy" }, cookie: confirmed.setCookie });
    assert.equal(posted.status, 200, posted.text);
    const listed = await owner.call("GET", `/forms/${formId}/submissions`);
    const record = listed.body.items.find((s: { answers: { name?: { value: string } } }) => s.answers.name?.value === "Cy");
    assert.equal(record.verifiedEmail, "cy@example.com");
    const again = await hosted(`${formId}/responses`, { json: { answers: { name: "Cy again" }, completed: true }, cookie: confirmed.setCookie });
    assert.deepEqual([again.status, again.json.code], [403, "emailUsed"]);
  });

  it("JSON: a code takes five wrong tries, then none; an address that answered gets no code", async () => {
    const startedAt = performance.timeOrigin + performance.now();
    const started = await hosted(`${formId}/email`, { json: { email: "di@example.com" } });
    assert.equal(started.status, 200, started.text);
    const code = await mailedCode("di@example.com", startedAt);
    const confirm = (c: string) => hosted(`${formId}/email/confirm`, { json: { verificationId: started.json.verificationId, code: c } });
    for (let i = 0; i < 4; i++) assert.equal((await confirm(wrongCode(code))).json.code, "emailCodeWrong");
    assert.equal((await confirm(wrongCode(code))).json.code, "emailCodeAttempts");
    assert.deepEqual([(await confirm(code)).status, (await confirm(code)).json.code], [403, "emailCodeAttempts"]);
    assert.equal((await hosted(`${formId}/email`, { json: { email: "CY@example.com" } })).json.code, "emailUsed");
    assert.equal((await hosted(`${formId}/email`, { json: { email: "nobody" } })).status, 400);
  });
});

describe("third-party captchas", () => {
  const formIds = {} as Record<Provider, string>;
  before(async () => {
    for (const provider of providers) formIds[provider] = await publishedForm({ captcha: { provider, siteKey: `${provider}-site-key`, secret: secretOf(provider) } });
  });

  for (const provider of providers) {
    it(`${provider}: the widget on the page; a missing, failed and successful token against its verify endpoint`, async () => {
      const formId = formIds[provider];
      const read = await owner.call("GET", `/forms/${formId}`);
      assert.deepEqual(read.body.settings.captcha, { provider, siteKey: `${provider}-site-key`, secretHint: "…9876" });
      const page = await hosted(formId);
      const info = captchaProviderInfo[provider];
      assert.ok(page.text.includes(`<script src="${info.script}" async defer></script>`) && page.text.includes(`data-sitekey="${provider}-site-key"`));
      assert.ok(info.csp["script-src"].every((source) => page.headers.get("content-security-policy")!.includes(source)));

      const respond = (captcha?: string) => hosted(`${formId}/responses`, { json: { answers: { name: "Eli" }, completed: true, ...(captcha === undefined ? {} : { captcha }) } });
      const seen = standIns[provider].requests.length;
      assert.deepEqual([(await respond()).status, (await respond()).json.code], [403, "captchaMissing"]);
      assert.equal(standIns[provider].requests.length, seen, "no token, no call");
      const failed = await respond("a-forged-token");
      assert.deepEqual([failed.status, failed.json], [403, { error: refusals.captchaInvalid, code: "captchaInvalid" }]);
      const passed = await respond(goodToken);
      assert.equal(passed.status, 200, passed.text);
      const asked = standIns[provider].requests.slice(seen);
      assert.deepEqual(asked.map((r) => r.response), ["a-forged-token", goodToken]);
      for (const request of asked) {
        assert.equal(request.secret, secretOf(provider));
        assert.match(request.remoteip, /127\.0\.0\.1$/);
      }
      // A plain post carries the widget's own field.
      const plain = await hosted(formId, { form: { name: "Fay", [info.tokenField]: goodToken } });
      assert.equal(plain.status, 200, plain.text);
    });
  }

  it("a page without a third-party captcha loads no provider's script", async () => {
    const page = await hosted(await publishedForm({}));
    for (const info of Object.values(captchaProviderInfo)) assert.ok(!page.text.includes(info.script));
    assert.ok(!page.headers.get("content-security-policy")!.includes("frame-src"));
  });
});

describe("in Chromium", () => {
  /** A context whose pages reach the system only; a provider's widget script is a stand-in that fills its token field. */
  async function isolatedContext(outside: string[]): Promise<BrowserContext> {
    const context = await browser.newContext();
    const scripts = new Set(Object.values(captchaProviderInfo).map((info) => info.script));
    await context.route("**/*", (route) => {
      const url = route.request().url();
      if (url.startsWith(sys.url)) return route.continue();
      if (scripts.has(url)) {
        return route.fulfill({
          contentType: "text/javascript",
          body: `for (const el of document.querySelectorAll("[data-hf-captcha-field]")) {
  const input = document.createElement("input");
  input.type = "hidden";
  input.name = el.dataset.hfCaptchaField;
  input.value = ${JSON.stringify(goodToken)};
  el.append(input);
}`,
        });
      }
      outside.push(url);
      return route.abort();
    });
    return context;
  }

  it("each provider's widget fills its token and the completion passes its verify endpoint", async () => {
    const outside: string[] = [];
    const context = await isolatedContext(outside);
    for (const provider of providers) {
      const formId = await publishedForm({ captcha: { provider, siteKey: `${provider}-site-key`, secret: secretOf(provider) } });
      const page = await context.newPage();
      const problems = watchPage(page, []);
      await page.goto(`${sys.url}/f/${formId}`);
      await page.locator(`input[name="${captchaProviderInfo[provider].tokenField}"]`).waitFor({ state: "attached" });
      await page.getByLabel("Your name").fill(`Gil by ${provider}`);
      await page.getByRole("button", { name: "Submit" }).click();
      await page.getByRole("heading", { name: "Thank you!" }).waitFor();
      assert.deepEqual(problems, [], provider);
      assert.equal(standIns[provider].requests.at(-1)?.response, goodToken);
      await page.close();
    }
    await context.close();
    assert.deepEqual(outside, [], "the browser reached nothing outside the system");
  });

  it("the app's settings set a password, email verification and a provider's captcha, and show neither secret", async () => {
    const formId = await publishedForm({});
    const context = await signedInContext(browser, sys.url, owner.cookies);
    const page = await context.newPage();
    const problems = watchPage(page, []);
    await page.goto(`${sys.url}/app/forms/${formId}/settings`);
    await page.getByLabel("Ask for a password before the questions").check();
    await page.getByLabel("Form password").fill("set in the app");
    await page.getByLabel(/confirm their email address by a mailed code/).check();
    await page.getByLabel("Captcha of a provider, with your keys").selectOption("hcaptcha");
    await page.getByLabel("Site key").fill("10000000-ffff-ffff-ffff-000000000001");
    await page.getByLabel("Secret key").fill("0x0000000000000000000000000000000000004321");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByText("Settings saved.").waitFor();
    assert.equal(await page.getByLabel("Secret key").getAttribute("placeholder"), "Stored (…4321)");
    // Saved again unchanged: the password and the secret stay as they are.
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByText("Settings saved.").last().waitFor();
    await context.close();
    assert.deepEqual(problems, []);
    const { settings } = (await owner.call("GET", `/forms/${formId}`)).body;
    assert.deepEqual([settings.password, settings.requireEmailVerification, settings.captcha], [
      true,
      true,
      { provider: "hcaptcha", siteKey: "10000000-ffff-ffff-ffff-000000000001", secretHint: "…4321" },
    ]);
    assert.equal((await hosted(`${formId}/password`, { json: { password: "set in the app" } })).status, 200);
  });

  it("asks the password, then an address confirmed by the mailed code, then the questions", async () => {
    const formId = await publishedForm({ password: "to the members", requireEmailVerification: true });
    const outside: string[] = [];
    const context = await isolatedContext(outside);
    const page = await context.newPage();
    const problems = watchPage(page, [403]);
    await page.goto(`${sys.url}/f/${formId}`);
    await page.getByLabel("Password").fill("not it");
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByText(refusals.passwordWrong).waitFor();
    await page.getByLabel("Password").fill("to the members");
    await page.getByRole("button", { name: "Continue" }).click();
    const startedAt = performance.timeOrigin + performance.now();
    await page.getByLabel("Your email address").fill("hal@example.com");
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByLabel("Code from the email").fill(await mailedCode("hal@example.com", startedAt));
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByLabel("Your name").fill("Hal");
    await page.getByRole("button", { name: "Submit" }).click();
    await page.getByRole("heading", { name: "Thank you!" }).waitFor();
    await context.close();
    assert.deepEqual(problems, []);
    assert.deepEqual(outside, []);
    const listed = await owner.call("GET", `/forms/${formId}/submissions`);
    assert.deepEqual(listed.body.items.map((s: { verifiedEmail?: string }) => s.verifiedEmail), ["hal@example.com"]);
  });
});
