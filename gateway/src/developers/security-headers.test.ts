import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import express from "express";
import { developersRoutes } from "./routes.ts";
import { developersContentSecurityPolicy, inlineScriptHashes } from "./security-headers.ts";

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;

describe("/developers security headers", () => {
  it("hashes each inline script exactly as written, and no script with a src", () => {
    const html = `<script src="/a.js"></script><script>\n  go(1);\n</script><SCRIPT type="module">x()</SCRIPT>`;
    assert.deepEqual(inlineScriptHashes(html), [sha256("\n  go(1);\n"), sha256("x()")]);
    assert.deepEqual(inlineScriptHashes("<p>no scripts</p>"), []);
  });

  it("allows scripts from the origin and the page's own inline ones, never 'unsafe-inline' scripts or framing", () => {
    const policy = developersContentSecurityPolicy("<script>start()</script>");
    const directives = new Map(policy.split("; ").map((d) => [d.split(" ")[0], d.split(" ").slice(1)]));
    assert.deepEqual(directives.get("default-src"), ["'none'"]);
    assert.deepEqual(directives.get("script-src"), ["'self'", sha256("start()")]);
    assert.deepEqual(directives.get("frame-ancestors"), ["'none'"]);
    assert.deepEqual(directives.get("connect-src"), ["'self'"]);
    assert.deepEqual(directives.get("base-uri"), ["'none'"]);
    assert.equal(developersContentSecurityPolicy("<p></p>").includes("script-src 'self';"), true);
  });

  describe("served", () => {
    let server: ReturnType<express.Express["listen"]>;
    let base = "";
    before(async () => {
      const app = express();
      app.use("/developers", developersRoutes({ openapi: "3.1.0", info: { title: "t", version: "1" }, paths: {} }));
      server = app.listen(0, "127.0.0.1");
      await new Promise((resolve) => server.once("listening", resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => server.close());

    it("sends the page with a CSP whose hashes are those of the page's inline scripts, nosniff and DENY", async () => {
      const res = await fetch(`${base}/developers`);
      assert.equal(res.status, 200);
      const html = await res.text();
      const policy = res.headers.get("content-security-policy") ?? "";
      const inline = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
      assert.ok(inline.length > 0, "the page starts Scalar with an inline script");
      for (const body of inline) assert.ok(policy.includes(sha256(body)), "each inline script is allowed by its hash");
      assert.doesNotMatch(policy, /script-src[^;]*'unsafe-inline'/);
      assert.match(policy, /frame-ancestors 'none'/);
      assert.equal(res.headers.get("x-content-type-options"), "nosniff");
      assert.equal(res.headers.get("x-frame-options"), "DENY");
      for (const [, src] of html.matchAll(/<script src="([^"]+)"/g)) {
        assert.ok(src.startsWith("/developers/"), `${src}: from our own origin`);
        const script = await fetch(`${base}${src}`);
        assert.equal(script.status, 200, src);
        assert.equal(script.headers.get("x-content-type-options"), "nosniff");
        await script.arrayBuffer();
      }
    });

    it("sends the same headers with the OpenAPI document", async () => {
      const res = await fetch(`${base}/developers/openapi.json`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("x-content-type-options"), "nosniff");
      assert.match(res.headers.get("content-security-policy") ?? "", /^default-src 'none'/);
      await res.arrayBuffer();
    });
  });
});
