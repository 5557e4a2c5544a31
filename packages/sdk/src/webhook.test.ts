import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Webhook } from "standardwebhooks";
import { signatureHeaders } from "../../../services/delivery/src/sender/sign.ts";
import { verifyWebhook, WebhookVerificationError } from "./webhook.ts";

// Signed by the delivery service's own signer, so the SDK and the sender cannot drift apart.
const body = JSON.stringify({
  eventId: "evt_1",
  eventType: "FORM_RESPONSE",
  createdAt: "2026-11-22T10:00:01.000Z",
  data: { responseId: "r1", formId: "f1", formName: "Sign-up", submittedAt: "2026-11-22T10:00:00.000Z", fields: [] },
});
const now = new Date("2026-11-22T10:00:02.000Z");
const signed = (secret: string, at = now) => signatureHeaders({ eventId: "evt_1", body, secret, now: at });

describe("verifyWebhook", () => {
  for (const secret of ["plain secret with ünïcode", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]) {
    it(`accepts what the sender signs, as a string or bytes, with Node or fetch headers (${secret.slice(0, 6)}…)`, () => {
      const headers = signed(secret);
      assert.equal(verifyWebhook(body, headers, secret, now).eventId, "evt_1");
      assert.equal(verifyWebhook(Buffer.from(body), new Headers(headers), secret, now).data.formName, "Sign-up");
      const lowerCased = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
      assert.equal(verifyWebhook(new TextEncoder().encode(body), lowerCased, secret, now).eventType, "FORM_RESPONSE");
    });
  }

  it("agrees with the standardwebhooks library on a whsec_ secret", () => {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const headers = signed(secret, new Date());
    assert.ok(new Webhook(secret).verify(body, headers));
    assert.equal(verifyWebhook(body, headers, secret).eventId, "evt_1");
  });

  it("refuses a changed body, a wrong secret, a missing signature and a stale or future timestamp", () => {
    const secret = "s3cret";
    const headers = signed(secret);
    const refuses = (run: () => unknown, message: RegExp) => assert.throws(run, (err: unknown) => err instanceof WebhookVerificationError && message.test(err.message));
    refuses(() => verifyWebhook(body.replace("Sign-up", "Sign-in"), headers, secret, now), /X-Service-Signature does not match/);
    refuses(() => verifyWebhook(body, headers, "other", now), /X-Service-Signature does not match/);
    const { "X-Service-Signature": _service, ...withoutService } = headers;
    refuses(() => verifyWebhook(body, withoutService, secret, now), /missing X-Service-Signature/);
    const { "webhook-signature": _standard, ...withoutStandard } = headers;
    refuses(() => verifyWebhook(body, withoutStandard, secret, now), /missing webhook-id/);
    refuses(() => verifyWebhook(body, { ...headers, "webhook-signature": "v1,AAAA" }, secret, now), /webhook-signature does not match/);
    refuses(() => verifyWebhook(body, { ...headers, "webhook-id": "evt_2" }, secret, now), /webhook-signature does not match/);
    refuses(() => verifyWebhook(body, headers, secret, new Date(now.getTime() + 5 * 60_000 + 2_000)), /five minutes/);
    refuses(() => verifyWebhook(body, headers, secret, new Date(now.getTime() - 5 * 60_000 - 2_000)), /five minutes/);
    // Within the tolerance, either way.
    assert.equal(verifyWebhook(body, headers, secret, new Date(now.getTime() + 4 * 60_000)).eventId, "evt_1");
    refuses(() => verifyWebhook(body, headers, "", now), /secret is needed/);
  });
});
