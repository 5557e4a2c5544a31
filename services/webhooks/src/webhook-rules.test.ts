import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { reservedWebhookHeaders } from "@formsvc/platform/webhook-headers.ts";
import { parseAllowedCidrs } from "@formsvc/platform/blocked-addresses.ts";
import { generateSecret, isPrivateHost, maskSecret, parseHeaders, parseSecret, parseWebhookUrl, privateUrlMessage } from "./webhook-rules.ts";

function throwsInvalid(fn: () => unknown, message: string | RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ConnectError, `expected a ConnectError, got ${String(err)}`);
    assert.equal(err.code, Code.InvalidArgument);
    if (typeof message === "string") assert.equal(err.rawMessage, message);
    else assert.match(err.rawMessage, message);
    return true;
  });
}

describe("isPrivateHost", () => {
  const hostOf = (url: string) => new URL(url).hostname;

  it("flags literal addresses of private, loopback, link-local and reserved IPv4 ranges", () => {
    for (const ip of [
      "0.0.0.0",
      "10.1.2.3",
      "100.64.0.1",
      "127.0.0.1",
      "127.255.255.254",
      "169.254.169.254",
      "172.16.0.1",
      "172.31.255.255",
      "192.0.0.8",
      "192.168.1.1",
      "198.18.0.1",
      "224.0.0.1",
      "255.255.255.255",
    ]) {
      assert.equal(isPrivateHost(ip), true, ip);
    }
  });

  it("lets public IPv4 addresses and names through", () => {
    for (const host of ["8.8.8.8", "172.32.0.1", "172.15.255.255", "100.128.0.1", "192.169.0.1", "1.1.1.1", "example.com", "hooks.example.org"]) {
      assert.equal(isPrivateHost(host), false, host);
    }
  });

  it("sees through the other spellings of IPv4 the URL parser normalizes", () => {
    for (const url of ["http://2130706433/", "http://0x7f.1/", "http://0177.0.0.1/", "http://127.1/", "http://127.0.0.1./", "http://10.0.0.1.:8080/"]) {
      assert.equal(isPrivateHost(hostOf(url)), true, url);
    }
  });

  it("flags private IPv6 ranges, including IPv4 embedded in mapped, compatible, NAT64 and 6to4 addresses", () => {
    for (const url of [
      "http://[::1]/",
      "http://[::]/",
      "http://[fc00::1]/",
      "http://[fd12:3456::1]/",
      "http://[fe80::1]/",
      "http://[fec0::1]/",
      "http://[ff02::1]/",
      "http://[::ffff:127.0.0.1]/",
      "http://[::ffff:10.0.0.1]/",
      "http://[::127.0.0.1]/",
      "http://[64:ff9b::a9fe:a9fe]/",
      "http://[64:ff9b:1::1]/",
      "http://[2002:c0a8:0101::1]/",
      "http://[100::1]/",
    ]) {
      assert.equal(isPrivateHost(hostOf(url)), true, url);
    }
  });

  it("lets public IPv6 addresses through", () => {
    for (const url of ["http://[2001:4860:4860::8888]/", "http://[::ffff:8.8.8.8]/", "http://[64:ff9b::808:808]/", "http://[2002:0808:0808::1]/"]) {
      assert.equal(isPrivateHost(hostOf(url)), false, url);
    }
  });

  it("flags localhost and its subdomains", () => {
    for (const host of ["localhost", "LOCALHOST", "localhost.", "api.localhost"]) assert.equal(isPrivateHost(host), true, host);
    assert.equal(isPrivateHost("localhost.example.com"), false);
  });
});

describe("WEBHOOK_ALLOWED_CIDRS", () => {
  it("accepts literal addresses of the listed ranges only", () => {
    const allowed = parseAllowedCidrs("127.0.0.0/24");
    assert.equal(parseWebhookUrl("http://127.0.0.1:5678/webhook/n8n", false, allowed), "http://127.0.0.1:5678/webhook/n8n");
    throwsInvalid(() => parseWebhookUrl("http://127.0.1.1/hook", false, allowed), privateUrlMessage);
    throwsInvalid(() => parseWebhookUrl("http://localhost/hook", false, allowed), privateUrlMessage);
  });
});

