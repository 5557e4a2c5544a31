import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fileLinkLifetimeSeconds, fileLinks } from "./file-links.ts";

describe("signed file links", () => {
  const links = fileLinks("secret", "https://forms.example.com");
  const parts = (url: string) => {
    const u = new URL(url);
    return { id: decodeURIComponent(u.pathname.split("/").pop()!), expires: u.searchParams.get("expires")!, signature: u.searchParams.get("signature")! };
  };

  it("signs for seven days and accepts its own links", () => {
    const now = Date.UTC(2026, 10, 22);
    const url = links.sign("file1", now);
    const { id, expires, signature } = parts(url);
    assert.equal(Number(expires), now / 1000 + fileLinkLifetimeSeconds);
    assert.equal(links.check(id, expires, signature, now), "valid");
    assert.equal(links.check(id, expires, signature, now + fileLinkLifetimeSeconds * 1000 - 1000), "valid");
  });

  it("refuses tampered and expired links", () => {
    const now = Date.now();
    const { id, expires, signature } = parts(links.sign("file1", now));
    assert.equal(links.check("file2", expires, signature, now), "tampered");
    assert.equal(links.check(id, String(Number(expires) + 60), signature, now), "tampered");
    assert.equal(links.check(id, expires, signature.slice(1) + "A", now), "tampered");
    assert.equal(links.check(id, undefined, signature, now), "tampered");
    assert.equal(fileLinks("other-secret", "x").check(id, expires, signature, now), "tampered");
    assert.equal(links.check(id, expires, signature, now + (fileLinkLifetimeSeconds + 1) * 1000), "expired");
  });
});
