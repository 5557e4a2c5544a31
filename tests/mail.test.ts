import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { appClient } from "./support/app-client.ts";
import { linkToken, startSmtpSink, type SmtpSink } from "./support/smtp.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";

// The system mails through a real SMTP server on loopback: verification at sign-up and password reset,
// each link working once; the answers never tell which emails have accounts.

let sys: TestSystem;
let smtp: SmtpSink;

before(async () => {
  smtp = await startSmtpSink();
  sys = await startTestSystem("mail", { SMTP_URL: smtp.url, MAIL_FROM: "Forms <forms@example.com>", PUBLIC_URL: "http://forms.example.com" });
});
after(async () => {
  await sys?.stop();
  await smtp?.close();
});

const unique = (local: string) => `${local}.${Date.now()}.${Math.random().toString(36).slice(2, 8)}@example.com`;

describe("mail over SMTP", () => {
  it("sign-up mails a verification link (text and HTML) that confirms the address once", async () => {
    const email = unique("vera");
    const browser = appClient(sys.url);
    await browser.call("GET", "/session");
    const signedUp = await browser.call("POST", "/auth/signup", { email, name: "Vera", password: "a verified sort of person" });
    assert.equal(signedUp.status, 201, JSON.stringify(signedUp.body));
    assert.equal((await browser.call("GET", "/session")).body.user.emailVerified, false);

    const mail = await smtp.waitFor((m) => m.to.includes(email));
    assert.equal(mail.subject, "Confirm your email address");
    assert.equal(mail.from, "forms@example.com");
    assert.match(mail.text, /Welcome to formsvc, Vera\./);
    const token = linkToken(mail, "/app/verify-email");
    assert.ok(mail.text.includes(`http://forms.example.com/app/verify-email?token=`), "the link is at PUBLIC_URL");
    assert.ok(mail.html.includes(`/app/verify-email?token=${encodeURIComponent(token)}`), "the HTML carries the same link");

    const verified = await browser.call("POST", "/auth/verify-email", { token });
    assert.equal(verified.status, 200, JSON.stringify(verified.body));
    assert.equal(verified.body.user.emailVerified, true);
    assert.equal((await browser.call("GET", "/session")).body.user.emailVerified, true);
    const again = await browser.call("POST", "/auth/verify-email", { token });
    assert.deepEqual([again.status, again.body.error], [400, "this link is not valid: it was used already, has expired or is unknown; ask for a new one"]);
  });

  it("password reset: the same answer for any email, a mailed link that works once and signs out every other session", async () => {
    const email = unique("fred");
    const first = appClient(sys.url);
    await first.call("GET", "/session");
    assert.equal((await first.call("POST", "/auth/signup", { email, password: "the first of my passwords" })).status, 201);

    const stranger = appClient(sys.url);
    await stranger.call("GET", "/session");
    const ghost = unique("ghost");
    const forGhost = await stranger.call("POST", "/auth/password-reset", { email: ghost });
    const forFred = await stranger.call("POST", "/auth/password-reset", { email });
    assert.deepEqual([forGhost.status, forGhost.body], [forFred.status, forFred.body], "an unknown email is answered the same");
    assert.equal(forFred.status, 202);

    const mail = await smtp.waitFor((m) => m.to.includes(email) && m.subject === "Set a new password");
    assert.ok(mail.html.includes("/app/reset-password?token="));
    const token = linkToken(mail, "/app/reset-password");

    const weak = await stranger.call("POST", "/auth/password-reset/complete", { token, password: "password1" });
    assert.equal(weak.status, 400);
    assert.match(weak.body.error, /^password is too easy to guess/);
    const reset = await stranger.call("POST", "/auth/password-reset/complete", { token, password: "the second of my passwords" });
    assert.equal(reset.status, 200, JSON.stringify(reset.body));
    assert.equal(reset.body.user.email, email);
    assert.equal((await stranger.call("GET", "/session")).body.user.email, email, "the reset signs this browser in");
    assert.equal((await first.call("GET", "/session")).body.user, null, "every earlier session ended");

    const twice = await stranger.call("POST", "/auth/password-reset/complete", { token, password: "the third of my passwords" });
    assert.deepEqual([twice.status, twice.body.error], [400, "this link is not valid: it was used already, has expired or is unknown; ask for a new one"]);
    const other = appClient(sys.url);
    await other.call("GET", "/session");
    assert.equal((await other.call("POST", "/auth/signin", { email, password: "the first of my passwords" })).status, 401);
    assert.equal((await other.call("POST", "/auth/signin", { email, password: "the second of my passwords" })).status, 200);

    // Mail went to the known email only, though both were asked for first.
    assert.deepEqual(smtp.mails.filter((m) => m.to.includes(ghost)), []);
  });
});
