import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { FakeIdentity } from "../../services/identity/src/testing/fake-identity.ts";
import { HttpError } from "./http-errors.ts";
import { idempotentRequests } from "./idempotency.ts";

/** The gateway's idempotent requests over identity's store in memory (its real one is tested in services/identity). */
function fakeIdentity() {
  const identity = new FakeIdentity();
  return { rows: identity.idempotencyRows, requests: idempotentRequests(identity.client, "test-secret") };
}

const claim = (content: unknown) => ({ scope: "key:K1", key: "k-1", content });

describe("idempotentRequests", () => {
  it("runs once: a repeat answers the first answer, marked replayed; the same content in another key order is the same request", async () => {
    const { requests } = fakeIdentity();
    let runs = 0;
    const run = async () => ({ status: 201, body: { id: `F${++runs}`, secret: "whsec_abc" } });
    const first = await requests.run(claim({ a: 1, b: [1, { c: 2, d: 3 }] }), run);
    const repeat = await requests.run(claim({ b: [1, { d: 3, c: 2 }], a: 1 }), run);
    assert.deepEqual(first, { status: 201, body: { id: "F1", secret: "whsec_abc" }, replayed: false });
    assert.deepEqual(repeat, { status: 201, body: { id: "F1", secret: "whsec_abc" }, replayed: true });
    assert.equal(runs, 1);
    const at = (iso: string) => claim({ since: new Date(iso) });
    await requests.run({ ...at("2026-01-01T00:00:00Z"), key: "k-2" }, run);
    await assert.rejects(requests.run({ ...at("2026-01-02T00:00:00Z"), key: "k-2" }, run), (err: HttpError) => err.status === 422, "dates are content");
  });

  it("keeps answers sealed: identity's row holds no readable part of the body", async () => {
    const { requests, rows } = fakeIdentity();
    await requests.run(claim({}), async () => ({ status: 201, body: { secret: "whsec_readable" } }));
    const stored = Buffer.from(rows.get("key:K1|k-1")!.body!).toString("latin1");
    assert.ok(!stored.includes("whsec_readable"));
  });

  it("another request with the key is a 422, a repeat while the first runs a 409, and neither runs", async () => {
    const { requests } = fakeIdentity();
    let release!: () => void;
    const first = requests.run(claim({ a: 1 }), () => new Promise((resolve) => (release = () => resolve({ status: 201, body: {} }))));
    await new Promise((r) => setImmediate(r));
    const never = async () => assert.fail("must not run");
    await assert.rejects(requests.run(claim({ a: 1 }), never), (err: HttpError) => err.status === 409);
    await assert.rejects(requests.run(claim({ a: 2 }), never), (err: HttpError) => err.status === 422);
    release();
    assert.equal((await first).replayed, false);
  });

  it("an error is not kept: the key is let go and a repeat runs again", async () => {
    const { requests, rows } = fakeIdentity();
    await assert.rejects(requests.run(claim({}), async () => Promise.reject(new HttpError(404, "form not found"))), /form not found/);
    assert.equal(rows.size, 0);
    assert.equal((await requests.run(claim({}), async () => ({ status: 201, body: { id: "F1" } }))).replayed, false);
  });
});
