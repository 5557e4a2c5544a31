import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, describe, it } from "node:test";
import { closedPort, startReceiver, type Receiver } from "../testing/fixtures.ts";
import { parseAllowedCidrs } from "@formsvc/platform/blocked-addresses.ts";
import { maxResponseBytes, postWebhook, userAgent, type WebhookRequest } from "./http-client.ts";

const body = JSON.stringify({ eventId: "evt_http", eventType: "FORM_RESPONSE", data: { x: "ü" } });
const request = (url: string, extra: Partial<WebhookRequest> = {}): WebhookRequest => ({
  url,
  body,
  eventId: "evt_http",
  secret: "",
  headers: {},
  ...extra,
});
const open = { allowPrivateUrls: true };
const receivers: Receiver[] = [];
async function receiver(answer?: Parameters<typeof startReceiver>[0]) {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}
after(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});

describe("http client", () => {
  it("POSTs the exact bytes with JSON content type, user agent, signatures and the webhook's own headers", async () => {
    const r = await receiver();
    const result = await postWebhook(
      request(r.url, { secret: "s3cret", headers: { "X-Tenant": "acme", Authorization: "Bearer abc", "content-type": "text/plain", "X-Service-Signature": "forged" } }),
      open,
    );
    assert.equal(result.statusCode, 200);
    assert.equal(result.responseBody, "ok");
    assert.equal(result.errorKind, undefined);
    assert.ok(result.durationMs >= 0);
    const [got] = r.received;
    assert.equal(got.raw.toString("utf8"), body);
    assert.equal(got.headers["content-type"], "application/json");
    assert.equal(got.headers["user-agent"], userAgent);
    assert.equal(got.headers["x-tenant"], "acme");
    assert.equal(got.headers.authorization, "Bearer abc");
    assert.equal(got.headers["x-service-signature"], createHmac("sha256", "s3cret").update(got.raw).digest("base64"));
    assert.equal(got.headers["webhook-id"], "evt_http");
  });

  it("keeps as many connections to an origin as attempts may be in flight to it, and reuses them", async () => {
    const server = http.createServer((req, res) => req.resume().on("end", () => res.end("ok")));
    let connections = 0;
    server.on("connection", () => connections++);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
      const burst = async () => {
        const results = await Promise.all(Array.from({ length: 16 }, () => postWebhook(request(url), { ...open, keptPerOrigin: 16 })));
        assert.ok(results.every((r) => r.statusCode === 200));
      };
      await burst();
      assert.equal(connections, 16);
      // The next burst finds all 16 kept (with 4 kept, 12 would be opened again).
      await burst();
      assert.equal(connections, 16);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("keeps at most 4 KiB of the answer", async () => {
    const r = await receiver(() => ({ status: 500, body: "x".repeat(100_000) }));
    const result = await postWebhook(request(r.url), open);
    assert.equal(result.statusCode, 500);
    assert.equal(result.responseBody.length, maxResponseBytes);
  });

  it("follows no redirect", async () => {
    const target = await receiver();
    const r = await receiver(() => ({ status: 307, headers: { location: target.url } }));
    const result = await postWebhook(request(r.url), open);
    assert.equal(result.statusCode, 307);
    assert.equal(target.received.length, 0);
  });

  it("gives up after the time limit, whether the answer or its connection is slow", async () => {
    const r = await receiver(() => ({ status: 200, delayMs: 2_000 }));
    const started = Date.now();
    const result = await postWebhook(request(r.url), { ...open, timeoutMs: 300 });
    assert.ok(Date.now() - started < 1_500);
    assert.deepEqual([result.statusCode, result.errorKind, result.error], [0, "timeout", "no complete answer within 0.3 s"]);

    // A server that accepts the connection and never answers anything.
    const silent = http.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", () => resolve()));
    const port = (silent.address() as AddressInfo).port;
    const stuck = await postWebhook(request(`http://127.0.0.1:${port}/`), { ...open, timeoutMs: 200 });
    assert.equal(stuck.errorKind, "timeout");
    silent.closeAllConnections();
    silent.close();
  });

  it("reports a refused connection", async () => {
    const port = await closedPort();
    const result = await postWebhook(request(`http://127.0.0.1:${port}/hook`), open);
    assert.deepEqual([result.statusCode, result.errorKind, result.error], [0, "refused", "connection refused"]);
  });

  it("refuses private targets unless allowed: IP literals and names resolving to them", async () => {
    const r = await receiver();
    const guarded = { allowPrivateUrls: false };
    const literal = await postWebhook(request(r.url), guarded);
    assert.equal(literal.errorKind, "blocked");
    assert.equal(literal.error, "refused: not a public address");
    const named = await postWebhook(request(`http://localhost:${r.port}/hook`), guarded);
    assert.equal(named.errorKind, "blocked");
    assert.equal(named.error, "refused: not a public address", "the resolved address is not shown");
    const v6 = await postWebhook(request(`http://[::ffff:127.0.0.1]:${r.port}/hook`), guarded);
    assert.deepEqual([v6.errorKind, v6.error], ["blocked", "refused: not a public address"]);
    assert.equal(r.received.length, 0, "nothing reached the receiver");
    const allowed = await postWebhook(request(`http://localhost:${r.port}/hook`), open);
    assert.equal(allowed.statusCode, 200);
  });

  it("reaches the ranges of WEBHOOK_ALLOWED_CIDRS, checked at connect time, and no other", async () => {
    const r = await receiver();
    const listed = await postWebhook(request(r.url), { allowPrivateUrls: false, allowedCidrs: parseAllowedCidrs("127.0.0.0/24") });
    assert.equal(listed.statusCode, 200);
    // The name resolves to a listed address, and to ::1 where it does too (listed as well).
    const named = await postWebhook(request(`http://localhost:${r.port}/hook`), { allowPrivateUrls: false, allowedCidrs: parseAllowedCidrs("127.0.0.0/24, ::1/128") });
    assert.equal(named.statusCode, 200);
    const unlisted = await postWebhook(request(r.url), { allowPrivateUrls: false, allowedCidrs: parseAllowedCidrs("127.0.1.0/24") });
    assert.deepEqual([unlisted.errorKind, unlisted.error], ["blocked", "refused: not a public address"]);
    const namedUnlisted = await postWebhook(request(`http://localhost:${r.port}/hook`), { allowPrivateUrls: false, allowedCidrs: parseAllowedCidrs("127.0.1.0/24") });
    assert.equal(namedUnlisted.errorKind, "blocked");
    assert.equal(r.received.length, 2);
  });

  it("reports unusable URLs and headers without sending", async () => {
    assert.equal((await postWebhook(request("ftp://example.com/x"), open)).errorKind, "invalid");
    assert.equal((await postWebhook(request("not a url"), open)).errorKind, "invalid");
    const r = await receiver();
    const bad = await postWebhook(request(r.url, { headers: { "Bad Header": "x" } }), open);
    assert.equal(bad.errorKind, "invalid");
    assert.equal(r.received.length, 0);
  });
});