describe("parseWebhookUrl", () => {
  it("returns valid http and https URLs as given", () => {
    for (const url of ["https://example.com", "http://example.com/hooks?x=1#f", "https://hooks.example.org:8443/a/b", "https://bücher.example/"]) {
      assert.equal(parseWebhookUrl(url, false), url);
    }
  });

  it("refuses what is not an absolute http(s) URL with a host", () => {
    throwsInvalid(() => parseWebhookUrl("", false), "url: is required");
    throwsInvalid(() => parseWebhookUrl("/hooks", false), "url: must be an absolute http or https URL");
    throwsInvalid(() => parseWebhookUrl("example.com/hook", false), "url: must be an absolute http or https URL");
    throwsInvalid(() => parseWebhookUrl("http://", false), "url: must be an absolute http or https URL");
    throwsInvalid(() => parseWebhookUrl("ftp://example.com/", false), "url: must use http or https");
    throwsInvalid(() => parseWebhookUrl("javascript:alert(1)", false), "url: must use http or https");
    throwsInvalid(() => parseWebhookUrl("file:///etc/passwd", false), "url: must use http or https");
    throwsInvalid(() => parseWebhookUrl(" https://example.com", false), "url: must not contain spaces or control characters");
    throwsInvalid(() => parseWebhookUrl("https://example.com/a b", false), "url: must not contain spaces or control characters");
    throwsInvalid(() => parseWebhookUrl("https://example.com/\r\nX: y", false), "url: must not contain spaces or control characters");
  });

  it("takes ports 1 to 65535 only", () => {
    assert.equal(parseWebhookUrl("https://example.com:1/", false), "https://example.com:1/");
    assert.equal(parseWebhookUrl("https://example.com:65535/", false), "https://example.com:65535/");
    throwsInvalid(() => parseWebhookUrl("https://example.com:0/", false), "url: the port must be between 1 and 65535");
    throwsInvalid(() => parseWebhookUrl("https://example.com:000/", false), "url: the port must be between 1 and 65535");
    throwsInvalid(() => parseWebhookUrl("https://example.com:65536/", false), "url: the port must be between 1 and 65535");
    throwsInvalid(() => parseWebhookUrl("http://example.com:99999", false), "url: the port must be between 1 and 65535");
    throwsInvalid(() => parseWebhookUrl("http://example.com:1x/", false), "url: must be an absolute http or https URL");
  });

  it("refuses credentials in the URL", () => {
    throwsInvalid(() => parseWebhookUrl("https://user:pass@example.com/", false), "url: must not contain a username or password");
    throwsInvalid(() => parseWebhookUrl("https://user@example.com/", false), "url: must not contain a username or password");
    throwsInvalid(() => parseWebhookUrl("https://:pass@example.com/", false), "url: must not contain a username or password");
  });

  it("takes at most 2000 characters", () => {
    const base = "https://example.com/";
    const exact = base + "a".repeat(2000 - base.length);
    assert.equal(parseWebhookUrl(exact, false), exact);
    throwsInvalid(() => parseWebhookUrl(exact + "a", false), "url: must be at most 2000 characters");
  });

  it("refuses literal private addresses unless allowed, naming the settings that allow local receivers", () => {
    const message = privateUrlMessage;
    assert.match(message, /^url: must not point to a private, loopback or link-local address; /);
    assert.match(message, /WEBHOOK_ALLOW_PRIVATE_URLS=true/);
    assert.match(message, /npm run dev/);
    assert.match(message, /WEBHOOK_ALLOWED_CIDRS/);
    for (const url of ["http://127.0.0.1:3000/hook", "http://localhost/hook", "http://[::1]/", "http://169.254.169.254/latest/meta-data", "http://2130706433/"]) {
      throwsInvalid(() => parseWebhookUrl(url, false), message);
      assert.equal(parseWebhookUrl(url, true), url);
    }
  });
});

describe("parseSecret", () => {
  it("takes whsec_ secrets only as padded standard base64 of 24 to 64 bytes, which Standard Webhooks libraries decode", () => {
    const good = `whsec_${Buffer.alloc(24, 7).toString("base64")}`;
    assert.equal(parseSecret(good), good);
    const base64url = `whsec_${Buffer.alloc(24, 0xfb).toString("base64url")}`;
    throwsInvalid(() => parseSecret(base64url), /^secret: after whsec_ must come standard base64/);
    throwsInvalid(() => parseSecret(`whsec_${Buffer.alloc(25, 1).toString("base64").replace(/=+$/, "")}`), /missing padding/);
    throwsInvalid(() => parseSecret(`whsec_${Buffer.alloc(8, 1).toString("base64")}`), "secret: a whsec_ secret must decode to 24 to 64 bytes, not 8");
    assert.equal(parseSecret("plain-text-secret"), "plain-text-secret", "other secrets are keys as they are");
  });

  it("generates whsec_ secrets that parse, and masks secrets to their last 4 characters (none of a short one)", () => {
    const secret = generateSecret();
    assert.equal(parseSecret(secret), secret);
    assert.notEqual(generateSecret(), secret);
    assert.equal(maskSecret(secret), `whsec_…${secret.slice(-4)}`);
    assert.equal(maskSecret("a-longer-journey-secret"), "…cret");
    assert.equal(maskSecret("journey-secret"), "…", "a short secret shows no part of itself");
    assert.equal(maskSecret(null), "");
    throwsInvalid(() => parseSecret(maskSecret(secret)), "secret: is a masked secret as reads show it; leave secret out to keep the current one");
  });

  it("stores an empty secret as none and takes at most 256 characters", () => {
    assert.equal(parseSecret(""), null);
    assert.equal(parseSecret("s".repeat(256)), "s".repeat(256));
    throwsInvalid(() => parseSecret("s".repeat(257)), "secret: must be at most 256 characters");
  });
});

