import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseSetCookie } from "cookie";
import { cookieNames, cookiePathsFor, expiredCookie, parseCookies, repeatedCookies, serializeCookie } from "./cookies.ts";
import { cookiePolicy } from "./security.ts";

describe("app cookies", () => {
  it("are named with the __Host- prefix when PUBLIC_URL is https, plainly on http", () => {
    assert.deepEqual(cookiePolicy("https://forms.example.com").names, { session: "__Host-formsvc_session", csrf: "__Host-formsvc_csrf" });
    assert.deepEqual(cookiePolicy("http://localhost:8080").names, { session: "formsvc_session", csrf: "formsvc_csrf" });
    assert.equal(cookiePolicy("https://forms.example.com").secure, true);
    assert.equal(cookiePolicy("http://localhost:8080").secure, false);
  });

  it("a __Host- cookie is written as the prefix needs: Secure, Path=/, no Domain", () => {
    const { session, csrf } = cookieNames(true);
    const expires = new Date("2030-01-02T03:04:05Z");
    const written = serializeCookie(session, "tok_en-1", { httpOnly: true, secure: true, expires });
    assert.equal(written, "__Host-formsvc_session=tok_en-1; Path=/; Expires=Wed, 02 Jan 2030 03:04:05 GMT; HttpOnly; Secure; SameSite=Lax");
    const read = parseSetCookie(serializeCookie(csrf, "abc", { httpOnly: false, secure: true }));
    assert.deepEqual(
      { name: read.name, path: read.path, secure: read.secure, domain: read.domain, httpOnly: read.httpOnly, sameSite: read.sameSite },
      { name: "__Host-formsvc_csrf", path: "/", secure: true, domain: undefined, httpOnly: undefined, sameSite: "lax" },
    );
    assert.equal(read.expires, undefined, "the CSRF cookie lasts the browser session");
  });

  it("values are encoded and decoded round trip", () => {
    const written = serializeCookie("formsvc_csrf", "a b;c%", { httpOnly: false, secure: false });
    assert.match(written, /^formsvc_csrf=a%20b%3Bc%25; Path=\//);
    assert.equal(parseCookies(written.split("; Path=")[0])["formsvc_csrf"], "a b;c%");
    assert.deepEqual(Object.keys(parseCookies(undefined)), []);
    assert.equal(parseCookies("x=%E0%A4%A")["x"], "%E0%A4%A", "an undecodable value is kept as sent");
  });

  it("an expired cookie deletes the name on the given path", () => {
    const cleared = parseSetCookie(expiredCookie("formsvc_session", { httpOnly: true, secure: false, path: "/app" }));
    assert.equal(cleared.name, "formsvc_session");
    assert.equal(cleared.value, "");
    assert.equal(cleared.maxAge, 0);
    assert.equal(cleared.expires?.getTime(), 0);
    assert.equal(cleared.path, "/app");
    assert.equal(parseSetCookie(expiredCookie("formsvc_csrf", { httpOnly: false, secure: true })).path, "/");
  });

  it("finds a name sent twice, however it is spaced, and only among the names asked about", () => {
    const names = ["formsvc_session", "formsvc_csrf"];
    assert.deepEqual(repeatedCookies("formsvc_session=attacker; formsvc_csrf=x; formsvc_session=victim", names), ["formsvc_session"]);
    assert.deepEqual(repeatedCookies("formsvc_csrf=a;formsvc_csrf =b", names), ["formsvc_csrf"]);
    assert.deepEqual(repeatedCookies("formsvc_session=a; formsvc_session=b; formsvc_csrf=c; formsvc_csrf=d", names), names);
    assert.deepEqual(repeatedCookies("formsvc_session=a; other=1; other=2; formsvc_session_x=b", names), []);
    assert.deepEqual(repeatedCookies("formsvc_session=a; formsvc_session", names), [], "a pair without = is no cookie");
    assert.deepEqual(repeatedCookies(undefined, names), []);
    // The parser keeps the first, which is why repeats are refused rather than read.
    assert.equal(parseCookies("formsvc_session=attacker; formsvc_session=victim")["formsvc_session"], "attacker");
  });

  it("the paths to clear cover /, the app's own, and every leading part of the request's path", () => {
    assert.deepEqual(cookiePathsFor("/app/api/forms/abc?x=1"), [
      "/",
      "/app",
      "/app/",
      "/app/api",
      "/app/api/",
      "/app/api/forms",
      "/app/api/forms/",
      "/app/api/forms/abc",
      "/app/api/forms/abc/",
    ]);
    assert.deepEqual(cookiePathsFor("/app/api/session"), ["/", "/app", "/app/", "/app/api", "/app/api/", "/app/api/session", "/app/api/session/"]);
  });
});
