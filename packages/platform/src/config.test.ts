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

describe("OIDC_*", () => {
  const keycloak = { OIDC_ISSUER: "https://sso.example.com/realms/staff", OIDC_CLIENT_ID: "formsvc", OIDC_CLIENT_SECRET: "s3cret" };

  it("is off without OIDC_ISSUER; with it, the client, the button's name (a default when unset) and OIDC_ONLY", () => {
    assert.equal(loadConfig({}).oidc, undefined);
    assert.deepEqual(loadConfig({ ...keycloak, OIDC_NAME: "Keycloak" }).oidc, {
      issuer: "https://sso.example.com/realms/staff",
      clientId: "formsvc",
      clientSecret: "s3cret",
      name: "Keycloak",
      only: false,
    });
    assert.equal(loadConfig({ ...keycloak, OIDC_ONLY: "true" }).oidc?.only, true);
    assert.equal(loadConfig(keycloak).oidc?.name, "single sign-on");
    assert.equal(loadConfig({ ...keycloak, OIDC_CLIENT_SECRET: "" }).oidc?.clientSecret, undefined);
  });

  it("takes an https issuer, or http on this machine only; a client id; and OIDC_ONLY only with an issuer", () => {
    assert.equal(loadConfig({ ...keycloak, OIDC_ISSUER: "http://127.0.0.1:9000" }).oidc?.issuer, "http://127.0.0.1:9000");
    assert.equal(loadConfig({ ...keycloak, OIDC_ISSUER: "http://localhost:9000/realms/dev" }).oidc?.issuer, "http://localhost:9000/realms/dev");
    assert.throws(() => loadConfig({ ...keycloak, OIDC_ISSUER: "http://sso.example.com" }), /OIDC_ISSUER must be an https URL \(http only on localhost or 127.0.0.1\)/);
    assert.throws(() => loadConfig({ ...keycloak, OIDC_ISSUER: "sso.example.com" }), ConfigError);
    assert.throws(() => loadConfig({ ...keycloak, OIDC_CLIENT_ID: "" }), /OIDC_CLIENT_ID is required with OIDC_ISSUER/);
    assert.throws(() => loadConfig({ OIDC_ONLY: "true" }), /OIDC_ONLY=true needs OIDC_ISSUER/);
  });
});

describe("WEBHOOK_ALLOWED_CIDRS", () => {
  it("is none unless set, and a ConfigError naming a bad entry", () => {
    assert.deepEqual(loadConfig({}).webhookAllowedCidrs, []);
    assert.equal(loadConfig({ WEBHOOK_ALLOWED_CIDRS: "127.0.0.0/24,::1/128" }).webhookAllowedCidrs.length, 2);
    assert.throws(() => loadConfig({ WEBHOOK_ALLOWED_CIDRS: "loopback" }), (err: unknown) => err instanceof ConfigError && /^WEBHOOK_ALLOWED_CIDRS: "loopback" is not a CIDR range/.test(err.message));
  });
});