describe("parseHeaders", () => {
  it("returns valid headers as given", () => {
    const headers = { Authorization: "Bearer abc", "X-Custom_Header.1": "a\tb", "x-~!#$%&'*+^`|": "" };
    assert.deepEqual(parseHeaders(headers), headers);
    assert.deepEqual(parseHeaders({}), {});
  });

  it("takes at most 20 headers", () => {
    const twenty = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`X-H${i}`, "v"]));
    assert.deepEqual(parseHeaders(twenty), twenty);
    throwsInvalid(() => parseHeaders({ ...twenty, "X-H20": "v" }), "headers: at most 20 headers are allowed");
  });

  it("refuses reserved names whatever their case", () => {
    assert.equal(reservedWebhookHeaders.size, 10);
    for (const name of reservedWebhookHeaders) {
      throwsInvalid(() => parseHeaders({ [name]: "v" }), `headers.${name}: reserved`);
      const upper = name.toUpperCase();
      throwsInvalid(() => parseHeaders({ [upper]: "v" }), `headers.${upper}: reserved`);
    }
    throwsInvalid(() => parseHeaders({ "Content-Type": "text/plain" }), "headers.Content-Type: reserved");
    throwsInvalid(() => parseHeaders({ "X-Service-Signature": "forged" }), "headers.X-Service-Signature: reserved");
  });

  it("refuses names that are not HTTP tokens", () => {
    throwsInvalid(() => parseHeaders({ "": "v" }), "headers: a header name is empty");
    throwsInvalid(() => parseHeaders({ "X Space": "v" }), /^headers\.X Space: the name may only contain/);
    throwsInvalid(() => parseHeaders({ "X:Colon": "v" }), /^headers\.X:Colon: the name may only contain/);
    throwsInvalid(() => parseHeaders({ "X-Bad\r\nInjected": "v" }), /^headers\.X-Bad\\r\\nInjected: the name may only contain/);
    throwsInvalid(() => parseHeaders({ "X-Ümlaut": "v" }), /^headers\.X-Ümlaut: the name may only contain/);
    throwsInvalid(() => parseHeaders({ ["X".repeat(257)]: "v" }), "headers: a header name must be at most 256 characters");
  });

  it("refuses the same name twice in different cases", () => {
    throwsInvalid(() => parseHeaders({ "X-Token": "a", "x-token": "b" }), "headers.x-token: given twice (names are case-insensitive)");
  });

  it("refuses values node:http would not send: line breaks, control characters, characters beyond Latin-1; or over 1000 characters", () => {
    const message = "headers.X-A: the value may only contain printable ASCII or Latin-1 characters and tabs, no line breaks or control characters";
    throwsInvalid(() => parseHeaders({ "X-A": "a\r\nX-Injected: 1" }), message);
    throwsInvalid(() => parseHeaders({ "X-A": "a\nb" }), message);
    throwsInvalid(() => parseHeaders({ "X-A": "a\rb" }), message);
    throwsInvalid(() => parseHeaders({ "X-A": "a\u0000b" }), message);
    throwsInvalid(() => parseHeaders({ "X-A": "a\u007fb" }), message);
    throwsInvalid(() => parseHeaders({ "X-A": "5 \u20ac" }), message);
    throwsInvalid(() => parseHeaders({ "X-A": "\u{1F600}" }), message);
    const latin1 = { "X-A": "caf\u00e9 \u00ff, tab\there ~!" };
    assert.deepEqual(parseHeaders(latin1), latin1);
    assert.deepEqual(parseHeaders({ "X-A": "v".repeat(1000) }), { "X-A": "v".repeat(1000) });
    throwsInvalid(() => parseHeaders({ "X-A": "v".repeat(1001) }), "headers.X-A: the value must be at most 1000 characters");
  });
});
