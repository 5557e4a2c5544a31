import assert from "node:assert/strict";
import { createHmac, randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { Webhook } from "standardwebhooks";
import { serviceSignature, signatureHeaders, standardWebhookKey, standardWebhookSignature } from "./sign.ts";

const body = JSON.stringify({ eventId: "evt_1", eventType: "FORM_RESPONSE", data: { label: "Ünïcode ✓", n: 1.5 } });

describe("signatures", () => {
  it("X-Service-Signature is base64(HMAC-SHA256(raw body, secret))", () => {
    const expected = createHmac("sha256", "s3cret").update(Buffer.from(body, "utf8")).digest("base64");
    assert.equal(serviceSignature(body, "s3cret"), expected);
    assert.equal(serviceSignature(Buffer.from(body, "utf8"), "s3cret"), expected);
    // Re-serialised JSON is a different string and does not match.
    assert.notEqual(serviceSignature(JSON.stringify(JSON.parse(body), null, 1), "s3cret"), expected);
  });

  it("Standard Webhooks signature verifies with the standardwebhooks library (whsec_ secret)", () => {
    const secret = `whsec_${randomBytes(24).toString("base64")}`;
    const headers = signatureHeaders({ eventId: "evt_1", body, secret });
    assert.equal(headers["webhook-id"], "evt_1");
    assert.match(headers["webhook-timestamp"], /^\d+$/);
    assert.ok(Math.abs(Number(headers["webhook-timestamp"]) - Date.now() / 1000) < 5);
    assert.match(headers["webhook-signature"], /^v1,[A-Za-z0-9+/]+=*$/);
    assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
    // The X-Service-Signature key stays the secret string itself, prefix included.
    assert.equal(headers["X-Service-Signature"], createHmac("sha256", secret).update(body).digest("base64"));
    // A different body or id does not verify.
    assert.throws(() => new Webhook(secret).verify(body.replace("1.5", "2.5"), headers));
    assert.throws(() => new Webhook(secret).verify(body, { ...headers, "webhook-id": "evt_2" }));
  });

  it("a secret of any other form signs with its UTF-8 bytes (verifiable as a raw key)", () => {
    const secret = "plain-secret-ü";
    assert.deepEqual(standardWebhookKey(secret), Buffer.from(secret, "utf8"));
    const headers = signatureHeaders({ eventId: "evt_9", body, secret });
    assert.doesNotThrow(() => new Webhook(Buffer.from(secret, "utf8"), { format: "raw" }).verify(body, headers));
  });

  it("signs id.timestamp.body", () => {
    const key = randomBytes(32);
    const secret = `whsec_${key.toString("base64")}`;
    const expected = createHmac("sha256", key).update(`evt_3.1700000000.${body}`).digest("base64");
    assert.equal(standardWebhookSignature("evt_3", 1700000000, body, secret), `v1,${expected}`);
    assert.equal(new Webhook(secret).sign("evt_3", new Date(1700000000_000), body), `v1,${expected}`);
  });

  it("without a secret: no signature, only webhook-id and webhook-timestamp", () => {
    const headers = signatureHeaders({ eventId: "evt_1", body, secret: "", now: new Date(1700000000_000) });
    assert.deepEqual(headers, { "webhook-id": "evt_1", "webhook-timestamp": "1700000000" });
  });

  it("during a rotation: both signatures in webhook-signature (either secret verifies), X-Service-Signature with the new one", () => {
    const [current, previous, stranger] = [0, 1, 2].map(() => `whsec_${randomBytes(24).toString("base64")}`);
    const headers = signatureHeaders({ eventId: "evt_r", body, secret: current, previousSecret: previous });
    assert.equal(headers["webhook-signature"].split(" ").length, 2);
    assert.doesNotThrow(() => new Webhook(current).verify(body, headers));
    assert.doesNotThrow(() => new Webhook(previous).verify(body, headers));
    assert.throws(() => new Webhook(stranger).verify(body, headers));
    assert.equal(headers["X-Service-Signature"], serviceSignature(body, current));
  });
});
