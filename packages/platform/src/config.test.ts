import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, loadConfig } from "./config.ts";

describe("BRANDING_URL", () => {
  it("is the app's sign-up page at PUBLIC_URL unless set", () => {
    assert.equal(loadConfig({ PUBLIC_URL: "https://forms.example.com/" }).brandingUrl, "https://forms.example.com/app/signup");
    assert.equal(loadConfig({ PORT: "9000" }).brandingUrl, "http://localhost:9000/app/signup");
    assert.equal(loadConfig({ BRANDING_URL: "https://example.com/about" }).brandingUrl, "https://example.com/about");
  });

  it("must be an http(s) URL", () => {
    assert.throws(() => loadConfig({ BRANDING_URL: "javascript:alert(1)" }), ConfigError);
    assert.throws(() => loadConfig({ BRANDING_URL: "/about" }), /BRANDING_URL must be an http\(s\) URL/);
  });
});

describe("RPC_PROTOCOL", () => {
  it("is the Connect protocol unless grpc is asked for, and nothing else", () => {
    assert.equal(loadConfig({}).rpcProtocol, "connect");
    assert.equal(loadConfig({ RPC_PROTOCOL: "gRPC" }).rpcProtocol, "grpc");
    assert.throws(() => loadConfig({ RPC_PROTOCOL: "grcp" }), /RPC_PROTOCOL must be connect or grpc, got "grcp"/);
  });
});
