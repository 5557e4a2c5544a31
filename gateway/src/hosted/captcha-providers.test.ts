import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import type { Request } from "express";
import { defaultSettings, type FormSettings } from "@formsvc/form-document";
import { refusals } from "@formsvc/form-document/response-rules";
import { thirdPartyCaptcha } from "./captcha-providers.ts";

// The third-party captcha check against a verify endpoint of the test's own on loopback: what each answer of
// the provider becomes (the system test drives each provider's happy and failed paths end to end).

let server: Server;
let url: string;
/** What the stand-in answers next: a status and a body. */
let answer: { status: number; body: string } = { status: 200, body: "{}" };

before(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(answer.status, { "content-type": "application/json" }).end(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/siteverify`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const settings: FormSettings = { ...defaultSettings, captcha: { provider: "turnstile", siteKey: "site" } };
const req = { ip: "127.0.0.1" } as Request;

describe("third-party captcha check", () => {
  it("passes a token the provider verifies; refuses one it does not, expired ones as expired", async () => {
    const captcha = thirdPartyCaptcha({ turnstile: url });
    answer = { status: 200, body: JSON.stringify({ success: true }) };
    await captcha.check(settings, "secret", "token", req);
    answer = { status: 200, body: JSON.stringify({ success: false, "error-codes": ["invalid-input-response"] }) };
    await assert.rejects(captcha.check(settings, "secret", "token", req), { status: 403, code: "captchaInvalid", message: refusals.captchaInvalid });
    answer = { status: 200, body: JSON.stringify({ success: false, "error-codes": ["timeout-or-duplicate"] }) };
    await assert.rejects(captcha.check(settings, "secret", "token", req), { status: 403, code: "captchaExpired" });
    await assert.rejects(captcha.check(settings, "secret", undefined, req), { status: 403, code: "captchaMissing" });
    // A form without the setting needs none.
    await captcha.check(defaultSettings, "", undefined, req);
  });

  it("answers 503 captchaUnavailable when the provider fails or cannot be reached, never letting the completion through", async () => {
    answer = { status: 500, body: "oops" };
    await assert.rejects(thirdPartyCaptcha({ turnstile: url }).check(settings, "secret", "token", req), { status: 503, code: "captchaUnavailable" });
    answer = { status: 200, body: "not json" };
    await assert.rejects(thirdPartyCaptcha({ turnstile: url }).check(settings, "secret", "token", req), { status: 503, code: "captchaUnavailable" });
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const gone = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/siteverify`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await assert.rejects(thirdPartyCaptcha({ turnstile: gone }).check(settings, "secret", "token", req), { status: 503, code: "captchaUnavailable" });
  });

  it("reads a plain post's token from the provider's own field", () => {
    const captcha = thirdPartyCaptcha();
    assert.equal(captcha.tokenOfFields(settings, { "cf-turnstile-response": "t1" }), "t1");
    assert.equal(captcha.tokenOfFields({ ...settings, captcha: { provider: "hcaptcha", siteKey: "s" } }, { "h-captcha-response": ["t2", "t3"] }), "t2");
    assert.equal(captcha.tokenOfFields(defaultSettings, { captcha: "t4" }), undefined);
    assert.equal(captcha.widgetHtml(defaultSettings), undefined);
  });
});
